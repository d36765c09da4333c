/**
 * The built-in kinds the devcluster serves, each with its per-kind behaviour (scope, generation,
 * subresources, short names, field selectors, create-time preparation), as kube-apiserver's registries
 * define them in pkg/registry/<group>/<kind>/strategy.go. The scheme's defaults, applied on every
 * write, are in scheme-defaults.ts.
 */
import type { ObjectMeta } from "kubernetes-types/meta/v1.d.ts";
import { jsonEqual } from "../machinery/semantic-equal.ts";
import { nowRfc3339 } from "../machinery/timestamps.ts";
import { prepareObjectMetaForUpdate } from "../validation/object-meta.ts";
import { record, served } from "./builtin-descriptor.ts";
import { certificateSigningRequests } from "./certificate-signing-requests.ts";
import { clusterBuiltins } from "./cluster-builtins.ts";
import { componentStatuses } from "./component-statuses.ts";
import { coreEventToEventsV1, EVENTS_V1_FIELD_PATHS, eventsV1ToCoreEvent } from "./event-conversion.ts";
import { horizontalPodAutoscalers } from "./hpa.ts";
import { immortalNamespaceRefusal } from "./immortal-namespaces.ts";
import { qosClassOf } from "./pod-qos.ts";
import {
  defaultCronJob,
  defaultDaemonSet,
  defaultDeployment,
  defaultEndpointSlice,
  defaultEndpoints,
  defaultIngressClass,
  defaultJob,
  defaultLimitRange,
  defaultNamespace,
  defaultNetworkPolicy,
  defaultPersistentVolume,
  defaultPersistentVolumeClaim,
  defaultPod,
  defaultPriorityClass,
  defaultReplicaSet,
  defaultReplicationController,
  defaultRoleBinding,
  defaultSecret,
  defaultService,
  defaultStatefulSet,
  defaultStorageClass,
  defaultWebhookConfiguration,
} from "./scheme-defaults.ts";
import { ALL_VERBS, bucketOf, type FieldGetter, type JsonObject, type ServedResource } from "./served-resource.ts";
import { serviceAllocation } from "./service-allocation.ts";

