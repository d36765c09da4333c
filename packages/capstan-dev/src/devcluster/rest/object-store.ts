/**
 * The generic registry of the devcluster: every verb's semantics over the revisioned storage, for any
 * served resource, as k8s.io/apiserver/pkg/registry/generic/registry/store.go and the per-kind strategies
 * give them. The HTTP handlers and the in-process API both call it, so a controller written against the
 * in-process API sees exactly what an HTTP client sees.
 *
 * ## Expected flow
 * Writes read the current stored object, compute the next one (metadata rules, strategy, status/spec
 * split, generation), validate it, and commit it with a compare-and-swap on the revision read. Patches
 * retry that loop when another writer got in between (GuaranteedUpdate), unless the client pinned a
 * resourceVersion.
 *
 * ## Guarantees
 * - An update carrying a stale `metadata.resourceVersion` fails with 409 Conflict; no write is lost.
 * - A write that changes nothing does not commit (no new resourceVersion, no watch event), as etcd3's
 *   GuaranteedUpdate skips identical bytes.
 * - Deleting an object with finalizers marks it (deletionTimestamp) and keeps it; the update that removes
 *   its last finalizer deletes it.
 *
 * ## Assumptions
 * - Objects are stored serialized (see storage.ts); every read that needs fields parses once.
 *
 * ## Caveats
 * - Validation is metadata plus, for custom resources, the CRD schema; built-in kinds' spec validation is
 *   not emulated (documented in docs/limitations.md).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { ObjectMeta, Status } from "kubernetes-types/meta/v1.d.ts";
import { trackCreate, trackWrite, type WriteManager } from "../apply/write-tracking.ts";
import { jsonEqual } from "../machinery/semantic-equal.ts";
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  failure,
  forbidden,
  type GroupResource,
  notFound,
  OPTIMISTIC_LOCK_ERROR_MSG,
  routeNotAllowed,
  success,
  tooLargeResourceVersion,
} from "../machinery/status.ts";
import { nowRfc3339, rfc3339 } from "../machinery/timestamps.ts";
import { bucketOf, groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import type { Change, Storage, StoredObject } from "../storage/storage.ts";
import { StorageError } from "../storage/storage.ts";
import { type FieldError, invalid as fieldInvalid, invalidStatus } from "../validation/field-errors.ts";
import { goValueV } from "../validation/go-format.ts";
import {
  prepareObjectMetaForUpdate,
  validateObjectMeta,
  validateObjectMetaUpdateCommon,
} from "../validation/object-meta.ts";
import { decodeContinue, encodeContinue } from "./continue-token.ts";
import { compileFieldSelector, matchesFields, parseFieldSelector } from "./field-selector.ts";
import { matchesLabels, parseLabelSelector } from "./label-selector.ts";
import { checkMetadataTypes } from "./meta-types.ts";

/** ObjectMeta as the server writes it: the fields kubernetes-types marks readonly are the server's to set. */
type MutableMeta = { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] } & Record<string, unknown>;

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

export interface DeleteOptions {
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
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
}

/** Which part of the object a write addresses. */
export type WriteTarget = "main" | "status" | "finalize";

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

/** How a write treats unknown fields (the `fieldValidation` query parameter). */
export type FieldValidation = "Strict" | "Warn" | "Ignore";

/** Options of a write. A bare boolean is `dryRun`, for callers of the first version of this API. */
export interface WriteOptions {
  dryRun?: boolean;
  /** Default Warn, as kube-apiserver's when the parameter is absent. */
  fieldValidation?: FieldValidation;
  /** Receives the warnings the response should carry (unknown fields under Warn). */
  warnings?: string[];
  /** The caller hands the input over (a freshly decoded body): the store may change it instead of copying. */
  owned?: boolean;
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

/**
 * `fieldValidation` on unknown fields (create.go/update.go): Strict fails the write with every field
 * listed, Warn adds one warning per field (a warning already given is not repeated, as the warning
 * recorder dedupes them), Ignore says nothing.
 */
function reportUnknownFields(served: ServedResource, unknown: readonly string[], options: WriteOptions): void {
  const fields = unknown.map((p) => `unknown field "${p}"`);
  const mode = options.fieldValidation ?? "Warn";
  if (mode === "Strict" && options.strategicPatch !== undefined) {
    throw strategicPatchInvalid(options.strategicPatch, `strict decoding error: ${fields.join(", ")}`);
  }
  if (mode === "Strict") {
    throw badRequest(
      `${served.kind} in version "${served.version}" cannot be handled as a ${served.kind}: strict decoding error: ${fields.join(", ")}`,
    );
  }
  if (mode === "Warn" && options.warnings) {
    for (const field of fields) if (!options.warnings.includes(field)) options.warnings.push(field);
  }
}

/** patch.go applyPatchToObject's refusal: a 422 with no kind nor name, the patch printed as Go's `%+v` of a map. */
function strategicPatchInvalid(patch: string, detail: string): ApiError {
  let value: unknown;
  try {
    value = JSON.parse(patch);
  } catch {
    value = patch;
  }
  const status = invalidStatus("", "", "", [fieldInvalid("patch", goValueV(value), detail)]);
  // metav1.StatusDetails' kind is omitempty.
  const { kind: _kind, ...details } = status.details;
  return new ApiError({ ...status, details } as unknown as Status);
}

function writeOptionsOf(options: WriteOptions | boolean | undefined): WriteOptions {
  return typeof options === "boolean" ? { dryRun: options } : (options ?? {});
}

/** Finalizers the garbage collector honours (metav1.FinalizerOrphanDependents / FinalizerDeleteDependents). */
export const FINALIZER_ORPHAN = "orphan";
export const FINALIZER_FOREGROUND = "foregroundDeletion";

/** How often a patch re-reads and re-applies after losing a race to another writer (GuaranteedUpdate retries). */
const MAX_PATCH_RETRIES = 16;

const GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
/** utilrand.String(5): the random suffix kube-apiserver appends to generateName. */
const GENERATED_SUFFIX_LENGTH = 5;

export class ObjectStore {
  /** Extra validation of objects (custom resource schemas). */
  readonly validators: ObjectValidator[] = [];
  /** Pruning and defaulting of objects before validation. */
  readonly mutators: ObjectMutator[] = [];
  /** Validation of `/status` writes (custom resources: rest/custom-status-strategy.ts); `validators` do not run there. */
  readonly statusValidators: ObjectValidator[] = [];
  /** Decoding of bodies and patch results (built-in kinds' Go structs), before the rest of a write. */
  readonly decoders: ObjectDecoder[] = [];

