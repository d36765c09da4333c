/**
 * The types of the generic store's verbs: what a list, watch, write or delete takes and gives, and the
 * extension points (decoders, mutators, validators) a kind plugs into. The HTTP handlers, the in-process
 * API and the strategies import these, not the store (as kube's handlers take registry/rest's
 * interfaces and options).
 */
import type { ObjectMeta, Status } from "kubernetes-types/meta/v1.d.ts";
import type { WriteManager } from "../apply/write-tracking.ts";
import type { JsonObject, Requester, ServedResource, WebhookConversion } from "../registry/served-resource.ts";
import type { WarningSink } from "../request/warning-recorder.ts";
import type { FieldError } from "../validation/field-errors.ts";

/** ObjectMeta as the server writes it: the fields kubernetes-types marks readonly are the server's to set. */
export type MutableMeta = { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] } & Record<string, unknown>;

/** Query of a list or watch, as the URL carries it. */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

/** One page of a list: serialized items plus the list metadata. */
export interface ListPage {
  items: string[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * Options of a delete: what the client sent (the DeleteOptions admission is shown), and who asks.
 * The HTTP handler builds it from the request's known fields only, so a body cannot set `requester`
 * or `skipAdmission`.
 */
export interface DeleteOptions {
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  /** The authenticated user of the request, sent to admission as `userInfo`; absent for in-process deletes. */
  requester?: Requester;
  /** Receives admission's warnings, for the response's `Warning` headers. */
  warnings?: WarningSink;
  /** See {@link WriteOptions.requestedAs}. */
  requestedAs?: ServedResource;
  /**
   * Deletes without admission, as apiextensions' CRD finalizer deletes a CRD's objects through the
   * storage with rest.ValidateAllObjectFunc (crd_finalizer.go) rather than through the API.
   */
  skipAdmission?: boolean;
}

/** The outcome of a delete: the body the server answers with and whether the object is gone. */
export interface DeleteResult {
  deleted: boolean;
  body: JsonObject | Status;
}

/** What a watch hands its consumer: events with the object serialized, or one terminal error. */
export interface WatchSink {
  event(type: "ADDED" | "MODIFIED" | "DELETED", object: string): void;
  /** The watch cannot continue (410 and such); the consumer sends an ERROR event and closes. */
  error(status: Status): void;
  /**
   * The watch ends with no ERROR event, as kube-apiserver's watch server ends one whose event it
   * cannot encode (a failed conversion); consumers without it get `error` instead.
   */
  end?(): void;
}

/**
 * Stops a watch. `afterPending`, present when events reach the sink later than they happen (versions
 * converted by a webhook), runs `fn` once the events so far are delivered: a bookmark must not
 * overtake them.
 */
export type StopWatch = (() => void) & { afterPending?(fn: () => void): void };

/** Which part of the object a write addresses. */
export type WriteTarget = "main" | "status" | "finalize" | "approval";

/** Optional per-kind validation the CRD engineer's schema validation plugs into. */
export type ObjectValidator = (served: ServedResource, obj: JsonObject, old: JsonObject | undefined) => FieldError[];

/**
 * Mutation applied to objects before validation (schema defaulting and pruning). May return the paths
 * of the unknown fields it dropped (a string array), for `fieldValidation` to act on.
 */
export type ObjectMutator = (served: ServedResource, obj: JsonObject) => unknown;

/**
 * Decoding of a write's body, or of a patch's result, before anything else looks at it, as kube-apiserver's
 * decoder turns JSON into a typed object (built-in kinds: rest/builtin-decoding.ts). `prepare` returns a
 * promise while what `decode` needs for `served` is still loading (awaited, then not again); `decode`
 * throws for a value of the wrong type and returns the paths of the unknown fields it dropped.
 */
export interface ObjectDecoder {
  prepare(served: ServedResource): Promise<void> | undefined;
  decode(served: ServedResource, obj: JsonObject): string[] | undefined;
}

/** One write or delete as dynamic admission (webhooks, policies) sees it. */
export interface AdmissionRequestInfo {
  /** The resource the object is admitted as (its version is the object's). */
  served: ServedResource;
  /** The resource the client addressed (`requestKind`, `requestResource`); `served` when absent. */
  requested?: ServedResource;
  namespace: string;
  /** `""` for each object of a collection delete, as kube-apiserver's handler names none there. */
  name: string;
  operation: "CREATE" | "UPDATE" | "DELETE";
  /** `""` for the object itself. */
  subresource: string;
  /** A write's options; for a DELETE, its `dryRun`, `requester` and `warnings`. */
  options: WriteOptions;
  /** DELETE: what the client asked for, sent to admission as its DeleteOptions. */
  deleteOptions?: DeleteOptions;
}

/**
 * Dynamic admission the store runs on a write (admission/webhook-admission.ts): mutating webhooks
 * on the defaulted object, then the store validates again, then validating webhooks on the result.
 * On a DELETE (rest.AdmissionToValidateObjectDeleteFunc): `mutateDelete`, then `validate` with no
 * object, both with the stored object as `old`.
 */
export interface DynamicAdmission {
  /** Resolves with the object to go on with (`obj` itself when nothing changed it). */
  mutate(info: AdmissionRequestInfo, obj: JsonObject, old: JsonObject | undefined): Promise<JsonObject>;
  /**
   * The mutating phase of a DELETE: mutating webhooks are called (they may deny) but there is no
   * object to change. Rejects with the ApiError the delete fails with.
   */
  mutateDelete(info: AdmissionRequestInfo, old: JsonObject): Promise<void>;
  /** Rejects with the ApiError the write fails with. */
  validate(info: AdmissionRequestInfo, obj: JsonObject | undefined, old: JsonObject | undefined): Promise<void>;
}

/**
 * The conversion of custom objects between the versions of a CRD through its webhook
 * (conversion/conversion-webhook.ts): the objects not already in `apiVersion` are sent in one
 * ConversionReview; the answer keeps the order. Rejects with the ApiError the request fails with
 * (500, `conversion webhook for <group/version, Kind=kind> failed: ...`).
 */
export interface CustomResourceConverter {
  convert(conversion: WebhookConversion, objects: JsonObject[], apiVersion: string): Promise<JsonObject[]>;
}

/** How a write treats unknown fields (the `fieldValidation` query parameter). */
export type FieldValidation = "Strict" | "Warn" | "Ignore";

/** Options of a write. A bare boolean is `dryRun`, for callers of the first version of this API. */
export interface WriteOptions {
  dryRun?: boolean;
  /** Default Warn, as kube-apiserver's when the parameter is absent. */
  fieldValidation?: FieldValidation;
  /** Receives the warnings the response should carry (unknown fields under Warn, admission's). */
  warnings?: WarningSink;
  /**
   * The resource the client addressed, when the store writes through another one's storage (a
   * conversion view such as events.k8s.io Events, a CRD version its webhook converts): admission
   * reports it as the request's kind and resource. Set by the store itself.
   */
  requestedAs?: ServedResource;
  /** The caller hands the input over (a freshly decoded body): the store may change it instead of copying. */
  owned?: boolean;
  /** The authenticated user of the request, for strategies that record the requester (CSRs). */
  requester?: Requester;
  /** Who writes, for metadata.managedFields (apply/write-tracking.ts); absent for in-process writes. */
  fieldManager?: WriteManager;
  /**
   * Set by the store once the body went through its decoders, so that a conversion view's write is
   * decoded in the version the client sent, and only once.
   */
  decoded?: boolean;
  /**
   * The body of a strategic merge patch being applied: patch.go refuses its Strict unknown fields with
   * a 422 `patch: Invalid value: "<the patch as Go prints a map>"` instead of the decoder's 400.
   */
  strategicPatch?: string;
}
