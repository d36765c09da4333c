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
import { ageSince, humanDuration } from "./human-duration.ts";
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

export const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
export const CREATION_DESCRIPTION =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

export function column(
  name: string,
  type: string,
  description: string,
  priority = 0,
  format = "",
): TableColumnDefinition {
  return { name, type, format, description, priority };
}
export const nameColumn = (): TableColumnDefinition => column("Name", "string", NAME_DESCRIPTION, 0, "name");
export const ageColumn = (): TableColumnDefinition => column("Age", "string", CREATION_DESCRIPTION);

// --- defensive readers -------------------------------------------------------------------------

export function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}
export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : 0;
}
export function meta(o: Json): Json {
  return obj(o["metadata"]);
}
export function nameOf(o: Json): string {
  return str(meta(o)["name"]);
}
export function ageOf(o: Json, now: number): string {
  return ageSince(str(meta(o)["creationTimestamp"]) || undefined, now);
}
function countKeys(value: unknown): number {
  return Object.keys(obj(value)).length;
}
export function orNone(value: string): string {
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

/** layoutContainerCells: the template's container names and images, comma-separated. */
export function containerCells(podSpec: unknown): [string, string] {
  const containers = arr(obj(podSpec)["containers"]).map(obj);
  return [containers.map((c) => str(c["name"])).join(","), containers.map((c) => str(c["image"])).join(",")];
}

const CONTAINERS_DESCRIPTION = "Names of each container in the template.";
const IMAGES_DESCRIPTION = "Images referenced by each container in the template.";

/**
 * The wide columns every printer of a kind with a pod template ends with: Containers and Images, then
 * Selector (described by the kind's own selector field doc) where the printer shows one.
 */
function templateColumns(selectorDescription?: string): TableColumnDefinition[] {
  const columns = [
    column("Containers", "string", CONTAINERS_DESCRIPTION, 1),
    column("Images", "string", IMAGES_DESCRIPTION, 1),
  ];
  if (selectorDescription !== undefined) columns.push(column("Selector", "string", selectorDescription, 1));
  return columns;
}

/** metav1.FormatLabelSelector: the selector string, `<none>` when it selects everything. */
function selectorCell(selector: unknown): string {
  return orNone(formatLabelSelector(selector));
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
    ...templateColumns(
      "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
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

/** The field docs a replica-count printer describes its columns with. */
interface ReplicaCountDocs {
  desired: string;
  current: string;
  ready: string;
  selector: string;
}

/**
 * printReplicaSet and printReplicationController: desired, current and ready counts, then the
 * template columns. The kinds differ in their field docs and their selector's type (a LabelSelector
 * printed by metav1.FormatLabelSelector, a plain map printed by labels.FormatLabels).
 */
function replicaCountPrinter(docs: ReplicaCountDocs, selector: (spec: Json) => string): TablePrinter {
  return {
    columns: [
      nameColumn(),
      column("Desired", "integer", docs.desired),
      column("Current", "integer", docs.current),
      column("Ready", "integer", docs.ready),
      ageColumn(),
      ...templateColumns(docs.selector),
    ],
    cells(o, now) {
      const spec = obj(o["spec"]);
      const status = obj(o["status"]);
      return [
        nameOf(o),
        num(spec["replicas"]),
        num(status["replicas"]),
        num(status["readyReplicas"]),
        ageOf(o, now),
        ...containerCells(obj(spec["template"])["spec"]),
        selector(spec),
      ];
    },
  };
}

const replicaSetPrinter = replicaCountPrinter(
  {
    desired:
      "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    current:
      "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    ready: "The number of ready replicas for this replica set.",
    selector:
      "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
  },
  (spec) => selectorCell(spec["selector"]),
);

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

/** The k8s.io/api 1.32 field docs the real printers use as column descriptions (SwaggerDoc()). */
const FIELD_DOCS = {
  "DaemonSetStatus.desiredNumberScheduled":
    "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
  "DaemonSetStatus.currentNumberScheduled":
    "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/",
  "DaemonSetStatus.numberReady":
    "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
  "DaemonSetStatus.updatedNumberScheduled": "The total number of nodes that are running updated daemon pod",
  "DaemonSetStatus.numberAvailable":
    "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
  "DaemonSetSpec.selector":
    "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
  "PodSpec.nodeSelector":
    "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
  "JobStatus.succeeded":
    "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
  "JobSpec.selector":
    "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
  "CronJobSpec.schedule": "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
  "CronJobSpec.timeZone":
    "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
  "CronJobSpec.suspend":
    "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
  "CronJobStatus.active": "A list of pointers to currently running jobs.",
  "CronJobStatus.lastScheduleTime": "Information when was the last time the job was successfully scheduled.",
  "Endpoints.subsets":
    "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.",
  "ReplicationControllerSpec.replicas":
    "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
  "ReplicationControllerStatus.replicas":
    "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
  "ReplicationControllerStatus.readyReplicas": "The number of ready replicas for this replication controller.",
  "ReplicationControllerSpec.selector":
    "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
  "PersistentVolumeSpec.capacity":
    "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
  "PersistentVolumeSpec.accessModes":
    "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes",
  "PersistentVolumeSpec.persistentVolumeReclaimPolicy":
    "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming",
  "PersistentVolumeStatus.phase":
    "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase",
  "PersistentVolumeSpec.claimRef":
    "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding",
  "PersistentVolumeStatus.reason":
    "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
  "PersistentVolumeSpec.volumeMode":
    "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.",
  "PersistentVolumeClaimStatus.phase": "phase represents the current phase of PersistentVolumeClaim.",
  "PersistentVolumeClaimSpec.volumeName":
    "volumeName is the binding reference to the PersistentVolume backing this claim.",
  "PersistentVolumeClaimStatus.capacity": "capacity represents the actual resources of the underlying volume.",
  "PersistentVolumeClaimStatus.accessModes":
    "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
  "PersistentVolumeClaimSpec.volumeMode":
    "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.",
  "NetworkPolicySpec.podSelector":
    "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.",
  "StorageClass.provisioner": "provisioner indicates the type of the provisioner.",
  "StorageClass.reclaimPolicy":
    "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
  "StorageClass.volumeBindingMode":
    "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.",
  "StorageClass.allowVolumeExpansion": "allowVolumeExpansion shows whether the storage class allow volume expand.",
  "PriorityClass.value":
    "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.",
  "PriorityClass.globalDefault":
    "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.",
  "PriorityClass.preemptionPolicy":
    "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
  "EndpointSlice.addressType":
    "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.",
  "EndpointSlice.ports":
    'ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates "all ports". Each slice may include a maximum of 100 ports.',
  "EndpointSlice.endpoints":
    "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.",
} as const;

// --- the kinds served as stored objects (no controllers): workloads, networking, storage, policy ---------

/** printBoolPtr: `<unset>` for an absent bool, else True/False. */
function boolPtrCell(value: unknown): string {
  if (typeof value !== "boolean") return "<unset>";
  return value ? "True" : "False";
}

/** An IntOrString as Go's String() prints it. */
function intOrStringCell(value: unknown): string {
  if (typeof value === "number") return String(Math.trunc(value));
  return str(value);
}

/** A list shortened to its first three entries, as the endpoints printers write it. */
function listWithMore(list: string[], total: number, empty: string): string {
  const shown = list.slice(0, 3).join(",");
  if (total > 3) return `${shown} + ${total - 3} more...`;
  return shown === "" ? empty : shown;
}

/** helper.GetAccessModesAsString: the short names in a fixed order, without duplicates. */
function accessModesCell(modes: unknown): string {
  const present = new Set(arr(modes).map(str));
  const short: Array<[string, string]> = [
    ["ReadWriteOnce", "RWO"],
    ["ReadOnlyMany", "ROX"],
    ["ReadWriteMany", "RWX"],
    ["ReadWriteOncePod", "RWOP"],
  ];
  return short
    .filter(([mode]) => present.has(mode))
    .map(([, abbreviation]) => abbreviation)
    .join(",");
}

/** The storage class of a claim or volume: the beta annotation wins over the field, as helper.Get*Class reads it. */
function storageClassOf(o: Json): string {
  const annotation = obj(meta(o)["annotations"])["volume.beta.kubernetes.io/storage-class"];
  if (typeof annotation === "string") return annotation;
  return str(obj(o["spec"])["storageClassName"]);
}

const statefulSetPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Ready", "string", "Number of the pod with ready state"),
    ageColumn(),
    ...templateColumns(),
  ],
  cells(sts, now) {
    const spec = obj(sts["spec"]);
    const [containers, images] = containerCells(obj(spec["template"])["spec"]);
    return [
      nameOf(sts),
      `${num(obj(sts["status"])["readyReplicas"])}/${num(spec["replicas"])}`,
      ageOf(sts, now),
      containers,
      images,
    ];
  },
};

const daemonSetPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Desired", "integer", FIELD_DOCS["DaemonSetStatus.desiredNumberScheduled"]),
    column("Current", "integer", FIELD_DOCS["DaemonSetStatus.currentNumberScheduled"]),
    column("Ready", "integer", FIELD_DOCS["DaemonSetStatus.numberReady"]),
    column("Up-to-date", "integer", FIELD_DOCS["DaemonSetStatus.updatedNumberScheduled"]),
    column("Available", "integer", FIELD_DOCS["DaemonSetStatus.numberAvailable"]),
    column("Node Selector", "string", FIELD_DOCS["PodSpec.nodeSelector"]),
    ageColumn(),
    ...templateColumns(FIELD_DOCS["DaemonSetSpec.selector"]),
  ],
  cells(ds, now) {
    const spec = obj(ds["spec"]);
    const status = obj(ds["status"]);
    const podSpec = obj(obj(spec["template"])["spec"]);
    const [containers, images] = containerCells(podSpec);
    return [
      nameOf(ds),
      num(status["desiredNumberScheduled"]),
      num(status["currentNumberScheduled"]),
      num(status["numberReady"]),
      num(status["updatedNumberScheduled"]),
      num(status["numberAvailable"]),
      formatLabels(podSpec["nodeSelector"]),
      ageOf(ds, now),
      containers,
      images,
      selectorCell(spec["selector"]),
    ];
  },
};

