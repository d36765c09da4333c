/**
 * The descriptor of one served resource (one group/version/plural): what discovery shows about it
 * and every per-kind behaviour the generic REST layer asks of it. Built-in kinds are described in
 * builtins.ts; CRD-backed ones are made from their CRD by the CRD lifecycle controller.
 */
import type { GroupResource } from "../machinery/status.ts";

/** A Kubernetes object as parsed JSON. The REST layer only relies on `metadata`. */
export type JsonObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown>;
};

/** The scale subresource's paths, as in a CRD's `subresources.scale`. */
export interface ScaleSubresource {
  /** JSON path of the desired replicas, e.g. `.spec.replicas`. */
  specReplicasPath: string;
  /** JSON path of the observed replicas, e.g. `.status.replicas`. */
  statusReplicasPath: string;
  /** JSON path of the serialized label selector, e.g. `.status.selector`. */
  labelSelectorPath?: string;
}

/** A CRD additionalPrinterColumn (also used by built-in Table output). */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** How `metadata.generation` behaves for a kind. */
export type GenerationPolicy =
  /** No generation (ConfigMaps, Pods in 1.32, RBAC...): the field is left as the client sent it on create, kept on update. */
  | "none"
  /** Starts at 1 and increments when `spec` changes (ReplicaSets, webhook configurations, CRDs). */
  | "spec"
  /** Starts at 1 and increments when `spec` or `metadata.annotations` change (Deployments: rollbacks ride on annotations). */
  | "spec-and-annotations"
  /** Starts at 1 and increments on any change outside `metadata` and `status` (custom resources). */
  | "all-but-metadata-and-status";

/** The user a create is made by, for strategies that record it (a CSR's spec.username and groups). */
export interface Requester {
  username: string;
  groups: string[];
  uid?: string;
}

/** A field selector key a kind supports beyond `metadata.name`/`metadata.namespace`, and how to read it. */
export type FieldGetter = (obj: JsonObject) => string | undefined;

/**
 * One served resource. Everything a generic handler needs to know about a kind lives here, so that
 * adding a kind (or a CRD version) is adding a descriptor.
 */