  constructor(readonly storage: Storage) {}

  // ---------------------------------------------------------------- reads

  /** The stored object, serialized in `served`'s version. 404 when absent. */
  get(served: ServedResource, namespace: string, name: string): string {
    const stored = this.storage.get(bucketOf(served), keyOf(served, namespace, name));
    if (!stored) throw notFound(gr(served), name);
    return present(served, stored.data);
  }

  /** The stored object, parsed. 404 when absent. */
  getObject(served: ServedResource, namespace: string, name: string): JsonObject {
    return JSON.parse(this.get(served, namespace, name)) as JsonObject;
  }

  /** One page of a list, with selectors, limit/continue and resourceVersion semantics. */
  list(served: ServedResource, namespace: string, query: ListQuery): ListPage {
    const bucket = bucketOf(served);
    const prefix = served.namespaced && namespace !== "" ? `${namespace}/` : "";
    const filter = compileFilter(served, query);
    // resourceVersion=0 is served from kube-apiserver's watch cache, which ignores limit: the whole
    // list, no continue token (cacher.go shouldDelegateList: "serve paginated requests about revision 0
    // from watch cache").
    const fromCache = query.resourceVersion === "0" && !query.continue;
    const limit = !fromCache && query.limit !== undefined && query.limit > 0 ? query.limit : undefined;

    let rev = this.storage.currentRevision();
    let start: string | undefined;
    let items: StoredObject[];
    if (query.continue) {
      const token = decodeContinue(query.continue);
      start = token.start;
      if (token.rv === -1) {
        items = this.storage.list(bucket, prefix, start);
      } else {
        rev = token.rv;
        try {
          items = this.storage.listAt(bucket, prefix, rev, start);
        } catch (err) {
          if (err instanceof StorageError && err.code === "TooOld") throw expiredContinue(start);
          throw err;
        }
      }
    } else {
      const requested = parseResourceVersion(query.resourceVersion);
      if (query.resourceVersionMatch === "Exact" && requested !== undefined) {
        if (requested > this.storage.currentRevision()) {
          throw tooLargeResourceVersion(requested, this.storage.currentRevision());
        }
        rev = requested;
        try {
          items = this.storage.listAt(bucket, prefix, rev);
        } catch (err) {
          if (err instanceof StorageError && err.code === "TooOld") {
            throw expired(`too old resource version: ${requested} (${err.rev})`);
          }
          throw err;
        }
      } else {
        if (requested !== undefined && requested > rev) throw tooLargeResourceVersion(requested, rev);
        items = this.storage.list(bucket, prefix);
      }
    }

    const out: string[] = [];
    let i = 0;
    for (; i < items.length; i++) {
      if (limit !== undefined && out.length >= limit) break;
      const item = items[i]!;
      if (filter && !filter(JSON.parse(item.data) as JsonObject)) continue;
      out.push(present(served, item.data));
    }
    const page: ListPage = { items: out, resourceVersion: String(rev) };
    if (i < items.length) {
      const last = items[i - 1]!;
      page.continue = encodeContinue(rev, last.key);
      if (!filter) page.remainingItemCount = items.length - i;
    }
    return page;
  }

  // ---------------------------------------------------------------- writes

