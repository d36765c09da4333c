/**
 * Column sets and cell renderers for server-side Tables, as kube-apiserver builds them:
 * - built-in kinds: the printers of k8s.io/kubernetes/pkg/printers/internalversion (the server
 *   always generates the wide set; kubectl hides priority > 0 columns unless `-o wide`);
 * - kinds without a printer: the default convertor of k8s.io/apiserver/pkg/registry/rest/table.go
 *   (`Name`, `Created At` as an RFC 3339 string);
 * - custom resources: the CRD's additionalPrinterColumns evaluated with JSONPath, as
 *   k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor does, with the
 *   implicit `Age` column when a version declares none.
 *
 * Every renderer is a pure function of the object and `now` (ms since epoch) so tests can pin ages.
 */
import type { CustomResourceColumnDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import { ageSince } from "./human-duration.ts";
import { evaluateJsonPath, type JsonPath, jsonPathText, parseJsonPath } from "./jsonpath.ts";

/** meta.k8s.io/v1 TableColumnDefinition; every field is always serialized, as Go does (no omitempty). */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** meta.k8s.io/v1 TableRowCondition (only `Completed` is used, for finished pods). */
export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** How one kind is rendered in a Table. */
export interface TablePrinter {
  readonly columns: readonly TableColumnDefinition[];
  cells(obj: Json, now: number): unknown[];
  conditions?(obj: Json): TableRowCondition[] | undefined;
}

/** A decoded JSON object; printers read it defensively, since stored objects may lack any field. */
export type Json = Record<string, unknown>;

const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_DESCRIPTION =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

function column(name: string, type: string, description: string, priority = 0, format = ""): TableColumnDefinition {
  return { name, type, format, description, priority };
}
const nameColumn = (): TableColumnDefinition => column("Name", "string", NAME_DESCRIPTION, 0, "name");
const ageColumn = (): TableColumnDefinition => column("Age", "string", CREATION_DESCRIPTION);

// --- defensive readers -------------------------------------------------------------------------

function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}
function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}
function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : 0;
}
function meta(o: Json): Json {
  return obj(o["metadata"]);
}
function nameOf(o: Json): string {
  return str(meta(o)["name"]);
}
function ageOf(o: Json, now: number): string {
  return ageSince(str(meta(o)["creationTimestamp"]) || undefined, now);
}
function countKeys(value: unknown): number {
  return Object.keys(obj(value)).length;
}
function orNone(value: string): string {
  return value === "" ? "<none>" : value;
}

/** labels.FormatLabels: `k=v` pairs sorted by key, `<none>` when empty. */
export function formatLabels(labels: unknown): string {
  const entries = Object.entries(obj(labels))
    .map(([k, v]) => `${k}=${str(v)}`)
    .sort();
  return entries.length === 0 ? "<none>" : entries.join(",");
}

/** metav1.LabelSelectorAsSelector(...).String(): requirements sorted by key, `""` for everything. */
export function formatLabelSelector(selector: unknown): string {
  const s = obj(selector);
  const requirements: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(obj(s["matchLabels"]))) requirements.push([k, `${k}=${str(v)}`]);
  for (const e of arr(s["matchExpressions"])) {
    const expr = obj(e);
    const key = str(expr["key"]);
    const values = arr(expr["values"]).map(str).sort().join(",");
    switch (str(expr["operator"])) {
      case "In":
        requirements.push([key, `${key} in (${values})`]);
        break;
      case "NotIn":
        requirements.push([key, `${key} notin (${values})`]);
        break;
      case "Exists":
        requirements.push([key, key]);
        break;
      case "DoesNotExist":
        requirements.push([key, `!${key}`]);
        break;
    }
  }
  return requirements
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map((r) => r[1])
    .join(",");
}

function containerCells(podSpec: unknown): [string, string] {
  const containers = arr(obj(podSpec)["containers"]).map(obj);
  return [containers.map((c) => str(c["name"])).join(","), containers.map((c) => str(c["image"])).join(",")];
}

// --- built-in printers ---------------------------------------------------------------------------

const podPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    column("Status", "string", "The aggregate status of the containers in this pod."),
    column(
      "Restarts",
      "string",
      "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    ),
    ageColumn(),
    column(
      "IP",
      "string",
      "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
      1,
    ),
    column(
      "Node",
      "string",
      "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
      1,
    ),
    column(
      "Nominated Node",
      "string",
      "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
      1,
    ),
    column(
      "Readiness Gates",
      "string",
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
      1,
    ),
  ],
  cells(pod, now) {
    const spec = obj(pod["spec"]);
    const status = obj(pod["status"]);
    const phase = str(status["phase"]);
    let reason = str(status["reason"]) || phase;
    for (const c of arr(status["conditions"]).map(obj)) {
      if (str(c["type"]) === "PodScheduled" && str(c["reason"]) === "SchedulingGated") reason = "SchedulingGated";
    }
    let restarts = 0;
    let lastRestart = 0;
    let ready = 0;
    const total = arr(spec["containers"]).length;
    const initStatuses = arr(status["initContainerStatuses"]).map(obj);
    const initCount = arr(spec["initContainers"]).length;
    let initializing = false;
    for (let i = 0; i < initStatuses.length; i++) {
      const state = obj(initStatuses[i]!["state"]);
      const terminated = state["terminated"] ? obj(state["terminated"]) : undefined;
      const waiting = state["waiting"] ? obj(state["waiting"]) : undefined;
      restarts += num(initStatuses[i]!["restartCount"]);
      if (terminated && num(terminated["exitCode"]) === 0) continue;
      initializing = true;
      if (terminated) {
        const r = str(terminated["reason"]);
        reason =
          r !== ""
            ? `Init:${r}`
            : num(terminated["signal"]) !== 0
              ? `Init:Signal:${num(terminated["signal"])}`
              : `Init:ExitCode:${num(terminated["exitCode"])}`;
      } else if (waiting && str(waiting["reason"]) !== "" && str(waiting["reason"]) !== "PodInitializing") {
        reason = `Init:${str(waiting["reason"])}`;
      } else {
        reason = `Init:${i}/${initCount}`;
      }
      break;
    }
    const initializedTrue = arr(status["conditions"])
      .map(obj)
      .some((c) => str(c["type"]) === "Initialized" && str(c["status"]) === "True");
    if (!initializing || initializedTrue) {
      restarts = 0;
      let hasRunning = false;
      const statuses = arr(status["containerStatuses"]).map(obj);
      for (let i = statuses.length - 1; i >= 0; i--) {
        const cs = statuses[i]!;
        restarts += num(cs["restartCount"]);
        const lastTerminated = obj(obj(cs["lastState"])["terminated"]);
        const finishedAt = Date.parse(str(lastTerminated["finishedAt"]));
        if (!Number.isNaN(finishedAt) && finishedAt > lastRestart) lastRestart = finishedAt;
        const state = obj(cs["state"]);
        const waiting = state["waiting"] ? obj(state["waiting"]) : undefined;
        const terminated = state["terminated"] ? obj(state["terminated"]) : undefined;
        if (waiting && str(waiting["reason"]) !== "") reason = str(waiting["reason"]);
        else if (terminated && str(terminated["reason"]) !== "") reason = str(terminated["reason"]);
        else if (terminated)
          reason =
            num(terminated["signal"]) !== 0
              ? `Signal:${num(terminated["signal"])}`
              : `ExitCode:${num(terminated["exitCode"])}`;
        else if (cs["ready"] === true && state["running"]) {
          hasRunning = true;
          ready++;
        }
      }
      if (reason === "Completed" && hasRunning) {
        const podReady = arr(status["conditions"])
          .map(obj)
          .some((c) => str(c["type"]) === "Ready" && str(c["status"]) === "True");
        reason = podReady ? "Running" : "NotReady";
      }
    }
    const deleting = meta(pod)["deletionTimestamp"] !== undefined && meta(pod)["deletionTimestamp"] !== null;
    if (deleting && str(status["reason"]) === "NodeLost") reason = "Unknown";
    else if (deleting && phase !== "Succeeded" && phase !== "Failed") reason = "Terminating";
    let restartsText = String(restarts);
    if (restarts !== 0 && lastRestart !== 0)
      restartsText = `${restarts} (${ageSince(new Date(lastRestart).toISOString(), now)} ago)`;
    const podIPs = arr(status["podIPs"]).map(obj);
    const ip = podIPs.length > 0 ? str(podIPs[0]!["ip"]) : str(status["podIP"]);
    const gates = arr(spec["readinessGates"]).map(obj);
    let gatesText = "<none>";
    if (gates.length > 0) {
      const conditions = arr(status["conditions"]).map(obj);
      const trueCount = gates.filter((g) =>
        conditions.some((c) => str(c["type"]) === str(g["conditionType"]) && str(c["status"]) === "True"),
      ).length;
      gatesText = `${trueCount}/${gates.length}`;
    }
    return [
      nameOf(pod),
      `${ready}/${total}`,
      reason,
      restartsText,
      ageOf(pod, now),
      orNone(ip),
      orNone(str(spec["nodeName"])),
      orNone(str(status["nominatedNodeName"])),
      gatesText,
    ];
  },
  conditions(pod) {
    const phase = str(obj(pod["status"])["phase"]);
    if (phase === "Succeeded")
      return [
        { type: "Completed", status: "True", reason: "Succeeded", message: "The pod has completed successfully." },
      ];
    if (phase === "Failed")
      return [{ type: "Completed", status: "True", reason: "Failed", message: "The pod failed." }];
    return undefined;
  },
};

const deploymentPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Ready", "string", "Number of the pod with ready state"),
    column(
      "Up-to-date",
      "string",
      "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
    ),
    column(
      "Available",
      "string",
      "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    ageColumn(),
    column("Containers", "string", "Names of each container in the template.", 1),
    column("Images", "string", "Images referenced by each container in the template.", 1),
    column(
      "Selector",
      "string",
      "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
      1,
    ),
  ],
  cells(d, now) {
    const spec = obj(d["spec"]);
    const status = obj(d["status"]);
    const [containers, images] = containerCells(obj(spec["template"])["spec"]);
    return [
      nameOf(d),
      `${num(status["readyReplicas"])}/${num(spec["replicas"])}`,
      num(status["updatedReplicas"]),
      num(status["availableReplicas"]),
      ageOf(d, now),
      containers,
      images,
      formatLabelSelector(spec["selector"]),
    ];
  },
};

const replicaSetPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column(
      "Desired",
      "integer",
      "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    ),
    column(
      "Current",
      "integer",
      "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    ),
    column("Ready", "integer", "The number of ready replicas for this replica set."),
    ageColumn(),
    column("Containers", "string", "Names of each container in the template.", 1),
    column("Images", "string", "Images referenced by each container in the template.", 1),
    column(
      "Selector",
      "string",
      "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
      1,
    ),
  ],
  cells(rs, now) {
    const spec = obj(rs["spec"]);
    const status = obj(rs["status"]);
    const [containers, images] = containerCells(obj(spec["template"])["spec"]);
    return [
      nameOf(rs),
      num(spec["replicas"]),
      num(status["replicas"]),
      num(status["readyReplicas"]),
      ageOf(rs, now),
      containers,
      images,
      formatLabelSelector(spec["selector"]),
    ];
  },
};

const namespacePrinter: TablePrinter = {
  columns: [nameColumn(), column("Status", "string", "The status of the namespace"), ageColumn()],
  cells: (ns, now) => [nameOf(ns), str(obj(ns["status"])["phase"]), ageOf(ns, now)],
};

const configMapPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column(
      "Data",
      "string",
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    ageColumn(),
  ],
  cells: (cm, now) => [nameOf(cm), countKeys(cm["data"]) + countKeys(cm["binaryData"]), ageOf(cm, now)],
};

const secretPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column(
      "Type",
      "string",
      "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
    ),
    column(
      "Data",
      "string",
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    ageColumn(),
  ],
  cells: (s, now) => [nameOf(s), str(s["type"]), countKeys(s["data"]), ageOf(s, now)],
};

const serviceAccountPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column(
      "Secrets",
      "string",
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret',
    ),
    ageColumn(),
  ],
  cells: (sa, now) => [nameOf(sa), arr(sa["secrets"]).length, ageOf(sa, now)],
};

function servicePorts(ports: unknown): string {
  return arr(ports)
    .map(obj)
    .map((p) => {
      const protocol = str(p["protocol"]) || "TCP";
      const nodePort = num(p["nodePort"]);
      return nodePort !== 0 ? `${num(p["port"])}:${nodePort}/${protocol}` : `${num(p["port"])}/${protocol}`;
    })
    .join(",");
}

function serviceExternalIP(svc: Json): string {
  const spec = obj(svc["spec"]);
  const externalIPs = arr(spec["externalIPs"]).map(str);
  switch (str(spec["type"]) || "ClusterIP") {
    case "ClusterIP":
    case "NodePort":
      return externalIPs.length > 0 ? externalIPs.join(",") : "<none>";
    case "LoadBalancer": {
      const ingress = arr(obj(obj(svc["status"])["loadBalancer"])["ingress"])
        .map(obj)
        .map((i) => str(i["ip"]) || str(i["hostname"]))
        .filter((s) => s !== "");
      const all = [...ingress, ...externalIPs];
      return all.length > 0 ? all.join(",") : "<pending>";
    }
    case "ExternalName":
      return str(spec["externalName"]);
    default:
      return "<unknown>";
  }
}

const servicePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column(
      "Type",
      "string",
      'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',
    ),
    column("Cluster-IP", "string", "clusterIP is the IP address of the service and is usually assigned randomly."),
    column(
      "External-IP",
      "string",
      "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
    ),
    column(
      "Port(s)",
      "string",
      "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
    ),
    ageColumn(),
    column(
      "Selector",
      "string",
      "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
      1,
    ),
  ],
  cells(svc, now) {
    const spec = obj(svc["spec"]);
    const clusterIPs = arr(spec["clusterIPs"]).map(str);
    const clusterIP = clusterIPs[0] || str(spec["clusterIP"]) || "<none>";
    return [
      nameOf(svc),
      str(spec["type"]) || "ClusterIP",
      clusterIP,
      serviceExternalIP(svc),
      orNone(servicePorts(spec["ports"])),
      ageOf(svc, now),
      formatLabels(spec["selector"]),
    ];
  },
};

const nodePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Status", "string", "The status of the node"),
    column("Roles", "string", "The roles of the node"),
    ageColumn(),
    column("Version", "string", "Kubelet Version reported by the node."),
    column(
      "Internal-IP",
      "string",
      "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).",
      1,
    ),
    column(
      "External-IP",
      "string",
      "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).",
      1,
    ),
    column(
      "OS-Image",
      "string",
      "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
      1,
    ),
    column(
      "Kernel-Version",
      "string",
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
      1,
    ),
    column(
      "Container-Runtime",
      "string",
      "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
      1,
    ),
  ],
  cells(node, now) {
    const status = obj(node["status"]);
    const conditions = arr(status["conditions"]).map(obj);
    const ready = conditions.find((c) => str(c["type"]) === "Ready");
    let state = ready === undefined ? "Unknown" : str(ready["status"]) === "True" ? "Ready" : "NotReady";
    if (obj(node["spec"])["unschedulable"] === true) state += ",SchedulingDisabled";
    const roles = new Set<string>();
    for (const [k, v] of Object.entries(obj(meta(node)["labels"]))) {
      if (k.startsWith("node-role.kubernetes.io/")) {
        const role = k.slice("node-role.kubernetes.io/".length);
        if (role !== "") roles.add(role);
      } else if (k === "kubernetes.io/role" && str(v) !== "") roles.add(str(v));
    }
    const addresses = arr(status["addresses"]).map(obj);
    const address = (type: string) => str(addresses.find((a) => str(a["type"]) === type)?.["address"]) || "<none>";
    const info = obj(status["nodeInfo"]);
    const unknown = (v: unknown) => str(v) || "<unknown>";
    return [
      nameOf(node),
      state,
      roles.size === 0 ? "<none>" : [...roles].sort().join(","),
      ageOf(node, now),
      str(info["kubeletVersion"]),
      address("InternalIP"),
      address("ExternalIP"),
      unknown(info["osImage"]),
      unknown(info["kernelVersion"]),
      unknown(info["containerRuntimeVersion"]),
    ];
  },
};