/** Reads a dotted path (`spec.nodeName`) as a field-selector string value. */
function path(dotted: string): FieldGetter {
  const parts = dotted.split(".");
  return (obj) => {
    let value: unknown = obj;
    for (const part of parts) {
      if (value === null || typeof value !== "object") return undefined;
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : String(value);
  };
}

function fields(...paths: string[]): Record<string, FieldGetter> {
  return Object.fromEntries(paths.map((p) => [p, path(p)]));
}

/**
 * What creating a pod adds beyond the scheme's defaults: PrepareForCreate's status (Pending, the QoS
 * class of the defaulted resources), the Priority admission plugin's fields.
 */
function preparePod(pod: JsonObject): void {
  const spec = record(pod, "spec");
  spec["preemptionPolicy"] ??= "PreemptLowerPriority";
  spec["priority"] ??= 0;
  const status = record(pod, "status");
  status["phase"] ??= "Pending";
  status["qosClass"] ??= qosClassOf(spec as Parameters<typeof qosClassOf>[0]);
}

/** Pods: graceful deletion only for pods bound to a node that have not finished (pod strategy CheckGracefulDelete). */
function podGracePeriod(pod: JsonObject, requested: number | undefined): number {
  const spec = (pod["spec"] ?? {}) as Record<string, unknown>;
  const status = (pod["status"] ?? {}) as Record<string, unknown>;
  if (!spec["nodeName"]) return 0;
  if (status["phase"] === "Failed" || status["phase"] === "Succeeded") return 0;
  if (requested !== undefined) return requested;
  const fromSpec = spec["terminationGracePeriodSeconds"];
  return typeof fromSpec === "number" ? fromSpec : 30;
}

/** The namespace strategy's PrepareForCreate: the `kubernetes` finalizer and the Active phase. */
function prepareNamespace(ns: JsonObject): void {
  const spec = record(ns, "spec");
  const finalizers = Array.isArray(spec["finalizers"]) ? spec["finalizers"] : [];
  spec["finalizers"] = finalizers.includes("kubernetes") ? finalizers : [...finalizers, "kubernetes"];
  record(ns, "status")["phase"] = "Active";
}

/** The namespace strategy's PrepareForUpdate: spec.finalizers changes only through /finalize. */
function keepNamespaceFinalizers(next: JsonObject, old: JsonObject): void {
  const oldFinalizers = (old["spec"] as { finalizers?: unknown } | undefined)?.finalizers;
  const spec = record(next, "spec");
  if (oldFinalizers === undefined) delete spec["finalizers"];
  else spec["finalizers"] = structuredClone(oldFinalizers);
}

/**
 * The job strategy's generateSelector (unless `spec.manualSelector` is true): the template gets the
 * job-name and controller-uid labels, legacy and `batch.kubernetes.io/` prefixed, and the selector
 * matches the prefixed controller-uid. The job's own labels then show what the scheme's defaulting
 * gives them on every read from storage: the template's labels when the job has none.
 */
function prepareJob(job: JsonObject): void {
  const spec = record(job, "spec");
  if (spec["manualSelector"] === true) return;
  const meta = record(job, "metadata");
  const name = String(meta["name"] ?? "");
  const uid = String(meta["uid"] ?? "");
  const templateLabels = record(record(record(spec, "template"), "metadata"), "labels");
  templateLabels["job-name"] ??= name;
  templateLabels["batch.kubernetes.io/job-name"] ??= name;
  templateLabels["controller-uid"] ??= uid;
  templateLabels["batch.kubernetes.io/controller-uid"] ??= uid;
  record(record(spec, "selector"), "matchLabels")["batch.kubernetes.io/controller-uid"] ??= uid;
  const own = meta["labels"];
  if (own === undefined || own === null || Object.keys(own as object).length === 0) {
    meta["labels"] = { ...templateLabels };
  }
}

/**
 * The daemon set strategy's PrepareForCreate sets the internal spec.templateGeneration to 1, which
 * apps/v1 carries as this annotation.
 */
function prepareDaemonSet(ds: JsonObject): void {
  const annotations = record(record(ds, "metadata"), "annotations");
  annotations[TEMPLATE_GENERATION] ??= "1";
}

/**
 * The daemon set strategy's PrepareForUpdate of the template generation apps/v1 shows as this
 * annotation: a client cannot set it; a template change adds one (with the generation).
 */
function daemonSetTemplateGeneration(next: JsonObject, old: JsonObject): void {
  const stored = Number.parseInt((old.metadata as ObjectMeta).annotations?.[TEMPLATE_GENERATION] ?? "0", 10) || 0;
  const changed = !jsonEqual(
    (old["spec"] as { template?: unknown } | undefined)?.template,
    (next["spec"] as { template?: unknown } | undefined)?.template,
  );
  record(record(next, "metadata"), "annotations")[TEMPLATE_GENERATION] = String(changed ? stored + 1 : stored);
}

const TEMPLATE_GENERATION = "deprecated.daemonset.template.generation";

/**
 * deploymentStatusStrategy.PrepareForUpdate: a `/status` write keeps the stored spec and labels and
 * takes the rest of the body's metadata under ObjectMeta's update rules, without a generation bump
 * (the deployment controller records its revision annotation this way, with UpdateStatus).
 */
function deploymentStatusUpdate(next: JsonObject, old: JsonObject, input: JsonObject): void {
  const oldMeta = old.metadata as ObjectMeta;
  const meta = structuredClone((input.metadata ?? {}) as ObjectMeta) as Record<string, unknown>;
  prepareObjectMetaForUpdate(meta, oldMeta);
  meta["namespace"] = oldMeta.namespace;
  for (const kept of ["labels", "managedFields"] as const) {
    if (oldMeta[kept] === undefined) delete meta[kept];
    else meta[kept] = oldMeta[kept];
  }
  next.metadata = meta;
}

/** The persistent volume strategy's PrepareForCreate (PersistentVolumeLastPhaseTransitionTime, GA in 1.31). */
function preparePersistentVolume(pv: JsonObject): void {
  const status = record(pv, "status");
  status["phase"] = "Pending";
  status["lastPhaseTransitionTime"] = nowRfc3339();
}

/** A field selector on an integer status field: Go's strconv.Itoa of the value, 0 when unset. */
function integerField(dotted: string): FieldGetter {
  const read = path(dotted);
  return (obj) => {
    const value = read(obj);
    return value === "" || value === undefined ? "0" : value;
  };
}

/**
 * Create-time status of the kinds whose status has counters without `omitempty`: PrepareForCreate
 * resets status to its zero value, and Go writes those counters as 0 (`kubectl get -o yaml` on a
 * cluster with no controller shows them), where omitempty fields vanish.
 */
function zeroCounters(...names: string[]): (obj: JsonObject) => void {
  return (obj) => {
    const status = record(obj, "status");
    for (const name of names) status[name] ??= 0;
  };
}

/** The scale subresource of a kind whose replicas are at `.spec.replicas` and `.status.replicas`. */
const REPLICAS_SCALE = { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" };

/** What the built-in kinds need to know about the server's state. */
export interface BuiltinDeps {
  /** The cluster IPs Services hold now: allocation goes around them and refuses a taken one. */
  serviceIpsInUse?: () => Iterable<string>;
  /** The node ports (and health-check node ports) Services hold now, likewise. */
  serviceNodePortsInUse?: () => Iterable<number>;
}

export { KUBERNETES_SERVICE_IP } from "./service-allocation.ts";

/** ServiceAccount strategy's cleanSecretReferences: a secret reference keeps only its name. */
function cleanSecretReferences(sa: JsonObject): void {
  const secrets = sa["secrets"];
  if (!Array.isArray(secrets)) return;
  sa["secrets"] = secrets.map((ref) => {
    const name = ref !== null && typeof ref === "object" ? (ref as Record<string, unknown>)["name"] : undefined;
    return typeof name === "string" && name !== "" ? { name } : {};
  });
}

const EVENT_FIELDS = fields(
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type",
);

/** The built-in kinds (discovery orders groups by kube-apiserver's priorities and resources by name). */
export function builtinResources(deps: BuiltinDeps = {}): ServedResource[] {
  const serviceAllocator = serviceAllocation({
    ipsInUse: deps.serviceIpsInUse ?? (() => []),
    nodePortsInUse: deps.serviceNodePortsInUse ?? (() => []),
  });
  const coreEvents = served({
    group: "",
    version: "v1",
    kind: "Event",
    plural: "events",
    namespaced: true,
    shortNames: ["ev"],
    fieldSelectors: EVENT_FIELDS,
  });
  return [
    served({
      group: "",
      version: "v1",
      kind: "Namespace",
      plural: "namespaces",
      namespaced: false,
      shortNames: ["ns"],
      // Namespace storage has no DeleteCollection (it would skip finalization): kubernetes#46407.
      verbs: ALL_VERBS.filter((v) => v !== "deletecollection"),
      refuseDelete: immortalNamespaceRefusal,
      subresources: { status: true },
      fieldSelectors: fields("status.phase"),
      defaults: defaultNamespace,
      defaultOnCreate: prepareNamespace,
      updateStrategy: { main: keepNamespaceFinalizers },
      returnDeletedObject: true,
      deletion: {
        // spec.finalizers holds a namespace until the namespace controller has emptied it and calls /finalize.
        holds: (ns) => {
          const spec = ns["spec"] as { finalizers?: unknown[] } | undefined;
          return Array.isArray(spec?.finalizers) && spec.finalizers.length > 0;
        },
        markTerminating: (ns) => {
          record(ns, "status")["phase"] = "Terminating";
        },
      },
    }),
    served({
      group: "",
      version: "v1",
      kind: "Pod",
      plural: "pods",
      namespaced: true,
      shortNames: ["po"],
      categories: ["all"],
      subresources: { status: true },
      fieldSelectors: fields(
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
      ),
      defaults: defaultPod,
      defaultOnCreate: preparePod,
      returnDeletedObject: true,
      gracePeriod: podGracePeriod,
    }),
    served({
      group: "",
      version: "v1",
      kind: "Node",
      plural: "nodes",
      namespaced: false,
      shortNames: ["no"],
      subresources: { status: true },
      keepStatusOnCreate: true,
      fieldSelectors: fields("spec.unschedulable"),
    }),
    served({ group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true, shortNames: ["cm"] }),
    served({
      group: "",
      version: "v1",
      kind: "Secret",
      plural: "secrets",
      namespaced: true,
      fieldSelectors: fields("type"),
      defaults: defaultSecret,
    }),
    served({
      group: "",
      version: "v1",
      kind: "Service",
      plural: "services",
      namespaced: true,
      shortNames: ["svc"],
      categories: ["all"],
      subresources: { status: true },
      fieldSelectors: fields("spec.clusterIP", "spec.type"),
      defaults: defaultService,
      defaultOnCreate: (svc) => serviceAllocator.prepareCreate(svc),
      updateStrategy: { main: (next, old) => serviceAllocator.prepareUpdate(next, old) },
      returnDeletedObject: true,
    }),
    served({
      group: "",
      version: "v1",
      kind: "ServiceAccount",
      plural: "serviceaccounts",
      namespaced: true,
      shortNames: ["sa"],
      defaultOnCreate: cleanSecretReferences,
      updateStrategy: { main: cleanSecretReferences },
      returnDeletedObject: true,
    }),
    served({
      group: "",
      version: "v1",
      kind: "Endpoints",
      plural: "endpoints",
      namespaced: true,
      shortNames: ["ep"],
      defaults: defaultEndpoints,
    }),
    served({
      group: "",
      version: "v1",
      kind: "LimitRange",
      plural: "limitranges",
      namespaced: true,
      shortNames: ["limits"],
      defaults: defaultLimitRange,
    }),
    served({
      group: "",
      version: "v1",
      kind: "PersistentVolumeClaim",
      plural: "persistentvolumeclaims",
      namespaced: true,
      shortNames: ["pvc"],
      subresources: { status: true },
      defaults: defaultPersistentVolumeClaim,
    }),
    served({
      group: "",
      version: "v1",
      kind: "PersistentVolume",
      plural: "persistentvolumes",
      namespaced: false,
      shortNames: ["pv"],
      subresources: { status: true },
      defaults: defaultPersistentVolume,
      defaultOnCreate: preparePersistentVolume,
    }),
    served({
      group: "",
      version: "v1",
      kind: "ReplicationController",
      plural: "replicationcontrollers",
      namespaced: true,
      shortNames: ["rc"],
      categories: ["all"],
      subresources: { status: true, scale: REPLICAS_SCALE },
      generation: "spec",
      fieldSelectors: { "status.replicas": integerField("status.replicas") },
      defaults: defaultReplicationController,
      defaultOnCreate: zeroCounters("replicas"),
    }),
    served({
      group: "",
      version: "v1",
      kind: "ResourceQuota",
      plural: "resourcequotas",
      namespaced: true,
      shortNames: ["quota"],
      subresources: { status: true },
    }),
    coreEvents,
    served({
      group: "events.k8s.io",
      version: "v1",
      kind: "Event",
      plural: "events",
      namespaced: true,
      shortNames: ["ev"],
      storageBucket: bucketOf(coreEvents),
      // Field selectors run on the stored (core) form: the events.k8s.io names map to core paths.
      fieldSelectors: Object.fromEntries(
        Object.entries(EVENTS_V1_FIELD_PATHS).map(([field, core]) => [field, path(core)]),
      ),
      conversion: { storage: coreEvents, fromStorage: coreEventToEventsV1, toStorage: eventsV1ToCoreEvent },
    }),
    served({
      group: "apps",
      version: "v1",
      kind: "Deployment",
      plural: "deployments",
      namespaced: true,
      shortNames: ["deploy"],
      categories: ["all"],
      subresources: { status: true, scale: REPLICAS_SCALE },
      generation: "spec-and-annotations",
      defaults: defaultDeployment,
      updateStrategy: { status: deploymentStatusUpdate },
    }),
    served({
      group: "apps",
      version: "v1",
      kind: "ReplicaSet",
      plural: "replicasets",
      namespaced: true,
      shortNames: ["rs"],
      categories: ["all"],
      subresources: { status: true, scale: REPLICAS_SCALE },
      generation: "spec",
      defaults: defaultReplicaSet,
      // ReplicaSetStatus.replicas has no omitempty (a Deployment's counters all have it).
      defaultOnCreate: zeroCounters("replicas"),
    }),
    served({
      group: "apps",
      version: "v1",
      kind: "StatefulSet",
      plural: "statefulsets",
      namespaced: true,
      shortNames: ["sts"],
      categories: ["all"],
      subresources: { status: true, scale: REPLICAS_SCALE },
      generation: "spec",
      defaults: defaultStatefulSet,
      defaultOnCreate: zeroCounters("replicas", "availableReplicas"),
    }),
    served({
      group: "apps",
      version: "v1",
      kind: "DaemonSet",
      plural: "daemonsets",
      namespaced: true,
      shortNames: ["ds"],
      categories: ["all"],
      subresources: { status: true },
      generation: "spec",
      defaults: defaultDaemonSet,
      defaultOnCreate: (ds) => {
        prepareDaemonSet(ds);
        zeroCounters("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")(ds);
      },
      updateStrategy: { main: daemonSetTemplateGeneration },
    }),
    served({
      group: "batch",
      version: "v1",
      kind: "Job",
      plural: "jobs",
      namespaced: true,
      categories: ["all"],
      subresources: { status: true },
      generation: "spec",
      fieldSelectors: { "status.successful": integerField("status.succeeded") },
      defaults: defaultJob,
      defaultOnCreate: prepareJob,
    }),
    served({
      group: "batch",
      version: "v1",
      kind: "CronJob",
      plural: "cronjobs",
      namespaced: true,
      shortNames: ["cj"],
      categories: ["all"],
      subresources: { status: true },
      generation: "spec",
      defaults: defaultCronJob,
    }),
    served({
      group: "networking.k8s.io",
      version: "v1",
      kind: "Ingress",
      plural: "ingresses",
      invalidGroup: "extensions",
      namespaced: true,
      shortNames: ["ing"],
      subresources: { status: true },
      generation: "spec",
      // PrepareForCreate resets status to an empty IngressStatus, whose loadBalancer Go always writes.
      defaultOnCreate: (ing) => {
        record(ing, "status")["loadBalancer"] ??= {};
      },
    }),
    served({
      group: "networking.k8s.io",
      version: "v1",
      kind: "IngressClass",
      plural: "ingressclasses",
      namespaced: false,
      generation: "spec",
      defaults: defaultIngressClass,
    }),
    served({
      group: "networking.k8s.io",
      version: "v1",
      kind: "NetworkPolicy",
      plural: "networkpolicies",
      invalidGroup: "extensions",
      namespaced: true,
      shortNames: ["netpol"],
      generation: "spec",
      defaults: defaultNetworkPolicy,
    }),
    served({
      group: "policy",
      version: "v1",
      kind: "PodDisruptionBudget",
      plural: "poddisruptionbudgets",
      namespaced: true,
      shortNames: ["pdb"],
      subresources: { status: true },
      generation: "spec",
      defaultOnCreate: zeroCounters("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"),
    }),
    served({
      group: "discovery.k8s.io",
      version: "v1",
      kind: "EndpointSlice",
      plural: "endpointslices",
      namespaced: true,
      // Its content is top-level (endpoints, ports): the strategy bumps generation on any non-metadata change.
      generation: "all-but-metadata-and-status",
      defaults: defaultEndpointSlice,
    }),
    served({
      group: "storage.k8s.io",
      version: "v1",
      kind: "StorageClass",
      plural: "storageclasses",
      namespaced: false,
      shortNames: ["sc"],
      defaults: defaultStorageClass,
    }),
    served({
      group: "scheduling.k8s.io",
      version: "v1",
      kind: "PriorityClass",
      plural: "priorityclasses",
      namespaced: false,
      shortNames: ["pc"],
      defaults: defaultPriorityClass,
    }),
    served({ group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", namespaced: true }),
    served({ group: "rbac.authorization.k8s.io", version: "v1", kind: "Role", plural: "roles", namespaced: true }),
    served({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      kind: "RoleBinding",
      plural: "rolebindings",
      namespaced: true,
      defaults: defaultRoleBinding,
    }),
    served({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      kind: "ClusterRole",
      plural: "clusterroles",
      namespaced: false,
    }),
    served({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      kind: "ClusterRoleBinding",
      plural: "clusterrolebindings",
      namespaced: false,
      defaults: defaultRoleBinding,
    }),
    served({
      group: "apiextensions.k8s.io",
      version: "v1",
      kind: "CustomResourceDefinition",
      plural: "customresourcedefinitions",
      namespaced: false,
      shortNames: ["crd", "crds"],
      categories: ["api-extensions"],
      subresources: { status: true },
      generation: "spec",
    }),
    served({
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "ValidatingWebhookConfiguration",
      plural: "validatingwebhookconfigurations",
      namespaced: false,
      categories: ["api-extensions"],
      // Their content is `webhooks`, not `spec`: any change outside metadata bumps generation.
      generation: "all-but-metadata-and-status",
      defaults: (config) => defaultWebhookConfiguration(config, false),
    }),
    served({
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "MutatingWebhookConfiguration",
      plural: "mutatingwebhookconfigurations",
      namespaced: false,
      categories: ["api-extensions"],
      generation: "all-but-metadata-and-status",
      defaults: (config) => defaultWebhookConfiguration(config, true),
    }),
    componentStatuses(),
    ...horizontalPodAutoscalers(),
    certificateSigningRequests(),
    ...clusterBuiltins(),
  ];
}
