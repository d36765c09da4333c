/**
 * The scheme's defaults of the built-in kinds (k8s.io/kubernetes pkg/apis/<group>/v1/defaults.go,
 * `SetDefaults_*`): kube-apiserver applies them whenever it decodes an object, so on every write —
 * create, update, each patch type and apply — not only on create. A merge patch that replaces a
 * Deployment's containers, or a JSON patch that removes its strategy, gets them filled in again.
 *
 * What only a create does (a pod's `Pending` phase, a namespace's `kubernetes` finalizer, a service's
 * cluster IP, pod priority from admission) is not here: builtins.ts keeps it as `defaultOnCreate`.
 *
 * Guarantees: each function only fills fields that are unset as Go sees them (a nil pointer: absent,
 * `??=`; a string: absent or empty, `||=`), so a stored object defaulted before is unchanged, and a
 * write that changes nothing stays a no-op.
 */
import type { JsonObject } from "./served-resource.ts";

/** The object at `obj[key]`, created empty when absent or not an object. */
function record(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = obj[key];
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  obj[key] = fresh;
  return fresh;
}

function objectsOf(list: unknown): Record<string, unknown>[] {
  if (!Array.isArray(list)) return [];
  return list.filter((x): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x));
}

/**
 * SetDefaults_Container's pull policy: Always when parsers.ParseImageName finds the tag `latest` (given,
 * or implied by an image with neither tag nor digest), else IfNotPresent. An image that does not parse,
 * such as the empty image a workload's template may leave to be filled in later, has no tag.
 */
function pullPolicyOf(image: string): string {
  if (image === "") return "IfNotPresent";
  const at = image.indexOf("@");
  const named = at === -1 ? image : image.slice(0, at);
  const colon = named.lastIndexOf(":");
  const tag = colon > named.lastIndexOf("/") ? named.slice(colon + 1) : "";
  return tag === "latest" || (tag === "" && at === -1) ? "Always" : "IfNotPresent";
}