/** hasJobCondition: a condition of that type with status True. */
function hasTrueCondition(status: Json, type: string): boolean {
  return arr(status["conditions"]).some((c) => str(obj(c)["type"]) === type && str(obj(c)["status"]) === "True");
}

/** The Job printer's Status column, in its order of precedence. */
function jobStatus(job: Json): string {
  const status = obj(job["status"]);
  if (hasTrueCondition(status, "Complete")) return "Complete";
  if (hasTrueCondition(status, "Failed")) return "Failed";
  if (meta(job)["deletionTimestamp"]) return "Terminating";
  if (hasTrueCondition(status, "Suspended")) return "Suspended";
  if (hasTrueCondition(status, "FailureTarget")) return "FailureTarget";
  return "Running";
}

const jobPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Status", "string", "Status of the job."),
    column("Completions", "string", FIELD_DOCS["JobStatus.succeeded"]),
    column("Duration", "string", "Time required to complete the job."),
    ageColumn(),
    ...templateColumns(FIELD_DOCS["JobSpec.selector"]),
  ],
  cells(job, now) {
    const spec = obj(job["spec"]);
    const status = obj(job["status"]);
    const succeeded = num(status["succeeded"]);
    let completions: string;
    if (typeof spec["completions"] === "number") completions = `${succeeded}/${num(spec["completions"])}`;
    else if (num(spec["parallelism"]) > 1) completions = `${succeeded}/1 of ${num(spec["parallelism"])}`;
    else completions = `${succeeded}/1`;
    const start = Date.parse(str(status["startTime"]));
    const end = Date.parse(str(status["completionTime"]));
    let duration = "";
    if (!Number.isNaN(start)) duration = humanDuration((Number.isNaN(end) ? now : end) - start);
    const [containers, images] = containerCells(obj(spec["template"])["spec"]);
    return [
      nameOf(job),
      jobStatus(job),
      completions,
      duration,
      ageOf(job, now),
      containers,
      images,
      selectorCell(spec["selector"]),
    ];
  },
};

const cronJobPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Schedule", "string", FIELD_DOCS["CronJobSpec.schedule"]),
    column("Timezone", "string", FIELD_DOCS["CronJobSpec.timeZone"]),
    column("Suspend", "boolean", FIELD_DOCS["CronJobSpec.suspend"]),
    column("Active", "integer", FIELD_DOCS["CronJobStatus.active"]),
    column("Last Schedule", "string", FIELD_DOCS["CronJobStatus.lastScheduleTime"]),
    ageColumn(),
    ...templateColumns(FIELD_DOCS["JobSpec.selector"]),
  ],
  cells(cj, now) {
    const spec = obj(cj["spec"]);
    const status = obj(cj["status"]);
    const jobSpec = obj(obj(spec["jobTemplate"])["spec"]);
    const [containers, images] = containerCells(obj(jobSpec["template"])["spec"]);
    const last = str(status["lastScheduleTime"]);
    return [
      nameOf(cj),
      str(spec["schedule"]),
      typeof spec["timeZone"] === "string" ? spec["timeZone"] : "<none>",
      boolPtrCell(spec["suspend"]),
      arr(status["active"]).length,
      last === "" ? "<none>" : ageSince(last, now),
      ageOf(cj, now),
      containers,
      images,
      selectorCell(jobSpec["selector"]),
    ];
  },
};

