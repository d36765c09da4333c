/**
 * `capstan/core`: typed built-in Kubernetes kinds, usable wherever a `defineResource` kind is.
 *
 * ```ts
 * import { ConfigMap, Pod } from "capstan/core";
 * ```
 */
export {
  BUILTIN_KINDS,
  type BuiltinKind,
  ClusterRole,
  ClusterRoleBinding,
  ConfigMap,
  CronJob,
  CustomResourceDefinition,
  DaemonSet,
  Deployment,
  Event,
  EventsV1Event,
  Ingress,
  Job,
  Lease,
  MutatingWebhookConfiguration,
  Namespace,
  Node,
  PersistentVolumeClaim,
  Pod,
  ReplicaSet,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
  ValidatingWebhookConfiguration,
} from "./resources/builtins.ts";