  /** Creates an object (POST). Returns it as stored. */
  async create(
    served: ServedResource,
    namespace: string,
    input: JsonObject,
    options?: WriteOptions | boolean,
  ): Promise<string> {
    let opts = writeOptionsOf(options);
    if (this.decoders.length > 0 && !opts.decoded) ({ input, opts } = await this.decodeBody(served, input, opts));
    if (served.conversion) {
      const { storage, toStorage } = served.conversion;
      return present(served, await this.create(storage, namespace, toStorage(input), opts));
    }
    const { dryRun = false } = opts;
    const obj = this.prepareCreate(served, namespace, input, opts);
    const meta = obj.metadata as MutableMeta;
    const name = meta.name as string;
    if (served.namespaced) this.checkNamespaceAcceptsCreate(served, namespace, name);
    if (dryRun) {
      if (this.storage.get(bucketOf(served), keyOf(served, namespace, name))) throw alreadyExists(gr(served), name);
      delete meta.resourceVersion;
      return JSON.stringify(obj);
    }
    try {
      const stored = await this.storage.create(bucketOf(served), keyOf(served, namespace, name), (rev) => {
        // prepareCreate normalized obj with resourceVersion in place: filling it in keeps the key order.
        meta.resourceVersion = String(rev);
        return JSON.stringify(obj);
      });
      return present(served, stored.data);
    } catch (err) {
      if (err instanceof StorageError && err.code === "KeyExists") throw alreadyExists(gr(served), name);
      throw err;
    }
  }

  /**
   * Runs the decoders on a create or update body (once per write: the result is marked decoded, so the
   * storage-version call a conversion view makes does not decode again).
   */
  private async decodeBody(
    served: ServedResource,
    input: JsonObject,
    opts: WriteOptions,
  ): Promise<{ input: JsonObject; opts: WriteOptions }> {
    const pending = this.decodersPending(served);
    if (pending) await pending;
    const owned = opts.owned ? input : structuredClone(input);
    this.decode(served, owned, opts);
    return { input: owned, opts: { ...opts, owned: true, decoded: true } };
  }

  /** Replaces an object (PUT) or its status. Returns the stored object. */
  async update(
    served: ServedResource,
    namespace: string,
    name: string,
    input: JsonObject,
    target: WriteTarget = "main",
    options?: WriteOptions | boolean,
  ): Promise<string> {
    let opts = writeOptionsOf(options);
    if (this.decoders.length > 0 && !opts.decoded) ({ input, opts } = await this.decodeBody(served, input, opts));
    if (served.conversion) {
      const { storage, toStorage } = served.conversion;
      return present(served, await this.update(storage, namespace, name, toStorage(input), target, opts));
    }
    checkBodyIdentity(served, namespace, name, input);
    const inputMeta = (input.metadata ?? {}) as Record<string, unknown>;
    const requestedRv = typeof inputMeta["resourceVersion"] === "string" ? inputMeta["resourceVersion"] : "";
    const current = this.storage.get(bucketOf(served), keyOf(served, namespace, name));
    if (!current) throw notFound(gr(served), name);
    if (requestedRv === "" && served.custom) {
      throw invalid(served, name, [
        {
          type: "FieldValueInvalid",
          field: "metadata.resourceVersion",
          badValue: 0,
          detail: "must be specified for an update",
        },
      ]);
    }
    const expectedRev = requestedRv === "" ? current.rev : parseRv(requestedRv);
    if (expectedRev !== current.rev) throw conflict(gr(served), name, OPTIMISTIC_LOCK_ERROR_MSG);
    return this.commitUpdate(
      served,
      namespace,
      name,
      current,
      opts.owned ? input : structuredClone(input),
      target,
      opts,
    );
  }

  /**
   * Reads the current object, applies `mutate`, and writes the result, re-reading when another writer
   * got in first (GuaranteedUpdate). A result carrying a resourceVersion other than the one read is a
   * 409 Conflict (a patch that pins the version).
   */
  async guaranteedUpdate(
    served: ServedResource,
    namespace: string,
    name: string,
    target: WriteTarget,
    mutate: (current: JsonObject) => JsonObject,
    options?: WriteOptions | boolean,
  ): Promise<string> {
    let opts = writeOptionsOf(options);
    if (this.decoders.length > 0 && !opts.decoded) {
      // kube-apiserver decodes the patched result: its unknown fields are the patch's.
      const pending = this.decodersPending(served);
      if (pending) await pending;
      const apply = mutate;
      const decodeOpts = opts;
      mutate = (current) => {
        const next = apply(current);
        this.decode(served, next, decodeOpts);
        return next;
      };
      opts = { ...opts, decoded: true };
    }
    const view = served.conversion;
    if (view) {
      const data = await this.guaranteedUpdate(
        view.storage,
        namespace,
        name,
        target,
        (current) => view.toStorage(mutate(view.fromStorage(current))),
        opts,
      );
      return present(served, data);
    }
    for (let attempt = 0; ; attempt++) {
      const current = this.storage.get(bucketOf(served), keyOf(served, namespace, name));
      if (!current) throw notFound(gr(served), name);
      const currentObj = JSON.parse(present(served, current.data)) as JsonObject;
      const next = mutate(currentObj);
      const nextMeta = (next.metadata ?? {}) as Record<string, unknown>;
      const rv = nextMeta["resourceVersion"];
      if (typeof rv === "string" && rv !== "" && rv !== String(current.rev)) {
        throw conflict(gr(served), name, OPTIMISTIC_LOCK_ERROR_MSG);
      }
      if (rv === undefined || rv === "") nextMeta["resourceVersion"] = String(current.rev);
      next.metadata = nextMeta;
      try {
        checkBodyIdentity(served, namespace, name, next);
        return await this.commitUpdate(served, namespace, name, current, next, target, opts);
      } catch (err) {
        const raced = err instanceof StorageError && err.code === "Conflict";
        if (!raced || attempt >= MAX_PATCH_RETRIES)
          throw raced ? conflict(gr(served), name, OPTIMISTIC_LOCK_ERROR_MSG) : err;
      }
    }
  }

