/**
 * The kinds a real cluster serves without any CRD, so that `capstan new` can refuse a custom kind
 * that would share a name with one of them.
 *
 * Why it matters: a CRD may well have the kind `CronJob` in its own group (the API server accepts
 * it), but `kubectl get cronjobs`, `kubectl get cronjob`, RBAC rules and dashboards that name a
 * resource without its group then mean batch/v1 first, so a scaffold whose README says
 * `kubectl get cronjobs` shows the wrong objects. Only `cronjobs.<group>` names the custom one.
 *
 * The list is every top-level resource of the GA API groups of kube-apiserver 1.30-1.32 (the
 * kubernetes-types 1.30 declarations Capstan builds on, plus kube-aggregator's APIService), each at
 * the version kube-apiserver prefers. Alpha and beta-only kinds are left out: they are off by default.
 * Subresource-only kinds (Scale, Eviction, TokenRequest) are left out: nothing lists them by name.
 */
import { pluralize } from "../resources/plural.ts";

/** A built-in kind as discovery shows it. */
export interface BuiltinKindName {
  /** `batch/v1`, or `v1` for the core group. */
  apiVersion: string;
  kind: string;
  /** Its resource name: what `kubectl get <plural>` resolves. */
  plural: string;
}

function group(apiVersion: string, kinds: Record<string, string>): BuiltinKindName[] {
  return Object.entries(kinds).map(([kind, plural]) => ({ apiVersion, kind, plural }));
}

/** Kind -> resource name, per group version. */
export const BUILTIN_KIND_NAMES: readonly BuiltinKindName[] = [
  ...group("v1", {
    Binding: "bindings",
    ComponentStatus: "componentstatuses",
    ConfigMap: "configmaps",
    Endpoints: "endpoints",
    Event: "events",
    LimitRange: "limitranges",
    Namespace: "namespaces",
    Node: "nodes",
    PersistentVolume: "persistentvolumes",
    PersistentVolumeClaim: "persistentvolumeclaims",
    Pod: "pods",
    PodTemplate: "podtemplates",
    ReplicationController: "replicationcontrollers",
    ResourceQuota: "resourcequotas",
    Secret: "secrets",
    Service: "services",
    ServiceAccount: "serviceaccounts",
  }),
  ...group("admissionregistration.k8s.io/v1", {
    MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
    ValidatingAdmissionPolicy: "validatingadmissionpolicies",
    ValidatingAdmissionPolicyBinding: "validatingadmissionpolicybindings",
    ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
  }),
  ...group("apiextensions.k8s.io/v1", { CustomResourceDefinition: "customresourcedefinitions" }),
  ...group("apiregistration.k8s.io/v1", { APIService: "apiservices" }),
  ...group("apps/v1", {
    ControllerRevision: "controllerrevisions",
    DaemonSet: "daemonsets",
    Deployment: "deployments",
    ReplicaSet: "replicasets",
    StatefulSet: "statefulsets",
  }),
  ...group("authentication.k8s.io/v1", { SelfSubjectReview: "selfsubjectreviews", TokenReview: "tokenreviews" }),
  ...group("authorization.k8s.io/v1", {
    LocalSubjectAccessReview: "localsubjectaccessreviews",
    SelfSubjectAccessReview: "selfsubjectaccessreviews",
    SelfSubjectRulesReview: "selfsubjectrulesreviews",
    SubjectAccessReview: "subjectaccessreviews",
  }),
  ...group("autoscaling/v2", { HorizontalPodAutoscaler: "horizontalpodautoscalers" }),
  ...group("batch/v1", { CronJob: "cronjobs", Job: "jobs" }),
  ...group("certificates.k8s.io/v1", { CertificateSigningRequest: "certificatesigningrequests" }),
  ...group("coordination.k8s.io/v1", { Lease: "leases" }),
  ...group("discovery.k8s.io/v1", { EndpointSlice: "endpointslices" }),
  ...group("events.k8s.io/v1", { Event: "events" }),
  ...group("flowcontrol.apiserver.k8s.io/v1", {
    FlowSchema: "flowschemas",
    PriorityLevelConfiguration: "prioritylevelconfigurations",
  }),
  ...group("networking.k8s.io/v1", {
    Ingress: "ingresses",
    IngressClass: "ingressclasses",
    NetworkPolicy: "networkpolicies",
  }),
  ...group("node.k8s.io/v1", { RuntimeClass: "runtimeclasses" }),
  ...group("policy/v1", { PodDisruptionBudget: "poddisruptionbudgets" }),
  ...group("rbac.authorization.k8s.io/v1", {
    ClusterRole: "clusterroles",
    ClusterRoleBinding: "clusterrolebindings",
    Role: "roles",
    RoleBinding: "rolebindings",
  }),
  ...group("scheduling.k8s.io/v1", { PriorityClass: "priorityclasses" }),
  ...group("storage.k8s.io/v1", {
    CSIDriver: "csidrivers",
    CSINode: "csinodes",
    CSIStorageCapacity: "csistoragecapacities",
    StorageClass: "storageclasses",
    VolumeAttachment: "volumeattachments",
  }),
];

/**
 * The built-in kind a custom `kind` would be confused with: same kind name (case-insensitively, as
 * kubectl matches singular names), or the same resource name (`Endpoint` -> `endpoints`).
 */
export function builtinKindNamed(kind: string): BuiltinKindName | undefined {
  const singular = kind.toLowerCase();
  const plural = pluralize(kind);
  return BUILTIN_KIND_NAMES.find((b) => b.kind.toLowerCase() === singular || b.plural === plural);
}
