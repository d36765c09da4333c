/**
 * Typed built-in kinds (the `capstan/core` entry point). Each is a {@link MakeableKind}, so it goes
 * wherever a `defineResource` kind goes (client, controllers, handlers, RBAC needs) and builds its
 * objects with `make`:
 *
 * ```ts
 * import { ConfigMap } from "capstan/core";
 * const cm = ConfigMap.make({ metadata: { name: "usd" }, data: { rate: "1.3" } });
 * ```
 *
 * Object types come from kubernetes-types (API version 1.30).
 */

import type {
  MutatingWebhookConfiguration as MutatingWebhookConfigurationObject,
  ValidatingWebhookConfiguration as ValidatingWebhookConfigurationObject,
} from "kubernetes-types/admissionregistration/v1.d.ts";
import type { CustomResourceDefinition as CustomResourceDefinitionObject } from "kubernetes-types/apiextensions/v1.d.ts";
import type {
  DaemonSet as DaemonSetObject,
  Deployment as DeploymentObject,
  ReplicaSet as ReplicaSetObject,
  StatefulSet as StatefulSetObject,
} from "kubernetes-types/apps/v1.d.ts";
import type { CronJob as CronJobObject, Job as JobObject } from "kubernetes-types/batch/v1.d.ts";
import type { Lease as LeaseObject } from "kubernetes-types/coordination/v1.d.ts";
import type {
  ConfigMap as ConfigMapObject,
  Event as EventObject,
  Namespace as NamespaceObject,
  Node as NodeObject,
  PersistentVolumeClaim as PersistentVolumeClaimObject,
  Pod as PodObject,
  Secret as SecretObject,
  ServiceAccount as ServiceAccountObject,
  Service as ServiceObject,
} from "kubernetes-types/core/v1.d.ts";
import type { Event as EventsV1EventObject } from "kubernetes-types/events/v1.d.ts";
import type { Ingress as IngressObject } from "kubernetes-types/networking/v1.d.ts";
import type {
  ClusterRoleBinding as ClusterRoleBindingObject,
  ClusterRole as ClusterRoleObject,
  RoleBinding as RoleBindingObject,
  Role as RoleObject,
} from "kubernetes-types/rbac/v1.d.ts";
import type { KubeObject } from "../client/types.ts";
import type { MakeableKind, MakeInput, Scope } from "./resource-types.ts";

/** A built-in kind: its REST coordinates plus `make`. */
export interface BuiltinKind<T extends KubeObject> extends MakeableKind<T> {
  readonly scope: Scope;
}

function builtin<T extends KubeObject>(
  group: string,
  version: string,
  kind: string,
  plural: string,
  scope: Scope,
): BuiltinKind<T> {
  const apiVersion = group === "" ? version : `${group}/${version}`;
  return Object.freeze({
    group,
    version,
    kind,
    plural,
    singular: kind.toLowerCase(),
    listKind: `${kind}List`,
    namespaced: scope === "Namespaced",
    scope,
    apiVersion,
    make(input: MakeInput<T>): T {
      return { apiVersion, kind, ...input } as T;
    },
  });
}

// core/v1
export const Pod = builtin<PodObject>("", "v1", "Pod", "pods", "Namespaced");
export const ConfigMap = builtin<ConfigMapObject>("", "v1", "ConfigMap", "configmaps", "Namespaced");
export const Secret = builtin<SecretObject>("", "v1", "Secret", "secrets", "Namespaced");
export const Service = builtin<ServiceObject>("", "v1", "Service", "services", "Namespaced");
export const ServiceAccount = builtin<ServiceAccountObject>(
  "",
  "v1",
  "ServiceAccount",
  "serviceaccounts",
  "Namespaced",
);
export const Namespace = builtin<NamespaceObject>("", "v1", "Namespace", "namespaces", "Cluster");
export const Node = builtin<NodeObject>("", "v1", "Node", "nodes", "Cluster");
export const PersistentVolumeClaim = builtin<PersistentVolumeClaimObject>(
  "",
  "v1",
  "PersistentVolumeClaim",
  "persistentvolumeclaims",
  "Namespaced",
);
/** core/v1 Event, what `kubectl describe` shows and most operators post. */
export const Event = builtin<EventObject>("", "v1", "Event", "events", "Namespaced");
/** events.k8s.io/v1 Event, the newer API for the same objects. */
export const EventsV1Event = builtin<EventsV1EventObject>("events.k8s.io", "v1", "Event", "events", "Namespaced");