  /** Deletes an object (DELETE), honouring preconditions, finalizers, propagation and graceful deletion. */
  async delete(
    served: ServedResource,
    namespace: string,
    name: string,
    options: DeleteOptions = {},
  ): Promise<DeleteResult> {
    const refusal = served.refuseDelete?.(name);
    if (refusal !== undefined) throw forbidden(gr(served), name, refusal);
    const view = served.conversion;
    if (view) {
      const result = await this.delete(view.storage, namespace, name, options);
      const body = result.body as JsonObject;
      return body.kind === "Status" ? result : { ...result, body: view.fromStorage(body) };
    }
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.deleteOnce(served, namespace, name, options);
      } catch (err) {
        if (err instanceof StorageError && err.code === "Conflict" && attempt < MAX_PATCH_RETRIES) continue;
        if (err instanceof StorageError && err.code === "KeyNotFound") throw notFound(gr(served), name);
        throw err;
      }
    }
  }

  /** Deletes every object a list query selects (DELETE on the collection). Returns the List the server answers with. */
  async deleteCollection(
    served: ServedResource,
    namespace: string,
    query: ListQuery,
    options: DeleteOptions = {},
  ): Promise<JsonObject> {
    // A kind whose storage has no DeleteCollection (namespaces) has no such route: go-restful's 405.
    if (!served.verbs.includes("deletecollection")) throw routeNotAllowed();
    const view = served.conversion;
    if (view) {
      const list = await this.deleteCollection(view.storage, namespace, query, options);
      const items = (list["items"] as JsonObject[]).map((i) => view.fromStorage(i));
      return { ...list, kind: served.listKind, apiVersion: groupVersion(served), items };
    }
    const page = this.list(served, namespace, { ...query, limit: undefined, continue: undefined });
    const items: unknown[] = [];
    for (const data of page.items) {
      const obj = JSON.parse(data) as JsonObject;
      const meta = obj.metadata as Record<string, string>;
      try {
        const result = await this.delete(served, meta["namespace"] ?? "", meta["name"]!, {
          ...options,
          preconditions: undefined,
        });
        items.push(result.deleted ? obj : result.body);
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) continue; // deleted meanwhile: nothing to do
        throw err;
      }
    }
    return {
      kind: served.listKind,
      apiVersion: groupVersion(served),
      metadata: { resourceVersion: String(this.storage.currentRevision()) },
      items,
    };
  }

  // ---------------------------------------------------------------- watch

  /**
   * Watches a resource (optionally one namespace) with selectors. With no resourceVersion or "0", first
   * sends the current objects as ADDED events; with a version, replays every change after it, or reports
   * 410 Expired through `sink.error` when the history no longer reaches back that far.
   * Returns the function that stops the watch.
   */
  watch(
    served: ServedResource,
    namespace: string,
    query: ListQuery,
    sink: WatchSink,
    sendInitialEvents?: boolean,
  ): () => void {
    const bucket = bucketOf(served);
    const prefix = served.namespaced && namespace !== "" ? `${namespace}/` : "";
    const filter = compileFilter(served, query);
    const requested = parseResourceVersion(query.resourceVersion);
    const initial = sendInitialEvents ?? (requested === undefined || requested === 0);
    let from: number;
    if (initial) {
      from = this.storage.currentRevision();
      for (const item of this.storage.list(bucket, prefix)) {
        if (filter && !filter(JSON.parse(item.data) as JsonObject)) continue;
        sink.event("ADDED", present(served, item.data));
      }
    } else {
      from = requested ?? this.storage.currentRevision();
      if (from > this.storage.currentRevision()) {
        // A version the store has not reached (the HTTP layer waited for it first, as the cacher does).
        sink.error(tooLargeResourceVersion(from, this.storage.currentRevision()).status);
        return () => {};
      }
    }
    const onChange = (change: Change) => {
      if (prefix !== "" && !change.key.startsWith(prefix)) return;
      if (!filter) {
        sink.event(change.type, present(served, change.data));
        return;
      }
      const now = filter(parsed(change));
      const before = change.prev !== undefined && change.type !== "DELETED" ? filter(parsedPrev(change)) : false;
      if (change.type === "DELETED") {
        if (filter(parsedPrev(change))) sink.event("DELETED", present(served, change.data));
      } else if (change.type === "ADDED") {
        if (now) sink.event("ADDED", present(served, change.data));
      } else if (now && before) sink.event("MODIFIED", present(served, change.data));
      else if (now) sink.event("ADDED", present(served, change.data));
      else if (before) {
        // Left the selection: DELETED carrying the previous state at the new revision (cacher's convertToWatchEvent).
        const prev = parsedPrev(change);
        const meta = { ...(prev.metadata ?? {}), resourceVersion: String(change.rev) };
        sink.event("DELETED", present(served, serialize({ ...prev, metadata: meta })));
      }
    };
    try {
      return this.storage.watch(from, onChange, bucket);
    } catch (err) {
      if (err instanceof StorageError && err.code === "TooOld") {
        sink.error(failure(410, "Expired", `too old resource version: ${from} (${err.rev})`));
        return () => {};
      }
      throw err;
    }
  }

  // ---------------------------------------------------------------- internals

  private prepareCreate(
    served: ServedResource,
    namespace: string,
    input: JsonObject,
    options: WriteOptions,
  ): JsonObject {
    checkMetadataTypes(served, input);
    const source = options.owned ? input : structuredClone(input);
    const inMeta = (source.metadata && typeof source.metadata === "object" ? source.metadata : {}) as Record<
      string,
      unknown
    >;
    if (served.namespaced) {
      const bodyNs = inMeta["namespace"];
      if (typeof bodyNs === "string" && bodyNs !== "" && bodyNs !== namespace) {
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      }
      inMeta["namespace"] = namespace;
    } else delete inMeta["namespace"];
    if (
      (inMeta["name"] === undefined || inMeta["name"] === "") &&
      typeof inMeta["generateName"] === "string" &&
      inMeta["generateName"] !== ""
    ) {
      inMeta["name"] = inMeta["generateName"] + randomSuffix();
    }
    inMeta["uid"] = randomUUID();
    inMeta["creationTimestamp"] = nowRfc3339();
    delete inMeta["resourceVersion"];
    delete inMeta["deletionTimestamp"];
    delete inMeta["deletionGracePeriodSeconds"];
    delete inMeta["selfLink"];
    if (served.generation !== "none") inMeta["generation"] = 1;
    else delete inMeta["generation"];
    source.metadata = inMeta;
    if (served.subresources.status && !served.keepStatusOnCreate) delete source["status"];
    const obj: JsonObject = { ...source, apiVersion: groupVersion(served), kind: served.kind };
    served.defaults?.(obj);
    this.mutate(served, obj, options);
    // The field manager sees the decoded, defaulted object: what PrepareForCreate adds is nobody's.
    trackCreate(served, obj, options.fieldManager);
    served.defaultOnCreate?.(obj);
    const errors = validateObjectMeta(obj.metadata as ObjectMeta, {
      namespaced: served.namespaced,
      // RBAC objects only need URL-safe names (ValidateRBACName): `system:discovery` is valid.
      nameRule:
        served.plural === "namespaces"
          ? "dns1123label"
          : served.group === "rbac.authorization.k8s.io"
            ? "pathSegment"
            : "dns1123subdomain",
    });
    for (const validate of this.validators) errors.push(...validate(served, obj, undefined));
    if (errors.length > 0) throw invalid(served, String(inMeta["name"] ?? ""), errors);
    // Holds resourceVersion's place in ObjectMeta's order; the write fills it in (create) without normalizing again.
    (obj.metadata as MutableMeta).resourceVersion = "";
    return normalize(obj);
  }

  /** Runs the mutators, then applies `fieldValidation` to the unknown fields they dropped. */
  private mutate(served: ServedResource, obj: JsonObject, options: WriteOptions): void {
    const unknown: string[] = [];
    for (const mutate of this.mutators) {
      const dropped = mutate(served, obj);
      if (Array.isArray(dropped)) unknown.push(...(dropped as string[]));
    }
    if (unknown.length > 0) reportUnknownFields(served, unknown, options);
  }

  /** The load to await before {@link decode} can run for `served`, if one is under way. */
  private decodersPending(served: ServedResource): Promise<unknown> | undefined {
    if (this.decoders.length === 1) return this.decoders[0]!.prepare(served);
    const pending = this.decoders.map((d) => d.prepare(served)).filter((p) => p !== undefined);
    return pending.length > 0 ? Promise.all(pending) : undefined;
  }

  /** Runs the decoders on `obj` (in place), then applies `fieldValidation` to the unknown fields they dropped. */
  private decode(served: ServedResource, obj: JsonObject, options: WriteOptions): void {
    for (const decoder of this.decoders) {
      const unknown = decoder.decode(served, obj);
      if (unknown) reportUnknownFields(served, unknown, options);
    }
  }

  private checkNamespaceAcceptsCreate(served: ServedResource, namespace: string, name: string): void {
    const ns = this.storage.get("/namespaces", namespace);
    if (!ns) throw notFound({ group: "", resource: "namespaces" }, namespace);
    if (namespaceTerminating(this.storage, ns)) {
      const why = `unable to create new content in namespace ${namespace} because it is being terminated`;
      throw forbidden(gr(served), name, why, [
        { reason: "NamespaceTerminating", message: why, field: "metadata.namespace" },
      ]);
    }
  }

  private async commitUpdate(
    served: ServedResource,
    namespace: string,
    name: string,
    current: StoredObject,
    input: JsonObject,
    target: WriteTarget,
    options: WriteOptions,
  ): Promise<string> {
    const dryRun = options.dryRun ?? false;
    const old = JSON.parse(current.data) as JsonObject;
    const prepared = this.prepareUpdate(served, old, input, target, String(current.rev), options);
    const next = trackWrite(served, old, prepared, input, target, options.fieldManager);
    const nextMeta = next.metadata as Record<string, unknown>;
    const bucket = bucketOf(served);
    const key = keyOf(served, namespace, name);
    // Removing the last finalizer of an object being deleted deletes it (store.go ShouldDeleteDuringUpdate):
    // only when a delete request was made and its grace period is over (nil or 0). A pod in graceful
    // deletion keeps living through its kubelet's status writes until the kubelet deletes it with grace 0.
    if (shouldDeleteDuringUpdate(served, old, next)) {
      if (dryRun) return JSON.stringify(next);
      const deleted = await this.storage.delete(bucket, key, current.rev, (rev) => {
        nextMeta["resourceVersion"] = String(rev);
        return serialize(next);
      });
      return present(served, deleted.data);
    }
    nextMeta["resourceVersion"] = String(current.rev);
    const unchanged = serialize(next);
    if (unchanged === current.data || jsonEqual(JSON.parse(unchanged), old)) return present(served, current.data);
    if (dryRun) return unchanged;
    const stored = await this.storage.update(bucket, key, current.rev, (rev) => {
      nextMeta["resourceVersion"] = String(rev);
      return serialize(next);
    });
    return present(served, stored.data);
  }

  /** BeforeUpdate plus the kind's strategy: what an update may change, and what it bumps. */
  private prepareUpdate(
    served: ServedResource,
    old: JsonObject,
    input: JsonObject,
    target: WriteTarget,
    rv: string,
    options: WriteOptions,
  ): JsonObject {
    let next: JsonObject;
    if (target === "status") {
      // The body is decoded (defaulted, pruned, fieldValidation) as a whole, then only its status is
      // taken: status strategies keep spec and metadata.
      this.mutate(served, input, options);
      next = structuredClone(old);
      if (input["status"] === undefined) delete next["status"];
      else next["status"] = input["status"];
      (next.metadata as Record<string, unknown>)["resourceVersion"] = rv;
      const statusErrors: FieldError[] = [];
      for (const validate of this.statusValidators) statusErrors.push(...validate(served, next, old));
      const name = String((old.metadata as MutableMeta).name ?? "");
      if (statusErrors.length > 0) throw invalid(served, name, statusErrors);
      return normalize(next);
    }
    if (target === "finalize") {
      next = structuredClone(old);
      const spec = (next["spec"] ?? {}) as Record<string, unknown>;
      const inputSpec = (input["spec"] ?? {}) as Record<string, unknown>;
      spec["finalizers"] = inputSpec["finalizers"] ?? [];
      next["spec"] = spec;
      return normalize(next);
    }
    checkMetadataTypes(served, input);
    next = { ...input, apiVersion: groupVersion(served), kind: served.kind };
    const meta = (next.metadata && typeof next.metadata === "object" ? next.metadata : {}) as MutableMeta;
    next.metadata = meta;
    const oldMeta = old.metadata as MutableMeta;
    prepareObjectMetaForUpdate(meta, oldMeta);
    meta.resourceVersion = rv;
    if (served.namespaced) meta.namespace = oldMeta.namespace;
    if (served.subresources.status) {
      if (old["status"] === undefined) delete next["status"];
      else next["status"] = old["status"];
    }
    served.defaults?.(next);
    this.mutate(served, next, options);
    const errors = validateObjectMetaUpdateCommon(meta, oldMeta, served.namespaced);
    for (const validate of this.validators) errors.push(...validate(served, next, old));
    if (errors.length > 0) throw invalid(served, String(meta.name ?? ""), errors);
    if (oldMeta.generation !== undefined && generationChanged(served, old, next)) {
      meta.generation = (oldMeta.generation ?? 0) + 1;
    }
    return normalize(next);
  }

  private async deleteOnce(
    served: ServedResource,
    namespace: string,
    name: string,
    options: DeleteOptions,
  ): Promise<DeleteResult> {
    const bucket = bucketOf(served);
    const key = keyOf(served, namespace, name);
    const current = this.storage.get(bucket, key);
    if (!current) throw notFound(gr(served), name);
    const obj = JSON.parse(present(served, current.data)) as JsonObject;
    const meta = obj.metadata as MutableMeta;
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== meta.uid) {
      throw conflict(
        gr(served),
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid ?? ""}`,
      );
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== meta.resourceVersion) {
      throw conflict(
        gr(served),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ""}`,
      );
    }

    // Finalizers the garbage collector needs for the requested propagation (deletionFinalizersForGarbageCollection).
    const finalizers = new Set(Array.isArray(meta.finalizers) ? (meta.finalizers as string[]) : []);
    const policy =
      options.propagationPolicy ??
      (options.orphanDependents === true ? "Orphan" : options.orphanDependents === false ? "Background" : undefined);
    let finalizersChanged = false;
    if (policy === "Orphan" && !finalizers.has(FINALIZER_ORPHAN)) {
      finalizers.add(FINALIZER_ORPHAN);
      finalizers.delete(FINALIZER_FOREGROUND);
      finalizersChanged = true;
    } else if (policy === "Foreground" && !finalizers.has(FINALIZER_FOREGROUND)) {
      finalizers.add(FINALIZER_FOREGROUND);
      finalizers.delete(FINALIZER_ORPHAN);
      finalizersChanged = true;
    } else if (policy === "Background" && (finalizers.has(FINALIZER_ORPHAN) || finalizers.has(FINALIZER_FOREGROUND))) {
      finalizers.delete(FINALIZER_ORPHAN);
      finalizers.delete(FINALIZER_FOREGROUND);
      finalizersChanged = true;
    }
    if (finalizersChanged) meta.finalizers = [...finalizers];

    const grace = served.gracePeriod ? served.gracePeriod(obj, options.gracePeriodSeconds) : 0;
    const holds = finalizers.size > 0 || (served.deletion?.holds(obj) ?? false);
    if (!holds && grace === 0) {
      if (options.dryRun)
        return { deleted: true, body: served.returnDeletedObject ? obj : deletedStatus(served, meta) };
      const deleted = await this.storage.delete(bucket, key, current.rev, (rev) => {
        meta.resourceVersion = String(rev);
        return serialize(obj);
      });
      return {
        deleted: true,
        body: served.returnDeletedObject
          ? (JSON.parse(present(served, deleted.data)) as JsonObject)
          : deletedStatus(served, meta),
      };
    }

    // Graceful or held by finalizers: mark it (BeforeDelete) and keep it.
    let changed = finalizersChanged;
    if (!meta.deletionTimestamp) {
      const now = Date.now();
      meta.deletionTimestamp = rfc3339(new Date(now + grace * 1000));
      meta.deletionGracePeriodSeconds = grace;
      // A first graceful deletion bumps generation, where the kind has one (rest/delete.go).
      if (typeof meta.generation === "number" && meta.generation > 0) meta.generation = meta.generation + 1;
      served.deletion?.markTerminating(obj);
      changed = true;
    } else if (
      grace > 0 &&
      typeof meta.deletionGracePeriodSeconds === "number" &&
      grace < meta.deletionGracePeriodSeconds
    ) {
      // A shorter grace period shortens a pending graceful deletion.
      meta.deletionTimestamp = rfc3339(new Date(Date.now() + grace * 1000));
      meta.deletionGracePeriodSeconds = grace;
      changed = true;
    }
    if (!changed || options.dryRun) return { deleted: false, body: obj };
    const stored = await this.storage.update(bucket, key, current.rev, (rev) => {
      meta.resourceVersion = String(rev);
      return serialize(normalize(obj));
    });
    return { deleted: false, body: JSON.parse(present(served, stored.data)) as JsonObject };
  }
}

