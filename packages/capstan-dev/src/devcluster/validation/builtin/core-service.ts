/**
 * Service validation, as pkg/apis/core/validation (Kubernetes 1.32) lays it out: ValidateService on
 * create, ValidateServiceUpdate (the cluster IPs and IP families that may not change, the load
 * balancer class, the health-check node port) then ValidateService on update, and
 * ValidateServiceClusterIPsRelatedFields, which the REST layer's allocation also runs on its own before
 * it allocates (registry/service-allocation.ts), so that its errors come first, alone.
 *
 * The object is the decoded v1 Service with the scheme's defaults applied (type, sessionAffinity,
 * protocol, targetPort, traffic policies) and, as kube-apiserver's allocation leaves it, clusterIPs
 * synced with clusterIP and the IP family fields filled in.
 *
 * Caveat: bad values are printed as 1.32 prints them (`%#v` for slices and structs); Go iterates the
 * selector map in random order, we report in the object's key order.
 */
import {
  duplicate,
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
} from "../field-errors.ts";
import { goQuote, withGoSharpV } from "../go-format.ts";
import {
  isIPv6String,
  isLinkLocalMulticast,
  isLinkLocalUnicast,
  isLoopback,
  isUnspecified,
  parseIPSloppy,
  validateCIDR,
  validateIP,
} from "../ip-address.ts";
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from "../names.ts";
import { validateLabels } from "../object-meta.ts";
import { type Json, record } from "./kind-validation.ts";

/** ports.KubeletPort: a LoadBalancer may not expose it. */
const KUBELET_PORT = 10250;
/** core.MaxClientIPServiceAffinitySeconds: one day. */
const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;
/** The annotations a Service's validation reads. */
const TOPOLOGY_HINTS_ANNOTATION = "service.kubernetes.io/topology-aware-hints";
const TOPOLOGY_MODE_ANNOTATION = "service.kubernetes.io/topology-mode";
const LB_SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges";

const SUPPORTED_PROTOCOLS = ["SCTP", "TCP", "UDP"];
const SUPPORTED_SESSION_AFFINITY = ["ClientIP", "None"];
const SUPPORTED_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const SUPPORTED_IP_FAMILIES = ["IPv4", "IPv6"];
const SUPPORTED_IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"];
const SUPPORTED_TRAFFIC_POLICIES = ["Cluster", "Local"];
const PREFER_CLOSE = "PreferClose";

const SPEC = fieldPath("spec");

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function int(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.map(str) : undefined;
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.map((v) => record(v) ?? {}) : [];
}

/** A Go slice of a string type as `%#v` prints it: `[]string{"a", "b"}`, `[]string(nil)` when absent. */
export function goStringSlice(values: readonly string[] | undefined, type = "string"): object {
  const list = values === undefined ? [] : [...values];
  const text = values === undefined ? `[]${type}(nil)` : `[]${type}{${values.map(goQuote).join(", ")}}`;
  return withGoSharpV(list, text);
}

/** A *string (or named string pointer) bad value: ErrorBody prints what it points at, or "null". */
function pointerString(value: unknown): string {
  return typeof value === "string" ? value : "null";
}

/** The Service's spec fields the rules read. */
interface ServiceSpecView {
  type: string;
  clusterIP: string;
  clusterIPs: string[] | undefined;
  ipFamilies: string[] | undefined;
  ipFamilyPolicy: string | undefined;
  ports: Json[];
}

function specOf(svc: Json): Json {
  return record(svc["spec"]) ?? {};
}

function view(svc: Json): ServiceSpecView {
  const spec = specOf(svc);
  return {
    type: str(spec["type"]),
    clusterIP: str(spec["clusterIP"]),
    clusterIPs: strings(spec["clusterIPs"]),
    ipFamilies: strings(spec["ipFamilies"]),
    ipFamilyPolicy: typeof spec["ipFamilyPolicy"] === "string" ? spec["ipFamilyPolicy"] : undefined,
    ports: records(spec["ports"]),
  };
}