export interface ServedResource {
  /** API group, `""` for core. */
  group: string;
  version: string;
  kind: string;
  listKind: string;
  /**
   * The group a 422 Invalid names (`<Kind>.<group> "name" is invalid`, `details.group`) when it is not
   * the served one: kube-apiserver names the first group its scheme registered the internal type in,
   * `extensions` for Ingresses and NetworkPolicies.
   */
  invalidGroup?: string;
  /** Lower-case plural, the URL segment. */
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Verbs shown in discovery (and allowed on the resource). */
  verbs: string[];
  /** `approval`: the CertificateSigningRequest subresource that writes only the approval conditions. */
  subresources: { status?: boolean; scale?: ScaleSubresource; approval?: boolean };
  generation: GenerationPolicy;
  /** Extra field-selector keys (e.g. pods `spec.nodeName`). `metadata.name`/`metadata.namespace` always work. */
  fieldSelectors?: Record<string, FieldGetter>;
  /**
   * The scheme's defaults (SetDefaults_*, scheme-defaults.ts), applied on every write: create, update,
   * every patch type and apply, as kube-apiserver applies them whenever it decodes an object.
   */
  defaults?: (obj: JsonObject) => void;
  /**
   * What only a create adds, after the defaults (the strategy's PrepareForCreate, admission,
   * allocation): pod phase, namespace finalizers, service cluster IPs...
   */
  defaultOnCreate?: (obj: JsonObject, requester?: Requester) => void;
  /** Delete answers with the deleted object instead of a Success Status (pods, serviceaccounts...). */
  returnDeletedObject?: boolean;
  /**
   * Graceful deletion (pods): the grace period to wait before the object really goes, or 0 to delete now.
   * Kinds without it delete immediately (when no finalizer holds them).
   */
  gracePeriod?: (obj: JsonObject, requested: number | undefined) => number;
  /** Kinds whose create keeps a client-sent status although they have a status subresource (nodes). */
  keepStatusOnCreate?: boolean;
  /** Admission of a delete (immortal namespaces): the 403 Forbidden's reason, or undefined to allow it. */
  refuseDelete?: (name: string) => string | undefined;
  /** Deletion beyond metadata.finalizers (namespaces: spec.finalizers and the Terminating phase). */
  deletion?: {
    /** True while something other than metadata.finalizers keeps a deleted object. */
    holds(obj: JsonObject): boolean;
    /** Applied when deletion starts (sets the Terminating phase). */
    markTerminating(obj: JsonObject): void;
  };
  /**
   * A view of another resource's storage in a different shape (events.k8s.io/v1 over core/v1 Events):
   * objects are stored as `storage` describes them and converted on the way in and out.
   */
  conversion?: {
    storage: ServedResource;
    fromStorage(obj: JsonObject): JsonObject;
    toStorage(obj: JsonObject): JsonObject;
  };
  /**
   * A version of a CRD whose conversion strategy is Webhook, other than the storage version: objects
   * are stored as `storage` describes them and converted by the CRD's webhook on every read and
   * write (the store's `converter`, rest/types.ts).
   */
  webhookConversion?: WebhookConversion;
  /** Storage bucket shared by all versions of one resource: `group/plural` unless set. */
  storageBucket?: string;
  /** CRD-backed resources: the additionalPrinterColumns of this version. */
  printerColumns?: PrinterColumn[];
  /** CRD-backed resources: the structural openAPIV3Schema of this version. */
  schema?: unknown;
  /** True for CRD-backed resources (validation, pruning, 415 for strategic merge). */
  custom?: boolean;
  /**
   * The kind's own update strategy beyond the generic one (pkg/registry/<group>/<kind>/strategy.go
   * PrepareForUpdate), applied to the next object with the stored one beside it.
   */
  updateStrategy?: {
    /**
     * The main resource, after the body was defaulted (CSRs keep spec and status: only metadata
     * changes there; DaemonSets count template changes).
     */
    main?(next: JsonObject, old: JsonObject): void;
    /**
     * The status subresource, after status was taken from the body into a copy of the stored object
     * (CSRs keep the approval conditions; Deployments take the body's metadata but its labels).
     */
    status?(next: JsonObject, old: JsonObject, input: JsonObject): void;
    /** The approval subresource: the next object from the stored one and the body. */
    approval?(old: JsonObject, input: JsonObject): JsonObject;
  };
  /**
   * A resource the server computes on every read instead of storing (componentstatuses): only get and
   * list are served, answering with these objects.
   */
  computed?: () => JsonObject[];
}

/** The verbs of an ordinary read-write resource. */
export const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/** `group/version`, or `version` for the core group. */
export function groupVersion(served: Pick<ServedResource, "group" | "version">): string {
  return served.group === "" ? served.version : `${served.group}/${served.version}`;
}

/** The storage bucket of a served resource. */
export function bucketOf(served: ServedResource): string {
  return served.storageBucket ?? `${served.group}/${served.plural}`;
}

/** The group and resource a Status error names. */
export function gr(served: ServedResource): GroupResource {
  return { group: served.group, resource: served.plural };
}

/** The key of an object inside its bucket. */
export function keyOf(served: ServedResource, namespace: string, name: string): string {
  return served.namespaced ? `${namespace}/${name}` : name;
}

/** A CRD's conversion webhook, as a version served through it needs it (apiextensions/v1 WebhookConversion). */
export interface WebhookConversion {
  /** The storage version's descriptor: where writes go, what reads start from. */
  storage: ServedResource;
  /** The CRD's name, for the webhook's metrics and messages. */
  crdName: string;
  clientConfig: {
    url?: string;
    caBundle?: string;
    service?: { name: string; namespace: string; path?: string; port?: number };
  };
  conversionReviewVersions: readonly string[];
}