// ---------------------------------------------------------------- helpers of this module

export function gr(served: ServedResource): GroupResource {
  return { group: served.group, resource: served.plural };
}

/** The key of an object inside its bucket. */
export function keyOf(served: ServedResource, namespace: string, name: string): string {
  return served.namespaced ? `${namespace}/${name}` : name;
}

function invalid(served: ServedResource, name: string, errors: FieldError[]): ApiError {
  return new ApiError(invalidStatus(served.group, served.kind, name, errors) as unknown as Status);
}

/**
 * Whether a stored namespace is terminating, cached per storage, namespace and revision (every
 * namespaced create asks; storage reads may hand out a new StoredObject each time, so identity cannot be
 * the key).
 * One entry per namespace ever seen by that storage.
 */
const terminatingCache = new WeakMap<Storage, Map<string, { rev: number; terminating: boolean }>>();
function namespaceTerminating(storage: Storage, ns: StoredObject): boolean {
  let byName = terminatingCache.get(storage);
  if (!byName) {
    byName = new Map();
    terminatingCache.set(storage, byName);
  }
  const cached = byName.get(ns.key);
  if (cached?.rev === ns.rev) return cached.terminating;
  const parsedNs = JSON.parse(ns.data) as { metadata?: { deletionTimestamp?: string }; status?: { phase?: string } };
  const terminating = Boolean(parsedNs.metadata?.deletionTimestamp) || parsedNs.status?.phase === "Terminating";
  byName.set(ns.key, { rev: ns.rev, terminating });
  return terminating;
}