/** formatHosts: up to three rules' hosts, `* + N more...` past them, `*` when none names one. */
function ingressHosts(rules: unknown): string {
  const all = arr(rules).map(obj);
  const hosts: string[] = [];
  let more = false;
  for (const rule of all) {
    if (hosts.length === 3) more = true;
    if (!more && str(rule["host"]) !== "") hosts.push(str(rule["host"]));
  }
  if (hosts.length === 0) return "*";
  return more ? `${hosts.join(",")} + ${all.length - 3} more...` : hosts.join(",");
}

/** The load balancer's IPs (or host names), sorted and unique, as the ingress printer lists them. */
function ingressAddress(status: Json): string {
  const seen = new Set<string>();
  for (const entry of arr(obj(status["loadBalancer"])["ingress"]).map(obj)) {
    const value = str(entry["ip"]) || str(entry["hostname"]);
    if (value !== "") seen.add(value);
  }
  return [...seen].sort().join(",");
}

const ingressPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
    column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
    column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
    column("Ports", "string", "Ports of TLS configurations that open"),
    ageColumn(),
  ],
  cells(ing, now) {
    const spec = obj(ing["spec"]);
    return [
      nameOf(ing),
      typeof spec["ingressClassName"] === "string" ? spec["ingressClassName"] : "<none>",
      ingressHosts(spec["rules"]),
      ingressAddress(obj(ing["status"])),
      arr(spec["tls"]).length > 0 ? "80, 443" : "80",
      ageOf(ing, now),
    ];
  },
};

const ingressClassPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Controller", "string", "Controller that is responsible for handling this class"),
    column("Parameters", "string", "A reference to a resource with additional parameters"),
    ageColumn(),
  ],
  cells(ic, now) {
    const spec = obj(ic["spec"]);
    let parameters = "<none>";
    if (spec["parameters"] !== undefined && spec["parameters"] !== null) {
      const p = obj(spec["parameters"]);
      const group = typeof p["apiGroup"] === "string" ? `.${p["apiGroup"]}` : "";
      parameters = `${str(p["kind"])}${group}/${str(p["name"])}`;
    }
    return [nameOf(ic), str(spec["controller"]), parameters, ageOf(ic, now)];
  },
};

const networkPolicyPrinter: TablePrinter = {
  columns: [nameColumn(), column("Pod-Selector", "string", FIELD_DOCS["NetworkPolicySpec.podSelector"]), ageColumn()],
  cells: (np, now) => [nameOf(np), selectorCell(obj(np["spec"])["podSelector"]), ageOf(np, now)],
};

const persistentVolumeClaimPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Status", "string", FIELD_DOCS["PersistentVolumeClaimStatus.phase"]),
    column("Volume", "string", FIELD_DOCS["PersistentVolumeClaimSpec.volumeName"]),
    column("Capacity", "string", FIELD_DOCS["PersistentVolumeClaimStatus.capacity"]),
    column("Access Modes", "string", FIELD_DOCS["PersistentVolumeClaimStatus.accessModes"]),
    column("StorageClass", "string", "StorageClass of the pvc"),
    column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
    ageColumn(),
    column("VolumeMode", "string", FIELD_DOCS["PersistentVolumeClaimSpec.volumeMode"], 1),
  ],
  cells(pvc, now) {
    const spec = obj(pvc["spec"]);
    const status = obj(pvc["status"]);
    const phase = meta(pvc)["deletionTimestamp"] ? "Terminating" : str(status["phase"]);
    const bound = str(spec["volumeName"]) !== "";
    return [
      nameOf(pvc),
      phase,
      str(spec["volumeName"]),
      // Capacity and access modes are the bound volume's: empty until the claim is bound.
      bound ? str(obj(status["capacity"])["storage"]) || "0" : "",
      bound ? accessModesCell(status["accessModes"]) : "",
      storageClassOf(pvc),
      typeof spec["volumeAttributesClassName"] === "string" ? spec["volumeAttributesClassName"] : "<unset>",
      ageOf(pvc, now),
      typeof spec["volumeMode"] === "string" ? spec["volumeMode"] : "<unset>",
    ];
  },
};

const persistentVolumePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Capacity", "string", FIELD_DOCS["PersistentVolumeSpec.capacity"]),
    column("Access Modes", "string", FIELD_DOCS["PersistentVolumeSpec.accessModes"]),
    column("Reclaim Policy", "string", FIELD_DOCS["PersistentVolumeSpec.persistentVolumeReclaimPolicy"]),
    column("Status", "string", FIELD_DOCS["PersistentVolumeStatus.phase"]),
    column("Claim", "string", FIELD_DOCS["PersistentVolumeSpec.claimRef"]),
    column("StorageClass", "string", "StorageClass of the pv"),
    column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
    column("Reason", "string", FIELD_DOCS["PersistentVolumeStatus.reason"]),
    ageColumn(),
    column("VolumeMode", "string", FIELD_DOCS["PersistentVolumeSpec.volumeMode"], 1),
  ],
  cells(pv, now) {
    const spec = obj(pv["spec"]);
    const status = obj(pv["status"]);
    const claim = spec["claimRef"]
      ? `${str(obj(spec["claimRef"])["namespace"])}/${str(obj(spec["claimRef"])["name"])}`
      : "";
    return [
      nameOf(pv),
      str(obj(spec["capacity"])["storage"]) || "0",
      accessModesCell(spec["accessModes"]),
      str(spec["persistentVolumeReclaimPolicy"]),
      meta(pv)["deletionTimestamp"] ? "Terminating" : str(status["phase"]),
      claim,
      storageClassOf(pv),
      typeof spec["volumeAttributesClassName"] === "string" ? spec["volumeAttributesClassName"] : "<unset>",
      str(status["reason"]),
      ageOf(pv, now),
      typeof spec["volumeMode"] === "string" ? spec["volumeMode"] : "<unset>",
    ];
  },
};

/** formatEndpoints: the first three `ip:port` pairs (bare IPs for port-less subsets), `<none>` without subsets. */
function endpointsCell(subsets: unknown): string {
  const all = arr(subsets).map(obj);
  if (all.length === 0) return "<none>";
  const list: string[] = [];
  let total = 0;
  for (const subset of all) {
    const ips = arr(subset["addresses"]).map((a) => str(obj(a)["ip"]));
    const ports = arr(subset["ports"]).map(obj);
    if (ports.length === 0) {
      total += ips.length;
      list.push(...ips);
      continue;
    }
    for (const port of ports) {
      total += ips.length;
      for (const ip of ips) list.push(ip.includes(":") ? `[${ip}]:${num(port["port"])}` : `${ip}:${num(port["port"])}`);
    }
  }
  return listWithMore(list, total, "");
}

const endpointsPrinter: TablePrinter = {
  columns: [nameColumn(), column("Endpoints", "string", FIELD_DOCS["Endpoints.subsets"]), ageColumn()],
  cells: (ep, now) => [nameOf(ep), endpointsCell(ep["subsets"]), ageOf(ep, now)],
};

const endpointSlicePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("AddressType", "string", FIELD_DOCS["EndpointSlice.addressType"]),
    column("Ports", "string", FIELD_DOCS["EndpointSlice.ports"]),
    column("Endpoints", "string", FIELD_DOCS["EndpointSlice.endpoints"]),
    ageColumn(),
  ],
  cells(slice, now) {
    const ports = arr(slice["ports"]).map((p) => {
      const port = obj(p);
      if (typeof port["port"] === "number") return String(port["port"]);
      return typeof port["name"] === "string" ? port["name"] : "*";
    });
    const addresses = arr(slice["endpoints"]).flatMap((e) => arr(obj(e)["addresses"]).map(str));
    return [
      nameOf(slice),
      str(slice["addressType"]),
      listWithMore(ports, ports.length, "<unset>"),
      listWithMore(addresses, addresses.length, "<unset>"),
      ageOf(slice, now),
    ];
  },
};