/** isHeadlessService: clusterIPs is exactly ["None"]. */
export function isHeadlessService(svc: Json): boolean {
  const ips = strings(specOf(svc)["clusterIPs"]);
  return ips !== undefined && ips.length === 1 && ips[0] === "None";
}

/** apiservice.ExternallyAccessible. */
export function externallyAccessible(spec: Json): boolean {
  const type = spec["type"];
  const externalIPs = spec["externalIPs"];
  return (
    type === "LoadBalancer" ||
    type === "NodePort" ||
    (type === "ClusterIP" && Array.isArray(externalIPs) && externalIPs.length > 0)
  );
}

/** apiservice.NeedsHealthCheck: a LoadBalancer with externalTrafficPolicy Local. */
export function needsHealthCheck(spec: Json): boolean {
  return spec["type"] === "LoadBalancer" && spec["externalTrafficPolicy"] === "Local";
}

/** IsValidPortNum's message. */
export const PORT_RANGE_MESSAGE = "must be between 1 and 65535, inclusive";

function isValidPortNum(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}

/** apimachinery IsValidPortName (IANA_SVC_NAME). */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(port, "utf8") > 15) errs.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(port)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(port)) errs.push("must contain at least one letter (a-z)");
  if (port.includes("--")) errs.push("must not contain consecutive hyphens");
  if (port.length > 0 && (port.startsWith("-") || port.endsWith("-"))) errs.push("must not begin or end with a hyphen");
  return errs;
}

/** ValidatePortNumOrName: an IntOrString port (absent is the int 0). */
export function validatePortNumOrName(port: unknown, path: FieldPath): FieldError[] {
  if (typeof port === "string") return isValidPortName(port).map((msg) => invalid(path, port, msg));
  const n = int(port);
  return isValidPortNum(n) ? [] : [invalid(path, n, PORT_RANGE_MESSAGE)];
}