function shouldDeleteDuringUpdate(served: ServedResource, old: JsonObject, next: JsonObject): boolean {
  if (hasHolds(served, next)) return false;
  const oldMeta = old.metadata as { deletionTimestamp?: string; deletionGracePeriodSeconds?: number | null };
  if (!oldMeta.deletionTimestamp) return false;
  return oldMeta.deletionGracePeriodSeconds == null || oldMeta.deletionGracePeriodSeconds === 0;
}

function hasHolds(served: ServedResource, obj: JsonObject): boolean {
  const finalizers = (obj.metadata as { finalizers?: unknown[] }).finalizers;
  if (Array.isArray(finalizers) && finalizers.length > 0) return true;
  return served.deletion?.holds(obj) ?? false;
}

function deletedStatus(served: ServedResource, meta: ObjectMeta): Status {
  return success({ name: meta.name, group: served.group, kind: served.plural, uid: meta.uid });
}

function checkBodyIdentity(served: ServedResource, namespace: string, name: string, input: JsonObject): void {
  const meta = (input.metadata ?? {}) as Record<string, unknown>;
  const bodyName = meta["name"];
  if (typeof bodyName === "string" && bodyName !== "" && bodyName !== name) {
    throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  }
  if (bodyName === undefined || bodyName === "") meta["name"] = name;
  const bodyNs = meta["namespace"];
  if (served.namespaced && typeof bodyNs === "string" && bodyNs !== "" && bodyNs !== namespace) {
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  input.metadata = meta;
}

function generationChanged(served: ServedResource, old: JsonObject, next: JsonObject): boolean {
  switch (served.generation) {
    case "none":
      return false;
    case "spec":
      return !jsonEqual(old["spec"], next["spec"]);
    case "spec-and-annotations":
      return (
        !jsonEqual(old["spec"], next["spec"]) ||
        !jsonEqual((old.metadata as ObjectMeta).annotations ?? {}, (next.metadata as ObjectMeta).annotations ?? {})
      );
    case "all-but-metadata-and-status": {
      const strip = (o: JsonObject) => {
        const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
        return served.subresources.status ? rest : { ...rest, status: o["status"] };
      };
      return !jsonEqual(strip(old), strip(next));
    }
  }
}

/** The filter a list or watch applies, or undefined when it selects everything. Throws a 400 for a bad selector. */
function compileFilter(served: ServedResource, query: ListQuery): ((obj: JsonObject) => boolean) | undefined {
  const labels = query.labelSelector ? tryParse(() => parseLabelSelector(query.labelSelector!)) : [];
  const fields = query.fieldSelector
    ? tryParse(() => compileFieldSelector(served, parseFieldSelector(query.fieldSelector!)))
    : [];
  if (labels.length === 0 && fields.length === 0) return undefined;
  return (obj) =>
    matchesLabels(labels, (obj.metadata as { labels?: Record<string, string> } | undefined)?.labels) &&
    matchesFields(fields, obj);
}

function tryParse<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}

