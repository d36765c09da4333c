/**
 * What kube-apiserver's Service REST storage does around the strategy (pkg/registry/core/service/
 * storage: storage.go beginCreate/beginUpdate, alloc.go; strategy.go PrepareForUpdate), for a
 * single-stack IPv4 cluster with the service range 10.96.0.0/12 and the node ports 30000-32767.
 *
 * ## Expected flow
 * - Create ({@link ServiceAllocation.prepareCreate}, after the scheme's defaults, before validation):
 *   clusterIPs synced with clusterIP; the IP family policy and families filled in, after
 *   ValidateServiceClusterIPsRelatedFields has passed (its errors are a 422 of their own, before any
 *   other validation); a cluster IP allocated or the requested one checked (in range, not held);
 *   node ports allocated for NodePort and LoadBalancer Services (and a health-check node port for a
 *   LoadBalancer with externalTrafficPolicy Local), requested ones checked.
 * - Update ({@link ServiceAllocation.prepareUpdate}, before validation): what the client left out of
 *   what was allocated is kept (a re-applied manifest without clusterIP or nodePort is no change),
 *   clusterIPs synced, families filled in, a cluster IP allocated when an ExternalName Service
 *   becomes another type, new node ports allocated; then the strategy drops what the new type no
 *   longer uses when the client did not change it (cluster IPs, families, node ports, traffic policy,
 *   load-balancer status).
 *
 * ## Guarantees
 * - An address or port is "held" when a stored Service holds it: nothing is reserved apart from the
 *   store, so a failed write leaks nothing and a deleted Service frees its own.
 * - Errors are kube-apiserver's: 422 on `spec.clusterIPs`/`spec.ports[i].nodePort` for a held or
 *   out-of-range request, 500 InternalError for a full range or a held health-check port.
 *
 * ## Caveats
 * - Dynamic allocation is sequential (kube's bitmap allocators pick at random): cluster IPs from
 *   10.96.0.2, node ports from the upper band (30086) as kube prefers it for dynamic ones.
 * - IPv6 and dual-stack are not configured: an IPv6 address or family is refused as on such a cluster.
 * - Changing two ports to the same (protocol, nodePort) on update is refused by validation's duplicate
 *   check, where kube-apiserver's allocation fails first with a 500.
 */
import { ApiError, internalError } from "../machinery/status.ts";
import { goStringSlice, validateServiceClusterIPsRelatedFields } from "../validation/builtin/core-service.ts";
import { type FieldError, invalid, invalidStatus } from "../validation/field-errors.ts";
import { cidrContains, formatIP, isIPv6String, parseCIDRSloppy, parseIPSloppy } from "../validation/ip-address.ts";
import { record } from "./builtin-descriptor.ts";
import { defaultService } from "./scheme-defaults.ts";
import type { JsonObject } from "./served-resource.ts";

/** The `default/kubernetes` Service's address: the first of the range, as kube-apiserver reserves it. */
export const KUBERNETES_SERVICE_IP = "10.96.0.1";

/** kubeadm's default --service-cluster-ip-range. */
const SERVICE_CIDR = "10.96.0.0/12";
const SERVICE_RANGE = parseCIDRSloppy(SERVICE_CIDR)!;
/** The /12's addresses other than the network and broadcast ones. */
const SERVICE_RANGE_SIZE = 2 ** 20 - 2;
/** Dynamic allocation walks 10.96.0.1 - 10.96.255.254: more Services than a devcluster holds. */
const DYNAMIC_IP_COUNT = 0xfffe;

/** The default --service-node-port-range. */
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;
/**
 * portallocator's offset: the ports below base + min(max(16, size/32), 128) are left to static
 * requests, dynamic allocation starting above them (KEP-3668).
 */
const NODE_PORT_DYNAMIC_START =
  NODE_PORT_MIN + Math.min(Math.max(16, Math.floor((NODE_PORT_MAX - NODE_PORT_MIN + 1) / 32)), 128);

type Spec = Record<string, unknown>;

/** What the allocation needs to know about the stored Services. */
export interface ServiceAllocationDeps {
  /** The cluster IPs stored Services hold. */
  ipsInUse: () => Iterable<string>;
  /** The node ports (and health-check node ports) stored Services hold. */
  nodePortsInUse: () => Iterable<number>;
}

