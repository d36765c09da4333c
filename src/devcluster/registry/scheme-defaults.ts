/**
 * The scheme's defaults of the built-in kinds (k8s.io/kubernetes pkg/apis/<group>/v1/defaults.go,
 * `SetDefaults_*`): kube-apiserver applies them whenever it decodes an object, so on every write —
 * create, update, each patch type and apply — not only on create. A merge patch that replaces a
 * Deployment's containers, or a JSON patch that removes its strategy, gets them filled in again.
 *
 * What only a create does (a pod's `Pending` phase, a namespace's `kubernetes` finalizer, a service's
 * cluster IP, pod priority from admission) is not here: builtins.ts keeps it as `defaultOnCreate`.
 *
 * Guarantees: each function only fills fields that are absent (`??=`), so a stored object defaulted
 * before is unchanged, and a write that changes nothing stays a no-op.
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

/** SetDefaults_Container's pull policy: Always for `:latest` or untagged images, else IfNotPresent. */
function pullPolicyOf(image: string): string {
  // A digest pins the image: no tag means "latest" only when there is no digest either.
  if (image.includes("@")) return "IfNotPresent";
  return image.endsWith(":latest") || !/:[^/]+$/.test(image) ? "Always" : "IfNotPresent";
}

/** SetDefaults_Container (and the same for init containers): what every container gets. */
function defaultContainer(c: Record<string, unknown>): void {
  c["terminationMessagePath"] ??= "/dev/termination-log";
  c["terminationMessagePolicy"] ??= "File";
  c["resources"] ??= {};
  for (const port of objectsOf(c["ports"])) port["protocol"] ??= "TCP";
  c["imagePullPolicy"] ??= pullPolicyOf(typeof c["image"] === "string" ? c["image"] : "");
}

/** SetDefaults_PodSpec and the containers': shared by pods and pod templates. */
export function defaultPodSpec(spec: Record<string, unknown>): void {
  spec["restartPolicy"] ??= "Always";
  spec["terminationGracePeriodSeconds"] ??= 30;
  spec["dnsPolicy"] ??= "ClusterFirst";
  spec["schedulerName"] ??= "default-scheduler";
  spec["securityContext"] ??= {};
  for (const c of objectsOf(spec["containers"])) defaultContainer(c);
  for (const c of objectsOf(spec["initContainers"])) defaultContainer(c);
}

/** Pods: SetDefaults_Pod (enableServiceLinks) and the pod spec's defaults. */
export function defaultPod(pod: JsonObject): void {
  const spec = record(pod, "spec");
  defaultPodSpec(spec);
  spec["enableServiceLinks"] ??= true;
}

function defaultPodTemplateOf(spec: Record<string, unknown>): void {
  const template = spec["template"];
  if (template === null || typeof template !== "object" || Array.isArray(template)) return;
  const templateSpec = (template as Record<string, unknown>)["spec"];
  if (templateSpec !== null && typeof templateSpec === "object" && !Array.isArray(templateSpec)) {
    defaultPodSpec(templateSpec as Record<string, unknown>);
  }
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
  secret["type"] ??= "Opaque";
}

/** SetDefaults_Namespace: every namespace carries its own name as a label (NamespaceDefaultLabelName). */
export function defaultNamespace(ns: JsonObject): void {
  const meta = record(ns, "metadata");
  if (typeof meta["name"] !== "string") return;
  record(meta, "labels")["kubernetes.io/metadata.name"] = meta["name"];
}

/** SetDefaults_Service: type, session affinity, port protocol and target port, traffic policy. */
export function defaultService(svc: JsonObject): void {
  const spec = record(svc, "spec");
  spec["type"] ??= "ClusterIP";
  spec["sessionAffinity"] ??= "None";
  if (spec["type"] !== "ExternalName") spec["internalTrafficPolicy"] ??= "Cluster";
  if (spec["type"] === "NodePort" || spec["type"] === "LoadBalancer") spec["externalTrafficPolicy"] ??= "Cluster";
  for (const p of objectsOf(spec["ports"])) {
    p["protocol"] ??= "TCP";
    p["targetPort"] ??= p["port"];
  }
}