/** core/v1 Events and events.k8s.io/v1 Events share the apiserver's internal type and printer. */
function eventPrinter(v1Events: boolean): TablePrinter {
  return {
    columns: [
      column("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
      column("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future"),
      column(
        "Reason",
        "string",
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
      ),
      column("Object", "string", "The object that this event is about."),
      column(
        "Subobject",
        "string",
        'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
        1,
      ),
      column(
        "Source",
        "string",
        "The component reporting this event. Should be a short machine understandable string.",
        1,
      ),
      column("Message", "string", "A human-readable description of the status of this operation."),
      column(
        "First Seen",
        "string",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        1,
      ),
      column("Count", "string", "The number of times this event has occurred.", 1),
      column("Name", "string", NAME_DESCRIPTION, 1, "name"),
    ],
    cells(e, now) {
      const involved = obj(v1Events ? e["regarding"] : e["involvedObject"]);
      const source = obj(v1Events ? e["deprecatedSource"] : e["source"]);
      const firstTs = str(v1Events ? e["deprecatedFirstTimestamp"] : e["firstTimestamp"]);
      const lastTs = str(v1Events ? e["deprecatedLastTimestamp"] : e["lastTimestamp"]);
      let count = num(v1Events ? e["deprecatedCount"] : e["count"]);
      const first = firstTs !== "" ? ageSince(firstTs, now) : ageSince(str(e["eventTime"]) || undefined, now);
      let last = lastTs !== "" ? ageSince(lastTs, now) : first;
      const series = e["series"] ? obj(e["series"]) : undefined;
      if (series) {
        last = ageSince(str(series["lastObservedTime"]) || undefined, now);
        count = num(series["count"]);
      } else if (count === 0) count = 1;
      const kind = str(involved["kind"]).toLowerCase();
      const target = str(involved["name"]) !== "" ? `${kind}/${str(involved["name"])}` : kind;
      const component = str(source["component"]) || str(e["reportingController"]);
      const instance = str(source["host"]) || str(e["reportingInstance"]);
      return [
        last,
        str(e["type"]),
        str(e["reason"]),
        target,
        str(involved["fieldPath"]),
        instance === "" ? component : `${component}, ${instance}`,
        str(v1Events ? e["note"] : e["message"]).trim(),
        first,
        count,
        nameOf(e),
      ];
    },
  };
}

const leasePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column(
      "Holder",
      "string",
      "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
    ),
    ageColumn(),
  ],
  cells: (l, now) => [nameOf(l), str(obj(l["spec"])["holderIdentity"]), ageOf(l, now)],
};

function roleBindingPrinter(what: string): TablePrinter {
  return {
    columns: [
      nameColumn(),
      column(
        "Role",
        "string",
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.",
      ),
      ageColumn(),
      column("Users", "string", `Users in the ${what}`, 1),
      column("Groups", "string", `Groups in the ${what}`, 1),
      column("ServiceAccounts", "string", `ServiceAccounts in the ${what}`, 1),
    ],
    cells(rb, now) {
      const ref = obj(rb["roleRef"]);
      const users: string[] = [];
      const groups: string[] = [];
      const sas: string[] = [];
      for (const s of arr(rb["subjects"]).map(obj)) {
        const kind = str(s["kind"]);
        if (kind === "User") users.push(str(s["name"]));
        else if (kind === "Group") groups.push(str(s["name"]));
        else if (kind === "ServiceAccount") sas.push(`${str(s["namespace"])}/${str(s["name"])}`);
      }
      return [
        nameOf(rb),
        `${str(ref["kind"])}/${str(ref["name"])}`,
        ageOf(rb, now),
        users.join(", "),
        groups.join(", "),
        sas.join(", "),
      ];
    },
  };
}

const webhookConfigurationPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration"),
    ageColumn(),
  ],
  cells: (w, now) => [nameOf(w), arr(w["webhooks"]).length, ageOf(w, now)],
};

/** The default convertor of k8s.io/apiserver: `Name` and `Created At` (RFC 3339, not an age). */
export const defaultPrinter: TablePrinter = {
  columns: [nameColumn(), column("Created At", "date", CREATION_DESCRIPTION)],
  cells(o) {
    const created = str(meta(o)["creationTimestamp"]);
    return [nameOf(o), created === "" ? "0001-01-01T00:00:00Z" : created];
  },
};

const BUILTIN: ReadonlyMap<string, TablePrinter> = new Map([
  ["/pods", podPrinter],
  ["apps/deployments", deploymentPrinter],
  ["apps/replicasets", replicaSetPrinter],
  ["/namespaces", namespacePrinter],
  ["/configmaps", configMapPrinter],
  ["/secrets", secretPrinter],
  ["/serviceaccounts", serviceAccountPrinter],
  ["/services", servicePrinter],
  ["/nodes", nodePrinter],
  ["/events", eventPrinter(false)],
  ["events.k8s.io/events", eventPrinter(true)],
  ["coordination.k8s.io/leases", leasePrinter],
  ["rbac.authorization.k8s.io/rolebindings", roleBindingPrinter("roleBinding")],
  ["rbac.authorization.k8s.io/clusterrolebindings", roleBindingPrinter("clusterRoleBinding")],
  ["admissionregistration.k8s.io/validatingwebhookconfigurations", webhookConfigurationPrinter],
  ["admissionregistration.k8s.io/mutatingwebhookconfigurations", webhookConfigurationPrinter],
]);

/** The printer kube-apiserver uses for a built-in resource, or the default convertor. */
export function builtinPrinter(group: string, resource: string): TablePrinter {
  return BUILTIN.get(`${group}/${resource}`) ?? defaultPrinter;
}

/**
 * `cellForJSONValue`: a printer-column value converted to the column's type; anything that does
 * not match the type gives an empty (null) cell, as on a real server.
 */
export function cellForJsonValue(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null;
    case "number":
      return typeof value === "number" ? value : null;
    case "boolean":
      return typeof value === "boolean" ? value : null;
    case "string":
      return typeof value === "string" ? value : null;
    case "date": {
      if (typeof value !== "string") return null;
      if (Number.isNaN(Date.parse(value))) return "<invalid>";
      return ageSince(value, now);
    }
    default:
      return null;
  }
}

/**
 * The printer of a custom resource version. With no additionalPrinterColumns the apiserver serves
 * an implicit `Age` column (type date on .metadata.creationTimestamp). Throws when a column's
 * JSONPath does not parse (the apiserver then falls back to the default convertor; callers do too).
 */
export function customResourcePrinter(columns: readonly CustomResourceColumnDefinition[] | undefined): TablePrinter {
  const declared: CustomResourceColumnDefinition[] =
    columns && columns.length > 0
      ? [...columns]
      : [{ name: "Age", type: "date", description: CREATION_DESCRIPTION, jsonPath: ".metadata.creationTimestamp" }];
  const paths: JsonPath[] = declared.map((c) => {
    try {
      return parseJsonPath(c.jsonPath);
    } catch {
      throw new Error(`unrecognized column definition ${JSON.stringify(c.jsonPath)}`);
    }
  });
  return {
    columns: [
      nameColumn(),
      ...declared.map((c) =>
        column(
          c.name,
          c.type,
          c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
          c.priority ?? 0,
          c.format ?? "",
        ),
      ),
    ],
    cells(o, now) {
      const cells: unknown[] = [nameOf(o)];
      declared.forEach((c, i) => {
        const results = evaluateJsonPath(paths[i]!, o);
        if (results.length === 0) {
          cells.push(null);
          return;
        }
        const value = results[0];
        if (c.type === "string") cells.push(value === null || value === undefined ? null : jsonPathText(value));
        else cells.push(cellForJsonValue(c.type, value, now));
      });
      return cells;
    },
  };
}