const replicationControllerPrinter = replicaCountPrinter(
  {
    desired: FIELD_DOCS["ReplicationControllerSpec.replicas"],
    current: FIELD_DOCS["ReplicationControllerStatus.replicas"],
    ready: FIELD_DOCS["ReplicationControllerStatus.readyReplicas"],
    selector: FIELD_DOCS["ReplicationControllerSpec.selector"],
  },
  (spec) => formatLabels(spec["selector"]),
);

const resourceQuotaPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
    column(
      "Limit",
      "string",
      "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
    ),
    ageColumn(),
  ],
  cells(quota, now) {
    const status = obj(quota["status"]);
    const hard = obj(status["hard"]);
    const used = obj(status["used"]);
    const requests: string[] = [];
    const limits: string[] = [];
    for (const resource of Object.keys(hard).sort()) {
      const entry = `${resource}: ${str(used[resource]) || "0"}/${str(hard[resource]) || "0"}`;
      (resource.startsWith("limits.") ? limits : requests).push(entry);
    }
    return [nameOf(quota), requests.join(", "), limits.join(", "), ageOf(quota, now)];
  },
};

const podDisruptionBudgetPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Min Available", "string", "The minimum number of pods that must be available."),
    column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
    column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
    ageColumn(),
  ],
  cells(pdb, now) {
    const spec = obj(pdb["spec"]);
    const bound = (value: unknown) => (value === undefined || value === null ? "N/A" : intOrStringCell(value));
    return [
      nameOf(pdb),
      bound(spec["minAvailable"]),
      bound(spec["maxUnavailable"]),
      num(obj(pdb["status"])["disruptionsAllowed"]),
      ageOf(pdb, now),
    ];
  },
};

const storageClassPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Provisioner", "string", FIELD_DOCS["StorageClass.provisioner"]),
    column("ReclaimPolicy", "string", FIELD_DOCS["StorageClass.reclaimPolicy"]),
    column("VolumeBindingMode", "string", FIELD_DOCS["StorageClass.volumeBindingMode"]),
    column("AllowVolumeExpansion", "string", FIELD_DOCS["StorageClass.allowVolumeExpansion"]),
    ageColumn(),
  ],
  cells(sc, now) {
    const annotations = obj(meta(sc)["annotations"]);
    const isDefault =
      annotations["storageclass.kubernetes.io/is-default-class"] === "true" ||
      annotations["storageclass.beta.kubernetes.io/is-default-class"] === "true";
    return [
      isDefault ? `${nameOf(sc)} (default)` : nameOf(sc),
      str(sc["provisioner"]),
      str(sc["reclaimPolicy"]) || "Delete",
      str(sc["volumeBindingMode"]) || "Immediate",
      sc["allowVolumeExpansion"] === true,
      ageOf(sc, now),
    ];
  },
};

const priorityClassPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Value", "integer", FIELD_DOCS["PriorityClass.value"]),
    column("Global-Default", "boolean", FIELD_DOCS["PriorityClass.globalDefault"]),
    ageColumn(),
    column("PreemptionPolicy", "string", FIELD_DOCS["PriorityClass.preemptionPolicy"]),
  ],
  cells: (pc, now) => [
    nameOf(pc),
    num(pc["value"]),
    pc["globalDefault"] === true,
    ageOf(pc, now),
    typeof pc["preemptionPolicy"] === "string" ? pc["preemptionPolicy"] : "<unset>",
  ],
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
  ["apps/statefulsets", statefulSetPrinter],
  ["apps/daemonsets", daemonSetPrinter],
  ["batch/jobs", jobPrinter],
  ["batch/cronjobs", cronJobPrinter],
  ["networking.k8s.io/ingresses", ingressPrinter],
  ["networking.k8s.io/ingressclasses", ingressClassPrinter],
  ["networking.k8s.io/networkpolicies", networkPolicyPrinter],
  ["/persistentvolumeclaims", persistentVolumeClaimPrinter],
  ["/persistentvolumes", persistentVolumePrinter],
  ["/endpoints", endpointsPrinter],
  ["/replicationcontrollers", replicationControllerPrinter],
  ["/resourcequotas", resourceQuotaPrinter],
  ["policy/poddisruptionbudgets", podDisruptionBudgetPrinter],
  ["discovery.k8s.io/endpointslices", endpointSlicePrinter],
  ["storage.k8s.io/storageclasses", storageClassPrinter],
  ["scheduling.k8s.io/priorityclasses", priorityClassPrinter],
  // LimitRanges have no printer: the default convertor's Name / Created At, as `kubectl get limits` shows.
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