/** The allocation hooks of the `services` resource. */
export interface ServiceAllocation {
  prepareCreate(svc: JsonObject): void;
  prepareUpdate(next: JsonObject, old: JsonObject): void;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function int(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(str) : [];
}

function portsOf(spec: Spec): Spec[] {
  const ports = spec["ports"];
  return Array.isArray(ports)
    ? ports.filter((p): p is Spec => p !== null && typeof p === "object" && !Array.isArray(p))
    : [];
}

function nameOf(svc: JsonObject): string {
  return str(record(svc, "metadata")["name"]);
}

function invalidService(svc: JsonObject, errors: FieldError[]): ApiError {
  return new ApiError(invalidStatus("", "Service", nameOf(svc), errors));
}

const needsClusterIP = (spec: Spec) => spec["type"] !== "ExternalName";
const needsNodePort = (spec: Spec) =>
  spec["type"] === "NodePort" || (spec["type"] === "LoadBalancer" && spec["allocateLoadBalancerNodePorts"] !== false);
const needsHealthCheckNodePort = (spec: Spec) =>
  spec["type"] === "LoadBalancer" && spec["externalTrafficPolicy"] === "Local";
const shouldAllocateNodePorts = needsNodePort;
const externallyAccessible = (spec: Spec) =>
  spec["type"] === "LoadBalancer" ||
  spec["type"] === "NodePort" ||
  (spec["type"] === "ClusterIP" && Array.isArray(spec["externalIPs"]) && spec["externalIPs"].length > 0);

function sameList(a: unknown, b: unknown): boolean {
  const la = strings(a);
  const lb = strings(b);
  return la.length === lb.length && la.every((v, i) => v === lb[i]);
}

function nodePortsOf(spec: Spec): number[] {
  return portsOf(spec)
    .map((p) => int(p["nodePort"]))
    .filter((n) => n !== 0);
}

/** The cluster IP range: dynamic addresses in order, requested ones checked. */
function clusterIps(inUse: () => Iterable<string>) {
  let next = 2;
  const ipOf = (n: number) => `10.96.${(n >> 8) & 0xff}.${n & 0xff}`;
  return {
    allocate(): string {
      const taken = new Set(inUse());
      for (let tries = 0; tries < DYNAMIC_IP_COUNT; tries++) {
        const ip = ipOf(next);
        next = next >= DYNAMIC_IP_COUNT ? 1 : next + 1;
        if (!taken.has(ip)) return ip;
      }
      // The REST allocation's errors.NewInternalError around the allocator's ErrFull.
      throw internalError(new Error("failed to allocate a serviceIP: range is full"));
    },
    /** Allocate(ip)'s error, or undefined when the address can be had. */
    refusal(ip: string): string | undefined {
      const parsed = parseIPSloppy(ip);
      if (parsed === undefined) return undefined;
      const offset = ((parsed[12]! << 24) | (parsed[13]! << 16) | (parsed[14]! << 8) | parsed[15]!) >>> 0;
      const base = 0x0a600000;
      if (!cidrContains(SERVICE_RANGE, parsed) || offset - base < 1 || offset - base > SERVICE_RANGE_SIZE) {
        return `the provided IP (${formatIP(parsed)}) is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`;
      }
      for (const held of inUse()) {
        const heldIp = parseIPSloppy(held);
        if (heldIp !== undefined && formatIP(heldIp) === formatIP(parsed)) return "provided IP is already allocated";
      }
      return undefined;
    },
  };
}

/** The node port range, with what one request has taken so far. */
function nodePorts(inUse: () => Iterable<number>) {
  let next = NODE_PORT_DYNAMIC_START;
  return {
    /** One allocation operation: ports it takes count as held for the rest of it. */
    operation() {
      const held = new Set(inUse());
      return {
        allocate(port: number): string | undefined {
          if (port < NODE_PORT_MIN || port > NODE_PORT_MAX)
            return `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_MIN}-${NODE_PORT_MAX}`;
          if (held.has(port)) return "provided port is already allocated";
          held.add(port);
          return undefined;
        },
        allocateNext(): number | undefined {
          const size = NODE_PORT_MAX - NODE_PORT_MIN + 1;
          for (let tries = 0; tries < size; tries++) {
            const port = next;
            next = next >= NODE_PORT_MAX ? NODE_PORT_MIN : next + 1;
            if (!held.has(port)) {
              held.add(port);
              return port;
            }
          }
          return undefined;
        },
      };
    },
  };
}

type NodePortOperation = ReturnType<ReturnType<typeof nodePorts>["operation"]>;

function nextNodePort(op: NodePortOperation): number {
  const port = op.allocateNext();
  if (port === undefined) throw internalError(new Error("failed to allocate a nodePort: range is full"));
  return port;
}

/** normalizeClusterIPs: clusterIPs follows clusterIP where the client used the singular field only. */
function normalizeClusterIPs(spec: Spec, oldSpec: Spec | undefined): void {
  const clusterIP = str(spec["clusterIP"]);
  const clusterIPs = strings(spec["clusterIPs"]);
  if (oldSpec === undefined) {
    if (clusterIP !== "" && clusterIPs.length === 0) spec["clusterIPs"] = [clusterIP];
    return;
  }
  const oldClusterIPs = strings(oldSpec["clusterIPs"]);
  // An old client patching something else, without clusterIPs.
  if (oldClusterIPs.length > 0 && clusterIPs.length === 0 && str(oldSpec["clusterIP"]) === clusterIP) {
    spec["clusterIPs"] = oldSpec["clusterIPs"];
  }
  if (str(oldSpec["clusterIP"]) !== str(spec["clusterIP"])) {
    const same = sameList(oldSpec["clusterIPs"], spec["clusterIPs"]);
    if (str(oldSpec["clusterIP"]) !== "" && str(spec["clusterIP"]) === "") {
      if (same) delete spec["clusterIPs"];
    } else if (same) {
      spec["clusterIPs"] = [str(spec["clusterIP"])];
    }
  }
}

/** isMatchingPreferDualStackClusterIPFields: an unchanged PreferDualStack Service needs nothing. */
function unchangedPreferDualStack(spec: Spec, oldSpec: Spec | undefined): boolean {
  if (oldSpec === undefined || typeof spec["ipFamilyPolicy"] !== "string") return false;
  if (oldSpec["type"] !== spec["type"]) return false;
  if (!["ClusterIP", "NodePort", "LoadBalancer"].includes(str(spec["type"]))) return false;
  if (spec["ipFamilyPolicy"] !== "PreferDualStack") return false;
  if (typeof oldSpec["ipFamilyPolicy"] === "string" && oldSpec["ipFamilyPolicy"] !== "PreferDualStack") return false;
  return sameList(oldSpec["clusterIPs"], spec["clusterIPs"]) && sameList(oldSpec["ipFamilies"], spec["ipFamilies"]);
}

function selectorIsEmpty(spec: Spec): boolean {
  const selector = spec["selector"];
  return selector === null || typeof selector !== "object" || Object.keys(selector).length === 0;
}

/** initIPFamilyFields: the policy and the families, after the cluster IP fields' own validation. */
function initIPFamilyFields(svc: JsonObject, oldSpec: Spec | undefined): void {
  const spec = record(svc, "spec");
  if (spec["type"] === "ExternalName") return;
  if (unchangedPreferDualStack(spec, oldSpec)) return;
  const headlessWithoutSelector = spec["clusterIP"] === "None" && selectorIsEmpty(spec);
  if (typeof spec["ipFamilyPolicy"] !== "string") {
    if (oldSpec !== undefined && typeof oldSpec["ipFamilyPolicy"] === "string")
      spec["ipFamilyPolicy"] = oldSpec["ipFamilyPolicy"];
    else spec["ipFamilyPolicy"] = headlessWithoutSelector ? "RequireDualStack" : "SingleStack";
  }
  const related = validateServiceClusterIPsRelatedFields(svc);
  if (related.length > 0) throw invalidService(svc, related);

  const errs: FieldError[] = [];
  const policy = str(spec["ipFamilyPolicy"]);
  if (oldSpec !== undefined) {
    const clusterIPs = strings(spec["clusterIPs"]);
    const families = strings(spec["ipFamilies"]);
    if (policy === "SingleStack") {
      if (sameList(oldSpec["clusterIPs"], spec["clusterIPs"]) && clusterIPs.length > 1)
        spec["clusterIPs"] = clusterIPs.slice(0, 1);
      if (sameList(oldSpec["ipFamilies"], spec["ipFamilies"]) && families.length > 1)
        spec["ipFamilies"] = families.slice(0, 1);
    } else {
      if (clusterIPs.length > 0 && clusterIPs.length < strings(oldSpec["clusterIPs"]).length)
        errs.push(invalid("spec.ipFamilyPolicy", policy, "must be 'SingleStack' to release the secondary cluster IP"));
      if (families.length > 0 && families.length < strings(oldSpec["ipFamilies"]).length)
        errs.push(invalid("spec.ipFamilyPolicy", policy, "must be 'SingleStack' to release the secondary IP family"));
    }
  }
  const clusterIPs = strings(spec["clusterIPs"]);
  const families = strings(spec["ipFamilies"]);
  if (policy === "SingleStack") {
    if (clusterIPs.length === 2) {
      errs.push(
        invalid(
          "spec.ipFamilyPolicy",
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
        ),
      );
    }
    if (families.length === 2) {
      errs.push(
        invalid(
          "spec.ipFamilyPolicy",
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
        ),
      );
    }
  }
  for (let i = 0; i < clusterIPs.length; i++) {
    const ip = clusterIPs[i]!;
    if (ip === "None") break;
    if (i >= families.length) {
      if (isIPv6String(ip))
        errs.push(
          invalid(`spec.clusterIPs[${i}]`, goStringSlice(clusterIPs), "IPv6 is not configured on this cluster"),
        );
      else families.push("IPv4");
    }
  }
  spec["ipFamilies"] = families;
  if (errs.length > 0) throw invalidService(svc, errs);

  if (headlessWithoutSelector) {
    if (families.length === 0) families.push("IPv4");
    // A headless Service without a selector gets both families unless it asked for one.
    if (families.length < 2 && policy !== "SingleStack") families.push(families[0] === "IPv4" ? "IPv6" : "IPv4");
    return;
  }
  if (policy === "RequireDualStack")
    errs.push(invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services"));
  families.forEach((family, i) => {
    if (family !== "IPv4") errs.push(invalid(`spec.ipFamilies[${i}]`, family, "not configured on this cluster"));
  });
  if (errs.length > 0) throw invalidService(svc, errs);
  if (families.length === 0) families.push("IPv4");
}

/** allocClusterIPs: the address of the (single) family, allocated or the requested one taken. */
function allocClusterIPs(svc: JsonObject, ips: ReturnType<typeof clusterIps>): void {
  const spec = record(svc, "spec");
  if (spec["type"] === "ExternalName") return;
  const clusterIPs = strings(spec["clusterIPs"]);
  if (clusterIPs[0] === "None") return;
  const families = strings(spec["ipFamilies"]);
  while (clusterIPs.length < families.length) clusterIPs.push("");
  const requested = clusterIPs[0] ?? "";
  if (requested === "") {
    const ip = ips.allocate();
    clusterIPs[0] = ip;
    spec["clusterIP"] = ip;
  } else {
    const refusal = ips.refusal(requested);
    if (refusal !== undefined) {
      throw invalidService(svc, [
        invalid(
          "spec.clusterIPs",
          goStringSlice(strings(spec["clusterIPs"])),
          `failed to allocate IP ${requested}: ${refusal}`,
        ),
      ]);
    }
  }
  spec["clusterIPs"] = clusterIPs;
}

/** initNodePorts: one node port per service port number (shared by its protocols), requested or allocated. */
function initNodePorts(svc: JsonObject, op: NodePortOperation): void {
  const spec = record(svc, "spec");
  const ports = portsOf(spec);
  const byPort = new Map<number, number>();
  ports.forEach((sp, i) => {
    if (int(sp["nodePort"]) === 0 && !shouldAllocateNodePorts(spec)) return;
    const port = int(sp["port"]);
    const allocated = byPort.get(port) ?? 0;
    const refuse = (nodePort: number, why: string) =>
      invalidService(svc, [invalid(`spec.ports[${i}].nodePort`, nodePort, why)]);
    if (allocated === 0) {
      const requested = ports.find((p) => int(p["port"]) === port && int(p["nodePort"]) !== 0);
      const np = requested === undefined ? 0 : int(requested["nodePort"]);
      if (np !== 0) {
        const why = op.allocate(np);
        if (why !== undefined) throw refuse(np, why);
        sp["nodePort"] = np;
        byPort.set(port, np);
      } else {
        const next = nextNodePort(op);
        sp["nodePort"] = next;
        byPort.set(port, next);
      }
    } else if (int(sp["nodePort"]) !== allocated) {
      if (int(sp["nodePort"]) === 0) sp["nodePort"] = allocated;
      else {
        const why = op.allocate(int(sp["nodePort"]));
        if (why !== undefined) throw refuse(int(sp["nodePort"]), why);
      }
    }
  });
}

/** allocHealthCheckNodePort: the requested one or the next; its failures are 500s. */
function allocHealthCheckNodePort(spec: Spec, op: NodePortOperation): void {
  const requested = int(spec["healthCheckNodePort"]);
  if (requested !== 0) {
    const why = op.allocate(requested);
    if (why !== undefined)
      throw internalError(new Error(`failed to allocate requested HealthCheck NodePort ${requested}: ${why}`));
    return;
  }
  const port = op.allocateNext();
  if (port === undefined) throw internalError(new Error("failed to allocate a HealthCheck NodePort 0: range is full"));
  spec["healthCheckNodePort"] = port;
}

/** patchAllocatedValues: what was allocated and the client did not send is kept. */
function patchAllocatedValues(spec: Spec, oldSpec: Spec): void {
  if (needsClusterIP(oldSpec) && needsClusterIP(spec)) {
    if (str(spec["clusterIP"]) === "" && oldSpec["clusterIP"] !== undefined) spec["clusterIP"] = oldSpec["clusterIP"];
    if (strings(spec["clusterIPs"]).length === 0 && strings(oldSpec["clusterIPs"]).length > 0)
      spec["clusterIPs"] = oldSpec["clusterIPs"];
  }
  if (needsNodePort(oldSpec) && needsNodePort(spec)) {
    const newPorts = new Set(nodePortsOf(spec));
    const used = new Set(nodePortsOf(oldSpec).filter((p) => newPorts.has(p)));
    // By port name: the client may have changed anything else about the port.
    const byName = new Map<string, number>();
    for (const p of portsOf(oldSpec)) byName.set(str(p["name"]), int(p["nodePort"]));
    for (const p of portsOf(spec)) {
      if (int(p["nodePort"]) !== 0) continue;
      const oldValue = byName.get(str(p["name"])) ?? 0;
      if (!used.has(oldValue) && oldValue !== 0) p["nodePort"] = oldValue;
    }
  }
  if (needsHealthCheckNodePort(oldSpec) && needsHealthCheckNodePort(spec) && int(spec["healthCheckNodePort"]) === 0) {
    if (oldSpec["healthCheckNodePort"] !== undefined) spec["healthCheckNodePort"] = oldSpec["healthCheckNodePort"];
  }
}

/** updateNodePorts: the node ports the update adds are allocated (requested) or allocated anew (zero). */
function updateNodePorts(svc: JsonObject, oldSpec: Spec, op: NodePortOperation): void {
  const spec = record(svc, "spec");
  const oldPorts = new Set(nodePortsOf(oldSpec));
  const taken = new Set<number>();
  portsOf(spec).forEach((sp, i) => {
    const nodePort = int(sp["nodePort"]);
    if (nodePort === 0 && !shouldAllocateNodePorts(spec)) return;
    if (nodePort !== 0) {
      if (!oldPorts.has(nodePort) && !taken.has(nodePort)) {
        const why = op.allocate(nodePort);
        if (why !== undefined) throw invalidService(svc, [invalid(`spec.ports[${i}].nodePort`, nodePort, why)]);
        taken.add(nodePort);
      }
    } else {
      sp["nodePort"] = nextNodePort(op);
    }
  });
}

/** dropTypeDependentFields (the strategy's PrepareForUpdate): what the new type does not use, if unchanged. */
function dropTypeDependentFields(svc: JsonObject, old: JsonObject): void {
  const spec = record(svc, "spec");
  const oldSpec = record(old, "spec");
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (str(oldSpec["clusterIP"]) === str(spec["clusterIP"]) && sameList(oldSpec["clusterIPs"], spec["clusterIPs"])) {
      delete spec["clusterIP"];
      delete spec["clusterIPs"];
    }
    if (sameList(oldSpec["ipFamilies"], spec["ipFamilies"])) delete spec["ipFamilies"];
    if (str(oldSpec["ipFamilyPolicy"]) === str(spec["ipFamilyPolicy"])) delete spec["ipFamilyPolicy"];
  }
  const nodePortsNeeded = (s: Spec) => s["type"] === "NodePort" || s["type"] === "LoadBalancer";
  if (nodePortsNeeded(oldSpec) && !nodePortsNeeded(spec)) {
    const oldPorts = new Set(nodePortsOf(oldSpec));
    if (nodePortsOf(spec).every((p) => oldPorts.has(p))) for (const p of portsOf(spec)) delete p["nodePort"];
  }
  if (
    needsHealthCheckNodePort(oldSpec) &&
    !needsHealthCheckNodePort(spec) &&
    int(oldSpec["healthCheckNodePort"]) === int(spec["healthCheckNodePort"])
  ) {
    delete spec["healthCheckNodePort"];
  }
  if (oldSpec["type"] === "LoadBalancer" && spec["type"] !== "LoadBalancer") {
    const before = oldSpec["allocateLoadBalancerNodePorts"];
    if (typeof before === "boolean" && before === spec["allocateLoadBalancerNodePorts"])
      delete spec["allocateLoadBalancerNodePorts"];
    if (str(oldSpec["loadBalancerClass"]) === str(spec["loadBalancerClass"])) delete spec["loadBalancerClass"];
  }
  if (
    externallyAccessible(oldSpec) &&
    !externallyAccessible(spec) &&
    str(oldSpec["externalTrafficPolicy"]) === str(spec["externalTrafficPolicy"])
  ) {
    delete spec["externalTrafficPolicy"];
  }
  // A new status object: the update's status is still the stored object's own.
  if (spec["type"] !== "LoadBalancer") svc["status"] = { ...record(svc, "status"), loadBalancer: {} };
}

/**
 * defaultOnReadInternalTrafficPolicy: kube-apiserver stores an ExternalName Service's
 * internalTrafficPolicy but drops it from every read (the defaults once set it by mistake); it is
 * dropped here before it is stored, which reads the same.
 */
function dropExternalNameTrafficPolicy(spec: Spec): void {
  if (spec["type"] === "ExternalName") delete spec["internalTrafficPolicy"];
}

/** The Service REST storage's allocation over the Services `deps` reports as stored. */
export function serviceAllocation(deps: ServiceAllocationDeps): ServiceAllocation {
  const ips = clusterIps(deps.ipsInUse);
  const ports = nodePorts(deps.nodePortsInUse);
  return {
    prepareCreate(svc) {
      const spec = record(svc, "spec");
      normalizeClusterIPs(spec, undefined);
      initIPFamilyFields(svc, undefined);
      allocClusterIPs(svc, ips);
      const op = ports.operation();
      if (spec["type"] === "NodePort" || spec["type"] === "LoadBalancer") initNodePorts(svc, op);
      if (needsHealthCheckNodePort(spec)) allocHealthCheckNodePort(spec, op);
      record(svc, "status")["loadBalancer"] ??= {};
      dropExternalNameTrafficPolicy(spec);
    },
    prepareUpdate(next, old) {
      // The scheme's defaults come after this hook in the generic update; the rules here read them.
      defaultService(next);
      const spec = record(next, "spec");
      const oldSpec = record(structuredClone(old), "spec");
      patchAllocatedValues(spec, oldSpec);
      normalizeClusterIPs(spec, oldSpec);
      initIPFamilyFields(next, oldSpec);
      if (oldSpec["type"] === "ExternalName" && spec["type"] !== "ExternalName") allocClusterIPs(next, ips);
      const op = ports.operation();
      if (spec["type"] === "NodePort" || spec["type"] === "LoadBalancer") updateNodePorts(next, oldSpec, op);
      if (!needsHealthCheckNodePort(oldSpec) && needsHealthCheckNodePort(spec)) allocHealthCheckNodePort(spec, op);
      dropTypeDependentFields(next, old);
      dropExternalNameTrafficPolicy(spec);
    },
  };
}