function parseResourceVersion(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  return parseRv(value);
}

function parseRv(value: string): number {
  if (!/^\d+$/.test(value)) {
    throw badRequest(`invalid resource version "${value}": strconv.ParseUint: parsing "${value}": invalid syntax`);
  }
  return Number(value);
}

/** etcd3's inconsistentContinue answer: 410 with a token that resumes, inconsistently, at the latest state. */
function expiredContinue(start: string): ApiError {
  const error = expired(
    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
  );
  // rv -1 reads the latest state; `start` already carries the NUL successor of the last key sent.
  error.status.metadata = {
    continue: Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: -1, start })).toString("base64url"),
  };
  return error;
}

const parsedCache = new WeakMap<Change, JsonObject>();
const parsedPrevCache = new WeakMap<Change, JsonObject>();

function parsed(change: Change): JsonObject {
  let obj = parsedCache.get(change);
  if (!obj) {
    obj = JSON.parse(change.data) as JsonObject;
    parsedCache.set(change, obj);
  }
  return obj;
}

function parsedPrev(change: Change): JsonObject {
  let obj = parsedPrevCache.get(change);
  if (!obj) {
    obj = JSON.parse(change.prev ?? change.data) as JsonObject;
    parsedPrevCache.set(change, obj);
  }
  return obj;
}