/** ValidateNonSpecialIP. */
function validateNonSpecialIP(value: string, path: FieldPath): FieldError[] {
  const ip = parseIPSloppy(value);
  if (ip === undefined) return [invalid(path, value, "must be a valid IP address")];
  const errs: FieldError[] = [];
  if (isUnspecified(ip)) errs.push(invalid(path, value, `may not be unspecified (${value})`));
  if (isLoopback(ip)) errs.push(invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"));
  if (isLinkLocalUnicast(ip))
    errs.push(invalid(path, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"));
  if (isLinkLocalMulticast(ip))
    errs.push(invalid(path, value, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"));
  return errs;
}

/** IsDualStackIPStrings: exactly one IPv4 and one IPv6 address. */
function isDualStack(ips: readonly string[]): boolean {
  if (ips.length > 2) return false;
  const v6 = ips.filter(isIPv6String).length;
  return ips.length === 2 && v6 === 1;
}

/**
 * ValidateServiceClusterIPsRelatedFields: clusterIP and clusterIPs in sync, the IP families and policy
 * supported, the addresses valid (None first and alone), at most one per family, each of the family
 * `ipFamilies` gives it. Nothing for ExternalName Services (ValidateService forbids the fields there).
 */
export function validateServiceClusterIPsRelatedFields(svc: Json): FieldError[] {
  const s = view(svc);
  if (s.type === "ExternalName") return [];
  const errs: FieldError[] = [];
  const clusterIPsPath = SPEC.child("clusterIPs");
  const ips = s.clusterIPs ?? [];
  if (s.clusterIP !== "") {
    if (ips.length === 0) errs.push(required(clusterIPsPath, ""));
    else if (ips[0] !== s.clusterIP)
      errs.push(invalid(clusterIPsPath, goStringSlice(s.clusterIPs), "first value must match `clusterIP`"));
  } else if (ips.length !== 0) {
    errs.push(invalid(clusterIPsPath, goStringSlice(s.clusterIPs), "must be empty when `clusterIP` is not specified"));
  }
  const seen = new Set<string>();
  (s.ipFamilies ?? []).forEach((family, i) => {
    const path = SPEC.child("ipFamilies").index(i);
    if (!SUPPORTED_IP_FAMILIES.includes(family)) errs.push(notSupported(path, family, SUPPORTED_IP_FAMILIES));
    if (seen.has(family)) errs.push(duplicate(path, family));
    seen.add(family);
  });
  if (s.ipFamilyPolicy !== undefined && !SUPPORTED_IP_FAMILY_POLICIES.includes(s.ipFamilyPolicy)) {
    errs.push(notSupported(SPEC.child("ipFamilyPolicy"), s.ipFamilyPolicy, SUPPORTED_IP_FAMILY_POLICIES));
  }
  let hasInvalidIPs = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === "None") {
      if (ips.length > 1) {
        hasInvalidIPs = true;
        errs.push(invalid(clusterIPsPath, goStringSlice(s.clusterIPs), "'None' must be the first and only value"));
      }
      return;
    }
    const bad = validateIP(clusterIPsPath.index(i), ip);
    if (bad.length > 0) hasInvalidIPs = true;
    errs.push(...bad);
  });
  if (ips.length > 2) errs.push(invalid(clusterIPsPath, goStringSlice(s.clusterIPs), "may only hold up to 2 values"));
  if (hasInvalidIPs) return errs;
  if (ips.length > 1 && !isDualStack(ips)) {
    errs.push(
      invalid(clusterIPsPath, goStringSlice(s.clusterIPs), "may specify no more than one IP for each IP family"),
    );
  }
  const families = s.ipFamilies ?? [];
  if (!isHeadlessService(svc) && ips.length > 0 && families.length > 0) {
    ips.forEach((ip, i) => {
      if (i > families.length - 1) return;
      if (families[i] === "IPv4" && isIPv6String(ip))
        errs.push(invalid(clusterIPsPath.index(i), ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (families[i] === "IPv6" && !isIPv6String(ip))
        errs.push(invalid(clusterIPsPath.index(i), ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  }
  return errs;
}

/** validateServicePort: the name (required when there are several, unique), port, protocol, targetPort. */
function validateServicePort(sp: Json, requireName: boolean, names: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(sp["name"]);
  if (requireName && name === "") {
    errs.push(required(path.child("name"), ""));
  } else if (name !== "") {
    for (const msg of isDNS1123Label(name)) errs.push(invalid(path.child("name"), name, msg));
    if (names.has(name)) errs.push(duplicate(path.child("name"), name));
    else names.add(name);
  }
  const port = int(sp["port"]);
  if (!isValidPortNum(port)) errs.push(invalid(path.child("port"), port, PORT_RANGE_MESSAGE));
  const protocol = str(sp["protocol"]);
  if (protocol === "") errs.push(required(path.child("protocol"), ""));
  else if (!SUPPORTED_PROTOCOLS.includes(protocol))
    errs.push(notSupported(path.child("protocol"), protocol, SUPPORTED_PROTOCOLS));
  errs.push(...validatePortNumOrName(sp["targetPort"], path.child("targetPort")));
  if (typeof sp["appProtocol"] === "string") {
    const appProtocol = sp["appProtocol"];
    for (const msg of isQualifiedName(appProtocol)) errs.push(invalid(path.child("appProtocol"), appProtocol, msg));
  }
  return errs;
}

/** The `%#v` of the core.ServicePort{Protocol, Port} key ValidateService reports a duplicate port with. */
function servicePortKey(protocol: string, port: number): object {
  return withGoSharpV(
    { protocol, port },
    `core.ServicePort{Name:"", Protocol:${goQuote(protocol)}, AppProtocol:(*string)(nil), Port:${port}, ` +
      `TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
  );
}

function validateClientIPAffinityConfig(config: unknown, path: FieldPath): FieldError[] {
  const detail = "when session affinity type is ClientIP";
  const cfg = record(config);
  if (cfg === undefined) return [required(path, detail)];
  const clientIP = record(cfg["clientIP"]);
  if (clientIP === undefined) return [required(path.child("clientIP"), detail)];
  const timeout = clientIP["timeoutSeconds"];
  const timeoutPath = path.child("clientIP", "timeoutSeconds");
  if (typeof timeout !== "number") return [required(timeoutPath, detail)];
  if (timeout <= 0 || timeout > MAX_CLIENT_IP_AFFINITY_SECONDS) {
    return [invalid(timeoutPath, timeout, `must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`)];
  }
  return [];
}

/** validateLoadBalancerClassField: may not change on a LoadBalancer, a qualified name, only on LoadBalancers. */
function validateLoadBalancerClass(old: Json | undefined, svc: Json): FieldError[] {
  const errs: FieldError[] = [];
  const spec = specOf(svc);
  const path = SPEC.child("loadBalancerClass");
  const cls = spec["loadBalancerClass"];
  if (old !== undefined) {
    const oldSpec = specOf(old);
    const oldCls = oldSpec["loadBalancerClass"];
    const same = (typeof oldCls === "string" ? oldCls : undefined) === (typeof cls === "string" ? cls : undefined);
    if (oldSpec["type"] === "LoadBalancer" && spec["type"] === "LoadBalancer" && !same) {
      errs.push(invalid(path, pointerString(cls), "may not change once set"));
    }
  }
  if (typeof cls === "string") {
    if (spec["type"] === "LoadBalancer") for (const msg of isQualifiedName(cls)) errs.push(invalid(path, cls, msg));
    else errs.push(forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
  }
  return errs;
}

function validateExternalTrafficPolicy(spec: Json): FieldError[] {
  const errs: FieldError[] = [];
  const policy = str(spec["externalTrafficPolicy"]);
  const policyPath = SPEC.child("externalTrafficPolicy");
  if (!externallyAccessible(spec)) {
    if (policy !== "") errs.push(invalid(policyPath, policy, "may only be set for externally-accessible services"));
  } else if (policy === "") {
    errs.push(required(policyPath, ""));
  } else if (!SUPPORTED_TRAFFIC_POLICIES.includes(policy)) {
    errs.push(notSupported(policyPath, policy, SUPPORTED_TRAFFIC_POLICIES));
  }
  const hcPath = SPEC.child("healthCheckNodePort");
  const hc = int(spec["healthCheckNodePort"]);
  if (!needsHealthCheck(spec)) {
    if (hc !== 0) {
      errs.push(
        invalid(hcPath, hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"),
      );
    }
  } else if (hc === 0) {
    errs.push(required(hcPath, ""));
  } else if (!isValidPortNum(hc)) {
    errs.push(invalid(hcPath, hc, PORT_RANGE_MESSAGE));
  }
  return errs;
}

function validateInternalTrafficPolicy(spec: Json): FieldError[] {
  const path = SPEC.child("internalTrafficPolicy");
  const policy = spec["internalTrafficPolicy"];
  if (typeof policy !== "string") {
    // Only these types: Go did not check the others before the field went beta.
    return ["NodePort", "LoadBalancer", "ClusterIP"].includes(str(spec["type"])) ? [required(path, "")] : [];
  }
  return SUPPORTED_TRAFFIC_POLICIES.includes(policy) ? [] : [notSupported(path, policy, SUPPORTED_TRAFFIC_POLICIES)];
}

/** ValidateService (its spec part: metadata is the caller's). */
export function validateService(svc: Json): FieldError[] {
  const errs: FieldError[] = [];
  const meta = record(svc["metadata"]) ?? {};
  const annotations = record(meta["annotations"]) ?? {};
  const annotationsPath = fieldPath("metadata", "annotations");
  const hints = annotations[TOPOLOGY_HINTS_ANNOTATION];
  const mode = annotations[TOPOLOGY_MODE_ANNOTATION];
  if (typeof hints === "string" && typeof mode === "string" && hints !== mode) {
    errs.push(
      invalid(
        annotationsPath.key(TOPOLOGY_MODE_ANNOTATION),
        mode,
        `must match annotations[${TOPOLOGY_HINTS_ANNOTATION}] when both are specified`,
      ),
    );
  }

  const spec = specOf(svc);
  const s = view(svc);
  const headless = isHeadlessService(svc);
  const portsPath = SPEC.child("ports");
  if (s.ports.length === 0 && !headless && s.type !== "ExternalName") errs.push(required(portsPath, ""));
  switch (s.type) {
    case "LoadBalancer":
      s.ports.forEach((p, i) => {
        if (int(p["port"]) === KUBELET_PORT) {
          errs.push(
            invalid(
              portsPath.index(i),
              KUBELET_PORT,
              `may not expose port ${KUBELET_PORT} externally since it is used by kubelet`,
            ),
          );
        }
      });
      if (headless)
        errs.push(
          invalid(SPEC.child("clusterIPs").index(0), "None", "may not be set to 'None' for LoadBalancer services"),
        );
      break;
    case "NodePort":
      if (headless)
        errs.push(invalid(SPEC.child("clusterIPs").index(0), "None", "may not be set to 'None' for NodePort services"));
      break;
    case "ExternalName": {
      if ((s.clusterIPs ?? []).length > 0)
        errs.push(forbidden(SPEC.child("clusterIPs"), "may not be set for ExternalName services"));
      if ((s.ipFamilies ?? []).length > 0)
        errs.push(forbidden(SPEC.child("ipFamilies"), "may not be set for ExternalName services"));
      if (s.ipFamilyPolicy !== undefined)
        errs.push(forbidden(SPEC.child("ipFamilyPolicy"), "may not be set for ExternalName services"));
      // A CNAME may end with a dot (fully qualified).
      const cname = str(spec["externalName"]).replace(/\.$/, "");
      if (cname !== "") {
        for (const msg of isDNS1123Subdomain(cname)) errs.push(invalid(SPEC.child("externalName"), cname, msg));
      } else {
        errs.push(required(SPEC.child("externalName"), ""));
      }
      break;
    }
  }

  const names = new Set<string>();
  s.ports.forEach((p, i) => {
    errs.push(...validateServicePort(p, s.ports.length > 1, names, portsPath.index(i)));
  });

  if (spec["selector"] !== undefined && spec["selector"] !== null)
    errs.push(...validateLabels(spec["selector"], SPEC.child("selector")));

  const affinity = str(spec["sessionAffinity"]);
  if (affinity === "") errs.push(required(SPEC.child("sessionAffinity"), ""));
  else if (!SUPPORTED_SESSION_AFFINITY.includes(affinity))
    errs.push(notSupported(SPEC.child("sessionAffinity"), affinity, SUPPORTED_SESSION_AFFINITY));
  const affinityConfigPath = SPEC.child("sessionAffinityConfig");
  if (affinity === "ClientIP") {
    errs.push(...validateClientIPAffinityConfig(spec["sessionAffinityConfig"], affinityConfigPath));
  } else if (affinity === "None" && record(spec["sessionAffinityConfig"]) !== undefined) {
    errs.push(forbidden(affinityConfigPath, "must not be set when session affinity is None"));
  }

  errs.push(...validateServiceClusterIPsRelatedFields(svc));

  (strings(spec["externalIPs"]) ?? []).forEach((ip, i) => {
    const path = SPEC.child("externalIPs").index(i);
    const bad = validateIP(path, ip);
    errs.push(...(bad.length > 0 ? bad : validateNonSpecialIP(ip, path)));
  });

  if (s.type === "") errs.push(required(SPEC.child("type"), ""));
  else if (!SUPPORTED_TYPES.includes(s.type)) errs.push(notSupported(SPEC.child("type"), s.type, SUPPORTED_TYPES));

  if (s.type === "ClusterIP") {
    s.ports.forEach((p, i) => {
      if (int(p["nodePort"]) !== 0)
        errs.push(forbidden(portsPath.index(i).child("nodePort"), "may not be used when `type` is 'ClusterIP'"));
    });
  }

  const nodePorts = new Set<string>();
  s.ports.forEach((p, i) => {
    const nodePort = int(p["nodePort"]);
    if (nodePort === 0) return;
    const key = `${str(p["protocol"])}/${nodePort}`;
    if (nodePorts.has(key)) errs.push(duplicate(portsPath.index(i).child("nodePort"), nodePort));
    nodePorts.add(key);
  });
  const ports = new Set<string>();
  s.ports.forEach((p, i) => {
    const protocol = str(p["protocol"]);
    const port = int(p["port"]);
    const key = `${protocol}/${port}`;
    if (ports.has(key)) errs.push(duplicate(portsPath.index(i), servicePortKey(protocol, port)));
    ports.add(key);
  });

  const sourceRanges = strings(spec["loadBalancerSourceRanges"]) ?? [];
  const sourceRangesAnnotation = annotations[LB_SOURCE_RANGES_ANNOTATION];
  if (sourceRanges.length > 0) {
    // Go's field name, capitalised as it is written there.
    const path = SPEC.child("LoadBalancerSourceRanges");
    if (s.type !== "LoadBalancer") errs.push(forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
    // Space-padded values are allowed (they came from the annotation).
    sourceRanges.forEach((value, i) => {
      errs.push(...validateCIDR(path.index(i), value.trim()));
    });
  } else if (typeof sourceRangesAnnotation === "string") {
    const path = annotationsPath.key(LB_SOURCE_RANGES_ANNOTATION);
    if (s.type !== "LoadBalancer") errs.push(forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
    const value = sourceRangesAnnotation.trim();
    if (value !== "") for (const cidr of value.split(",")) errs.push(...validateCIDR(path, cidr.trim()));
  }

  const allocateNodePorts = spec["allocateLoadBalancerNodePorts"];
  if (typeof allocateNodePorts === "boolean" && s.type !== "LoadBalancer")
    errs.push(forbidden(SPEC.child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"));
  // Go's path has no `spec` here.
  if (s.type === "LoadBalancer" && typeof allocateNodePorts !== "boolean")
    errs.push(required(fieldPath("allocateLoadBalancerNodePorts"), ""));

  errs.push(...validateLoadBalancerClass(undefined, svc));
  errs.push(...validateExternalTrafficPolicy(spec));
  errs.push(...validateInternalTrafficPolicy(spec));
  const distribution = spec["trafficDistribution"];
  if (typeof distribution === "string" && distribution !== PREFER_CLOSE)
    errs.push(notSupported(SPEC.child("trafficDistribution"), distribution, [PREFER_CLOSE]));
  return errs;
}

/** validateUpgradeDowngradeClusterIPs: the primary cluster IP may not change; releasing the secondary needs SingleStack. */
function validateUpgradeDowngradeClusterIPs(old: Json, svc: Json): FieldError[] {
  const o = view(old);
  const n = view(svc);
  if (n.type === "ExternalName" || o.type === "ExternalName") return [];
  if (isHeadlessService(old) && isHeadlessService(svc)) return [];
  const errs: FieldError[] = [];
  const oldIPs = o.clusterIPs ?? [];
  const newIPs = n.clusterIPs ?? [];
  const path = SPEC.child("clusterIPs");
  const value = () => goStringSlice(n.clusterIPs);
  if (oldIPs.length === newIPs.length) {
    oldIPs.forEach((ip, i) => {
      if (ip !== newIPs[i]) errs.push(invalid(path.index(i), value(), "may not change once set"));
    });
  } else if (oldIPs.length > newIPs.length) {
    if (newIPs.length === 0) errs.push(invalid(path.index(0), value(), "primary clusterIP can not be unset"));
    if (oldIPs.length > 0 && newIPs.length > 0 && newIPs[0] !== oldIPs[0])
      errs.push(invalid(path.index(0), value(), "may not change once set"));
    if (newIPs.length === 1 && n.ipFamilyPolicy !== "SingleStack") {
      errs.push(
        invalid(
          SPEC.child("ipFamilyPolicy"),
          pointerString(n.ipFamilyPolicy),
          "must be set to 'SingleStack' when releasing the secondary clusterIP",
        ),
      );
    }
  } else if (oldIPs.length > 0 && newIPs[0] !== oldIPs[0]) {
    errs.push(invalid(path.index(0), value(), "may not change once set"));
  }
  return errs;
}

/** validateUpgradeDowngradeIPFamilies: the primary family may not change; releasing the secondary needs SingleStack. */
function validateUpgradeDowngradeIPFamilies(old: Json, svc: Json): FieldError[] {
  const o = view(old);
  const n = view(svc);
  if (n.type === "ExternalName" || o.type === "ExternalName") return [];
  const headless = isHeadlessService(svc);
  if (isHeadlessService(old) !== headless || headless) return [];
  const errs: FieldError[] = [];
  const oldFamilies = o.ipFamilies ?? [];
  const newFamilies = n.ipFamilies ?? [];
  const path = SPEC.child("ipFamilies").index(0);
  // Go reports the clusterIPs where it means the families in two of these (kept as it prints them).
  const families = () => goStringSlice(n.ipFamilies, "core.IPFamily");
  const ips = () => goStringSlice(n.clusterIPs);
  if (oldFamilies.length === newFamilies.length) {
    oldFamilies.forEach((family, i) => {
      if (family !== newFamilies[i]) errs.push(invalid(path, families(), "may not change once set"));
    });
  } else if (oldFamilies.length > newFamilies.length) {
    if ((n.clusterIPs ?? []).length === 0) errs.push(invalid(path, families(), "primary ipFamily can not be unset"));
    if (newFamilies.length > 0 && newFamilies[0] !== oldFamilies[0])
      errs.push(invalid(path, ips(), "may not change once set"));
    if (newFamilies.length === 1 && n.ipFamilyPolicy !== "SingleStack") {
      errs.push(
        invalid(
          SPEC.child("ipFamilyPolicy"),
          pointerString(n.ipFamilyPolicy),
          "must be set to 'SingleStack' when releasing the secondary ipFamily",
        ),
      );
    }
  } else if (oldFamilies.length > 0 && newFamilies.length > 0 && newFamilies[0] !== oldFamilies[0]) {
    errs.push(invalid(path, ips(), "may not change once set"));
  }
  return errs;
}

/** ValidateServiceUpdate (without its ObjectMeta part). */
export function validateServiceUpdate(svc: Json, old: Json): FieldError[] {
  const errs = [
    ...validateUpgradeDowngradeClusterIPs(old, svc),
    ...validateUpgradeDowngradeIPFamilies(old, svc),
    ...validateLoadBalancerClass(old, svc),
  ];
  const spec = specOf(svc);
  const oldSpec = specOf(old);
  if (
    needsHealthCheck(oldSpec) &&
    needsHealthCheck(spec) &&
    int(spec["healthCheckNodePort"]) !== int(oldSpec["healthCheckNodePort"])
  ) {
    errs.push(forbidden(SPEC.child("healthCheckNodePort"), "field is immutable"));
  }
  // ValidateServiceUpdate validates the LoadBalancer class twice (once more inside ValidateService).
  return [...errs, ...validateService(svc)];
}