// apps/v1, batch/v1
export const Deployment = builtin<DeploymentObject>("apps", "v1", "Deployment", "deployments", "Namespaced");
export const ReplicaSet = builtin<ReplicaSetObject>("apps", "v1", "ReplicaSet", "replicasets", "Namespaced");
export const StatefulSet = builtin<StatefulSetObject>("apps", "v1", "StatefulSet", "statefulsets", "Namespaced");
export const DaemonSet = builtin<DaemonSetObject>("apps", "v1", "DaemonSet", "daemonsets", "Namespaced");
export const Job = builtin<JobObject>("batch", "v1", "Job", "jobs", "Namespaced");
export const CronJob = builtin<CronJobObject>("batch", "v1", "CronJob", "cronjobs", "Namespaced");

// coordination, rbac, networking, API extensions
export const Lease = builtin<LeaseObject>("coordination.k8s.io", "v1", "Lease", "leases", "Namespaced");
export const Role = builtin<RoleObject>("rbac.authorization.k8s.io", "v1", "Role", "roles", "Namespaced");
export const RoleBinding = builtin<RoleBindingObject>(
  "rbac.authorization.k8s.io",
  "v1",
  "RoleBinding",
  "rolebindings",
  "Namespaced",
);
export const ClusterRole = builtin<ClusterRoleObject>(
  "rbac.authorization.k8s.io",
  "v1",
  "ClusterRole",
  "clusterroles",
  "Cluster",
);
export const ClusterRoleBinding = builtin<ClusterRoleBindingObject>(
  "rbac.authorization.k8s.io",
  "v1",
  "ClusterRoleBinding",
  "clusterrolebindings",
  "Cluster",
);
export const Ingress = builtin<IngressObject>("networking.k8s.io", "v1", "Ingress", "ingresses", "Namespaced");
export const CustomResourceDefinition = builtin<CustomResourceDefinitionObject>(
  "apiextensions.k8s.io",
  "v1",
  "CustomResourceDefinition",
  "customresourcedefinitions",
  "Cluster",
);
export const ValidatingWebhookConfiguration = builtin<ValidatingWebhookConfigurationObject>(
  "admissionregistration.k8s.io",
  "v1",
  "ValidatingWebhookConfiguration",
  "validatingwebhookconfigurations",
  "Cluster",
);
export const MutatingWebhookConfiguration = builtin<MutatingWebhookConfigurationObject>(
  "admissionregistration.k8s.io",
  "v1",
  "MutatingWebhookConfiguration",
  "mutatingwebhookconfigurations",
  "Cluster",
);

/** Every built-in kind above, e.g. for lookups by group/kind. */
export const BUILTIN_KINDS: readonly BuiltinKind<KubeObject>[] = [
  Pod,
  ConfigMap,
  Secret,
  Service,
  ServiceAccount,
  Namespace,
  Node,
  PersistentVolumeClaim,
  Event,
  EventsV1Event,
  Deployment,
  ReplicaSet,
  StatefulSet,
  DaemonSet,
  Job,
  CronJob,
  Lease,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
  Ingress,
  CustomResourceDefinition,
  ValidatingWebhookConfiguration,
  MutatingWebhookConfiguration,
] as unknown as readonly BuiltinKind<KubeObject>[];
