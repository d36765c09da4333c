/**
 * The metav1.Time and metav1.MicroTime fields of built-in kinds that Go declares by value rather than
 * as a pointer, by Go struct and JSON field name. The difference shows in the JSON kube-apiserver
 * writes: encoding/json's omitempty never omits a struct, so such a field is always printed, `null`
 * when unset (a pod condition's `lastProbeTime: null`, a template's `creationTimestamp: null`), while
 * a pointer field sent as null is omitted.
 *
 * Transcribed from k8s.io/api v0.32.13 (every types.go), k8s.io/apimachinery v0.32.13 meta/v1
 * (ObjectMeta, Condition) and k8s.io/apiextensions-apiserver v0.32.13 (CRD conditions); each name
 * here is a value field in every package that declares it.
 */
export const VALUE_TIME_FIELDS: ReadonlySet<string> = new Set([
  "CertificateSigningRequestCondition.lastTransitionTime",
  "CertificateSigningRequestCondition.lastUpdateTime",
  "Condition.lastTransitionTime",
  "ContainerStateRunning.startedAt",
  "ContainerStateTerminated.finishedAt",
  "ContainerStateTerminated.startedAt",
  "CustomResourceDefinitionCondition.lastTransitionTime",
  "DaemonSetCondition.lastTransitionTime",
  "DeploymentCondition.lastTransitionTime",
  "DeploymentCondition.lastUpdateTime",
  "Event.deprecatedFirstTimestamp",
  "Event.deprecatedLastTimestamp",
  "Event.eventTime",
  "Event.firstTimestamp",
  "Event.lastTimestamp",
  "EventSeries.lastObservedTime",
  "FlowSchemaCondition.lastTransitionTime",
  "HorizontalPodAutoscalerCondition.lastTransitionTime",
  "JobCondition.lastProbeTime",
  "JobCondition.lastTransitionTime",
  "MigrationCondition.lastUpdateTime",
  "NamespaceCondition.lastTransitionTime",
  "NodeCondition.lastHeartbeatTime",
  "NodeCondition.lastTransitionTime",
  "ObjectMeta.creationTimestamp",
  "PersistentVolumeClaimCondition.lastProbeTime",
  "PersistentVolumeClaimCondition.lastTransitionTime",
  "PodCondition.lastProbeTime",
  "PodCondition.lastTransitionTime",
  "PreferAvoidPodsEntry.evictionTime",
  "PriorityLevelConfigurationCondition.lastTransitionTime",
  "ReplicaSetCondition.lastTransitionTime",
  "ReplicationControllerCondition.lastTransitionTime",
  "StatefulSetCondition.lastTransitionTime",
  "StorageVersionCondition.lastTransitionTime",
  "TokenRequestStatus.expirationTimestamp",
  "VolumeError.time",
]);