/** A nested object, when it is one: the defaults of optional structs apply only where they are given. */
function objectAt(obj: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const value = obj[key];
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** SetDefaults_HTTPGetAction (and the GRPCAction's declarative default): of a probe or a lifecycle hook. */
function defaultHandler(handler: Record<string, unknown> | undefined): void {
  const httpGet = handler && objectAt(handler, "httpGet");
  if (httpGet) {
    httpGet["path"] ||= "/";
    httpGet["scheme"] ||= "HTTP";
  }
  const grpc = handler && objectAt(handler, "grpc");
  if (grpc) grpc["service"] ??= "";
}

/** SetDefaults_Probe: one-second timeout, every ten seconds, one success, three failures. */
function defaultProbe(probe: Record<string, unknown> | undefined): void {
  if (!probe) return;
  probe["timeoutSeconds"] ||= 1;
  probe["periodSeconds"] ||= 10;
  probe["successThreshold"] ||= 1;
  probe["failureThreshold"] ||= 3;
  defaultHandler(probe);
}

/** SetDefaults_ObjectFieldSelector: a downward-API field reference reads the v1 object. */
function defaultFieldRef(holder: Record<string, unknown> | undefined): void {
  const fieldRef = holder && objectAt(holder, "fieldRef");
  if (fieldRef) fieldRef["apiVersion"] ||= "v1";
}

/** The default file mode of secret, config map, downward-API and projected volumes: 0644. */
const VOLUME_DEFAULT_MODE = 0o644;

/** ServiceAccountTokenProjection's default expiry: one hour. */
const PROJECTED_TOKEN_SECONDS = 3600;

/** The volume sources a volume can have; one without any is an emptyDir (SetDefaults_Volume). */
const VOLUME_SOURCES = [
  "hostPath",
  "emptyDir",
  "gcePersistentDisk",
  "awsElasticBlockStore",
  "gitRepo",
  "secret",
  "nfs",
  "iscsi",
  "glusterfs",
  "persistentVolumeClaim",
  "rbd",
  "flexVolume",
  "cinder",
  "cephfs",
  "flocker",
  "downwardAPI",
  "fc",
  "azureFile",
  "configMap",
  "vsphereVolume",
  "quobyte",
  "azureDisk",
  "photonPersistentDisk",
  "projected",
  "portworxVolume",
  "scaleIO",
  "storageos",
  "csi",
  "ephemeral",
  "image",
];

/**
 * SetDefaults_Volume and its sources' defaults: an emptyDir when no source is given, file modes,
 * hostPath's unset type, downward-API field references, projected token expiry. Caveat: the
 * declarative defaults of the legacy in-tree sources (rbd, iscsi, azureDisk, scaleIO) are not applied.
 */
function defaultVolume(volume: Record<string, unknown>): void {
  if (!VOLUME_SOURCES.some((source) => volume[source] !== undefined && volume[source] !== null))
    volume["emptyDir"] = {};
  const hostPath = objectAt(volume, "hostPath");
  if (hostPath) hostPath["type"] ??= "";
  for (const source of ["secret", "configMap", "downwardAPI", "projected"]) {
    const fileSource = objectAt(volume, source);
    if (fileSource) fileSource["defaultMode"] ??= VOLUME_DEFAULT_MODE;
  }
  for (const item of objectsOf(objectAt(volume, "downwardAPI")?.["items"])) defaultFieldRef(item);
  for (const projection of objectsOf(objectAt(volume, "projected")?.["sources"])) {
    for (const item of objectsOf(objectAt(projection, "downwardAPI")?.["items"])) defaultFieldRef(item);
    const token = objectAt(projection, "serviceAccountToken");
    if (token) token["expirationSeconds"] ??= PROJECTED_TOKEN_SECONDS;
  }
}

/** SetDefaults_Container (and the same for init containers): what every container gets. */
function defaultContainer(c: Record<string, unknown>): void {
  c["terminationMessagePath"] ||= "/dev/termination-log";
  c["terminationMessagePolicy"] ||= "File";
  c["resources"] ??= {};
  for (const port of objectsOf(c["ports"])) port["protocol"] ||= "TCP";
  c["imagePullPolicy"] ||= pullPolicyOf(typeof c["image"] === "string" ? c["image"] : "");
  for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) defaultProbe(objectAt(c, probe));
  const lifecycle = objectAt(c, "lifecycle");
  if (lifecycle) for (const hook of ["postStart", "preStop"]) defaultHandler(objectAt(lifecycle, hook));
  for (const env of objectsOf(c["env"])) defaultFieldRef(objectAt(env, "valueFrom"));
}

/** SetDefaults_PodSpec and the containers': shared by pods and pod templates. */
export function defaultPodSpec(spec: Record<string, unknown>): void {
  spec["restartPolicy"] ||= "Always";
  spec["terminationGracePeriodSeconds"] ??= 30;
  spec["dnsPolicy"] ||= "ClusterFirst";
  spec["schedulerName"] ||= "default-scheduler";
  spec["securityContext"] ??= {};
  for (const key of ["containers", "initContainers", "ephemeralContainers"]) {
    for (const c of objectsOf(spec[key])) defaultContainer(c);
  }
  for (const volume of objectsOf(spec["volumes"])) defaultVolume(volume);
}

/**
 * Pods: the pod spec's defaults and SetDefaults_Pod's, which pod templates do not get: a container's
 * requests default to its limits, enableServiceLinks, and host ports from container ports on the
 * host network. Caveat: pod-level resources (alpha in 1.32) are not defaulted.
 */
export function defaultPod(pod: JsonObject): void {
  const spec = record(pod, "spec");
  defaultPodSpec(spec);
  const containers = [...objectsOf(spec["containers"]), ...objectsOf(spec["initContainers"])];
  for (const c of containers) {
    const limits = record(c, "resources")["limits"];
    if (limits === null || typeof limits !== "object" || Array.isArray(limits)) continue;
    const requests = record(record(c, "resources"), "requests");
    for (const [name, quantity] of Object.entries(limits)) requests[name] ??= quantity;
  }
  spec["enableServiceLinks"] ??= true;
  if (spec["hostNetwork"] === true) {
    for (const c of containers) {
      for (const port of objectsOf(c["ports"])) {
        if (port["hostPort"] === undefined || port["hostPort"] === 0) port["hostPort"] = port["containerPort"];
      }
    }
  }
}

/** The pod template at `spec.template`, if any: its spec gets the pod spec's defaults. */
function defaultPodTemplateOf(spec: Record<string, unknown>): void {
  const templateSpec = objectAt(objectAt(spec, "template") ?? {}, "spec");
  if (templateSpec) defaultPodSpec(templateSpec);
}

/**
 * The labels of the pod template at `spec.template`, when it has some. Go copies a non-nil empty map
 * too, but that serializes as nothing (omitempty), so an empty one counts as none here.
 */
function templateLabelsOf(spec: Record<string, unknown>): Record<string, unknown> | undefined {
  const labels = objectAt(objectAt(objectAt(spec, "template") ?? {}, "metadata") ?? {}, "labels");
  return labels && Object.keys(labels).length > 0 ? labels : undefined;
}

/** Go's `len(m) == 0` for a map field: absent, null or without keys. */
function isEmptyMap(value: unknown): boolean {
  return value === undefined || value === null || Object.keys(value as object).length === 0;
}

/** SetObjectDefaults_PodTemplate: the pod spec's defaults for the template (a PodTemplate's `template`). */
export function defaultPodTemplate(template: JsonObject): void {
  defaultPodTemplateOf(template);
}

/** SetDefaults_Deployment (apps/v1) and its pod template's defaults. */
export function defaultDeployment(deploy: JsonObject): void {
  const spec = record(deploy, "spec");
  spec["replicas"] ??= 1;
  spec["revisionHistoryLimit"] ??= 10;
  spec["progressDeadlineSeconds"] ??= 600;
  const strategy = record(spec, "strategy");
  strategy["type"] ??= "RollingUpdate";
  if (strategy["type"] === "RollingUpdate") {
    const rolling = record(strategy, "rollingUpdate");
    rolling["maxUnavailable"] ??= "25%";
    rolling["maxSurge"] ??= "25%";
  }
  defaultPodTemplateOf(spec);
}

/** SetDefaults_ReplicaSet (apps/v1) and its pod template's defaults. */
export function defaultReplicaSet(rs: JsonObject): void {
  const spec = record(rs, "spec");
  spec["replicas"] ??= 1;
  defaultPodTemplateOf(spec);
}

/** SetDefaults_Secret. */
export function defaultSecret(secret: JsonObject): void {
  secret["type"] ||= "Opaque";
  // Conversion to the internal type (Convert_v1_Secret_To_core_Secret): stringData overwrites data's
  // keys and is gone; the Secret is written and read back without it.
  const stringData = secret["stringData"];
  if (stringData !== null && typeof stringData === "object" && !Array.isArray(stringData)) {
    const entries = Object.entries(stringData as Record<string, unknown>);
    if (entries.length > 0) {
      const data = record(secret, "data");
      for (const [key, value] of entries)
        data[key] = Buffer.from(typeof value === "string" ? value : "").toString("base64");
    }
  }
  delete secret["stringData"];
}

/** SetDefaults_Namespace: every namespace carries its own name as a label (NamespaceDefaultLabelName). */
export function defaultNamespace(ns: JsonObject): void {
  const meta = record(ns, "metadata");
  if (typeof meta["name"] !== "string") return;
  record(meta, "labels")["kubernetes.io/metadata.name"] = meta["name"];
}

/** v1.DefaultClientIPServiceAffinitySeconds: three hours. */
const CLIENT_IP_AFFINITY_SECONDS = 10800;

/**
 * SetDefaults_Service: type, session affinity (and its config: dropped for None, a 3-hour timeout for
 * ClientIP), port protocol and target port, the traffic policies, and for LoadBalancers node-port
 * allocation and the VIP ipMode of their ingress IPs.
 */
export function defaultService(svc: JsonObject): void {
  const spec = record(svc, "spec");
  spec["sessionAffinity"] ||= "None";
  if (spec["sessionAffinity"] === "None") delete spec["sessionAffinityConfig"];
  if (spec["sessionAffinity"] === "ClientIP") {
    const config = spec["sessionAffinityConfig"] as { clientIP?: { timeoutSeconds?: unknown } } | null | undefined;
    if (config?.clientIP?.timeoutSeconds === undefined || config.clientIP.timeoutSeconds === null) {
      spec["sessionAffinityConfig"] = { clientIP: { timeoutSeconds: CLIENT_IP_AFFINITY_SECONDS } };
    }
  }
  spec["type"] ||= "ClusterIP";
  for (const p of objectsOf(spec["ports"])) {
    p["protocol"] ||= "TCP";
    if (p["targetPort"] === undefined || p["targetPort"] === 0 || p["targetPort"] === "") p["targetPort"] = p["port"];
  }
  const type = spec["type"];
  const externalIPs = spec["externalIPs"];
  // service.ExternallyAccessible: a LoadBalancer, a NodePort, or a ClusterIP with external IPs.
  const externallyAccessible =
    type === "LoadBalancer" ||
    type === "NodePort" ||
    (type === "ClusterIP" && Array.isArray(externalIPs) && externalIPs.length > 0);
  if (externallyAccessible) spec["externalTrafficPolicy"] ||= "Cluster";
  if (type === "ClusterIP" || type === "NodePort" || type === "LoadBalancer")
    spec["internalTrafficPolicy"] ??= "Cluster";
  if (type === "LoadBalancer") {
    spec["allocateLoadBalancerNodePorts"] ??= true;
    const ingress = (svc["status"] as { loadBalancer?: { ingress?: unknown } } | undefined)?.loadBalancer?.ingress;
    for (const entry of objectsOf(ingress)) {
      if (typeof entry["ip"] === "string" && entry["ip"] !== "") entry["ipMode"] ??= "VIP";
    }
  }
}

/** SetDefaults_StatefulSet (apps/v1, StatefulSetAutoDeletePVC on since 1.27) and its pod template's defaults. */
export function defaultStatefulSet(sts: JsonObject): void {
  const spec = record(sts, "spec");
  spec["podManagementPolicy"] ??= "OrderedReady";
  const strategy = record(spec, "updateStrategy");
  if (strategy["type"] === undefined || strategy["type"] === "") {
    strategy["type"] = "RollingUpdate";
    record(strategy, "rollingUpdate");
  }
  const rolling = strategy["rollingUpdate"];
  if (strategy["type"] === "RollingUpdate" && rolling !== null && typeof rolling === "object") {
    (rolling as Record<string, unknown>)["partition"] ??= 0;
  }
  const retention = record(spec, "persistentVolumeClaimRetentionPolicy");
  retention["whenDeleted"] ||= "Retain";
  retention["whenScaled"] ||= "Retain";
  spec["replicas"] ??= 1;
  spec["revisionHistoryLimit"] ??= 10;
  defaultPodTemplateOf(spec);
}

/** SetDefaults_DaemonSet (apps/v1) and its pod template's defaults. */
export function defaultDaemonSet(ds: JsonObject): void {
  const spec = record(ds, "spec");
  const strategy = record(spec, "updateStrategy");
  strategy["type"] ||= "RollingUpdate";
  if (strategy["type"] === "RollingUpdate") {
    const rolling = record(strategy, "rollingUpdate");
    rolling["maxUnavailable"] ??= 1;
    rolling["maxSurge"] ??= 0;
  }
  spec["revisionHistoryLimit"] ??= 10;
  defaultPodTemplateOf(spec);
}

/** Go's math.MaxInt32: the backoffLimit of a job that limits backoff per index instead. */
const MAX_INT32 = 2147483647;

/**
 * SetDefaults_Job (batch/v1 in 1.32, JobPodReplacementPolicy and JobBackoffLimitPerIndex beta and on)
 * and its pod template's defaults. Caveat: the job's labels copy the template's labels only when the
 * template has some; the create-time selector and labels are in builtins.ts (they need the UID).
 */
export function defaultJob(job: JsonObject): void {
  const spec = record(job, "spec");
  if (spec["completions"] === undefined && spec["parallelism"] === undefined) {
    spec["completions"] = 1;
    spec["parallelism"] = 1;
  }
  spec["parallelism"] ??= 1;
  spec["backoffLimit"] ??= spec["backoffLimitPerIndex"] !== undefined ? MAX_INT32 : 6;
  const templateLabels = templateLabelsOf(spec);
  const meta = record(job, "metadata");
  if (templateLabels && isEmptyMap(meta["labels"])) meta["labels"] = structuredClone(templateLabels);
  spec["completionMode"] ??= "NonIndexed";
  spec["suspend"] ??= false;
  spec["podReplacementPolicy"] ??= spec["podFailurePolicy"] !== undefined ? "Failed" : "TerminatingOrFailed";
  for (const rule of objectsOf((spec["podFailurePolicy"] as Record<string, unknown> | undefined)?.["rules"])) {
    for (const pattern of objectsOf(rule["onPodConditions"])) pattern["status"] ??= "True";
  }
  defaultPodTemplateOf(spec);
}

/** SetDefaults_CronJob (batch/v1) and its job template's pod template defaults. */
export function defaultCronJob(cj: JsonObject): void {
  const spec = record(cj, "spec");
  spec["concurrencyPolicy"] ||= "Allow";
  spec["suspend"] ??= false;
  spec["successfulJobsHistoryLimit"] ??= 3;
  spec["failedJobsHistoryLimit"] ??= 1;
  const jobSpec = objectAt(objectAt(spec, "jobTemplate") ?? {}, "spec");
  if (jobSpec) defaultPodTemplateOf(jobSpec);
}

/** SetDefaults_ReplicationController: selector and labels from the template's labels, one replica. */
export function defaultReplicationController(rc: JsonObject): void {
  const spec = record(rc, "spec");
  const labels = templateLabelsOf(spec);
  if (labels) {
    if (isEmptyMap(spec["selector"])) spec["selector"] = structuredClone(labels);
    const meta = record(rc, "metadata");
    if (isEmptyMap(meta["labels"])) meta["labels"] = structuredClone(labels);
  }
  spec["replicas"] ??= 1;
  defaultPodTemplateOf(spec);
}

/** SetDefaults_PersistentVolumeClaim(+Spec, +Status): filesystem volumes, Pending until bound. */
export function defaultPersistentVolumeClaim(pvc: JsonObject): void {
  record(pvc, "spec")["volumeMode"] ??= "Filesystem";
  record(pvc, "status")["phase"] ||= "Pending";
}

/** SetDefaults_PersistentVolume(+Spec, +Status): Retain, filesystem volumes, Pending until available. */
export function defaultPersistentVolume(pv: JsonObject): void {
  const spec = record(pv, "spec");
  spec["persistentVolumeReclaimPolicy"] ||= "Retain";
  spec["volumeMode"] ??= "Filesystem";
  record(pv, "status")["phase"] ||= "Pending";
}

/** SetDefaults_Endpoints: every port's protocol is TCP unless given. */
export function defaultEndpoints(ep: JsonObject): void {
  for (const subset of objectsOf(ep["subsets"])) {
    for (const port of objectsOf(subset["ports"])) port["protocol"] ||= "TCP";
  }
}

/** SetDefaults_LimitRangeItem: for containers, default limit from max, default request from limit then min. */
export function defaultLimitRange(lr: JsonObject): void {
  const spec = lr["spec"];
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return;
  for (const item of objectsOf((spec as Record<string, unknown>)["limits"])) {
    if (item["type"] !== "Container") continue;
    const dflt = record(item, "default");
    const request = record(item, "defaultRequest");
    for (const [key, value] of Object.entries(record(item, "max"))) dflt[key] ??= value;
    for (const [key, value] of Object.entries(dflt)) request[key] ??= value;
    for (const [key, value] of Object.entries(record(item, "min"))) request[key] ??= value;
    // Empty resource lists are omitted (omitempty), as Go serializes them.
    for (const key of ["max", "min", "default", "defaultRequest"]) {
      if (Object.keys(item[key] as object).length === 0) delete item[key];
    }
  }
}

/** SetDefaults_NetworkPolicy(+Port): TCP ports, and policyTypes Ingress (+Egress when it has egress rules). */
export function defaultNetworkPolicy(np: JsonObject): void {
  const spec = record(np, "spec");
  for (const direction of ["ingress", "egress"]) {
    for (const rule of objectsOf(spec[direction])) {
      for (const port of objectsOf(rule["ports"])) port["protocol"] ??= "TCP";
    }
  }
  const types = spec["policyTypes"];
  if (!Array.isArray(types) || types.length === 0) {
    const egress = spec["egress"];
    spec["policyTypes"] = Array.isArray(egress) && egress.length > 0 ? ["Ingress", "Egress"] : ["Ingress"];
  }
}

/** networking.k8s.io/v1 SetDefaults_IngressClass: a parameters reference is cluster-scoped unless it says otherwise. */
export function defaultIngressClass(ic: JsonObject): void {
  const parameters = (ic["spec"] as { parameters?: unknown } | undefined)?.parameters;
  if (parameters !== null && typeof parameters === "object" && !Array.isArray(parameters)) {
    (parameters as Record<string, unknown>)["scope"] ??= "Cluster";
  }
}

/** discovery.k8s.io/v1 SetDefaults_EndpointPort: name "" and protocol TCP. */
export function defaultEndpointSlice(slice: JsonObject): void {
  for (const port of objectsOf(slice["ports"])) {
    port["name"] ??= "";
    port["protocol"] ??= "TCP";
  }
}

/** storage.k8s.io/v1 SetDefaults_StorageClass. */
export function defaultStorageClass(sc: JsonObject): void {
  sc["reclaimPolicy"] ??= "Delete";
  sc["volumeBindingMode"] ??= "Immediate";
}

/** scheduling.k8s.io/v1 SetDefaults_PriorityClass. */
export function defaultPriorityClass(pc: JsonObject): void {
  pc["preemptionPolicy"] ??= "PreemptLowerPriority";
}

const RBAC_GROUP = "rbac.authorization.k8s.io";

/** rbac/v1 SetDefaults_Subject: a User's or Group's empty apiGroup is RBAC's (a ServiceAccount's stays ""). */
function defaultSubjects(binding: JsonObject): void {
  for (const subject of objectsOf(binding["subjects"])) {
    if (subject["kind"] === "User" || subject["kind"] === "Group") subject["apiGroup"] ||= RBAC_GROUP;
  }
}

/** rbac/v1 SetDefaults_RoleBinding and SetDefaults_ClusterRoleBinding (with their subjects'). */
export function defaultRoleBinding(binding: JsonObject): void {
  record(binding, "roleRef")["apiGroup"] ||= RBAC_GROUP;
  defaultSubjects(binding);
}

/**
 * admissionregistration.k8s.io/v1 SetObjectDefaults_{Validating,Mutating}WebhookConfiguration: each
 * webhook's SetDefaults_{Validating,Mutating}Webhook, its service reference's port and its rules'
 * scope. sideEffects and admissionReviewVersions have no default in v1 (validation requires them).
 */
export function defaultWebhookConfiguration(config: JsonObject, mutating: boolean): void {
  for (const webhook of objectsOf(config["webhooks"])) {
    webhook["failurePolicy"] ??= "Fail";
    webhook["matchPolicy"] ??= "Equivalent";
    webhook["namespaceSelector"] ??= {};
    webhook["objectSelector"] ??= {};
    webhook["timeoutSeconds"] ??= 10;
    if (mutating) webhook["reinvocationPolicy"] ??= "Never";
    const service = objectAt(record(webhook, "clientConfig"), "service");
    if (service) service["port"] ??= 443;
    defaultRuleScopes(webhook["rules"]);
  }
}

/** SetDefaults_Rule of each rule in `rules` (webhooks' and admission policies' alike): scope `*`. */
export function defaultRuleScopes(rules: unknown): void {
  for (const rule of objectsOf(rules)) rule["scope"] ??= "*";
}