/**
 * The serialized object as `served`'s version shows it. Versions of one resource share storage; with
 * no conversion webhook (CRD conversion strategy None) only apiVersion differs.
 */
function present(served: ServedResource, data: string): string {
  if (served.conversion) return serialize(served.conversion.fromStorage(JSON.parse(data) as JsonObject));
  const apiVersion = groupVersion(served);
  if (data.startsWith(presentedHead(apiVersion))) return data;
  const obj = JSON.parse(data) as JsonObject;
  return serialize({ ...obj, apiVersion });
}

/** `{"apiVersion":"<v>",` per apiVersion, built once: every read and write response checks it. */
const presentedHeads = new Map<string, string>();
function presentedHead(apiVersion: string): string {
  let head = presentedHeads.get(apiVersion);
  if (head === undefined) {
    head = `{"apiVersion":${JSON.stringify(apiVersion)},`;
    presentedHeads.set(apiVersion, head);
  }
  return head;
}

const META_ORDER = [
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
];

/** apiVersion, kind, metadata first, metadata keys in ObjectMeta's field order: the JSON the real server prints. */
function normalize(obj: JsonObject): JsonObject {
  const { apiVersion, kind, metadata, ...rest } = obj;
  const meta: Record<string, unknown> = {};
  const source = (metadata ?? {}) as Record<string, unknown>;
  for (const key of META_ORDER) if (source[key] !== undefined) meta[key] = source[key];
  for (const key of Object.keys(source)) if (!(key in meta) && source[key] !== undefined) meta[key] = source[key];
  return { apiVersion, kind, metadata: meta, ...rest };
}

function serialize(obj: JsonObject): string {
  return JSON.stringify(normalize(obj));
}

function randomSuffix(): string {
  const bytes = randomBytes(GENERATED_SUFFIX_LENGTH);
  let out = "";
  for (const b of bytes) out += GENERATE_NAME_ALPHABET[b % GENERATE_NAME_ALPHABET.length];
  return out;
}
