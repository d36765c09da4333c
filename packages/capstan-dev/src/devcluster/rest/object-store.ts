/**
 * The generic registry of the devcluster: every verb's semantics over the revisioned storage, for any
 * served resource, as k8s.io/apiserver/pkg/registry/generic/registry/store.go and the per-kind strategies
 * give them. The HTTP handlers and the in-process API both call it, so a controller written against the
 * in-process API sees exactly what an HTTP client sees.
 *
 * This file holds the verbs; beside it, strategy.ts (what a create or update may change, kube's
 * rest/create.go and update.go), deletion.ts (preconditions, finalizers, graceful deletion), encoding.ts
 * (key order, the version a client sees) and types.ts (the verbs' options and results, the extension points).
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
 * - Writes and deletes go through `admission` (a delete: on the stored object, before anything is marked
 *   or removed, again on each retry); a refusal changes nothing.
 *
 * ## Assumptions
 * - Objects are stored serialized (see storage.ts); every read that needs fields parses once.
 *
 * ## Caveats
 * - Validation is metadata plus, for custom resources, the CRD schema; built-in kinds' spec validation is
 *   not emulated (documented in docs/limitations.md).
 */
import { trackWrite } from "../apply/write-tracking.ts";
import { jsonEqual } from "../machinery/semantic-equal.ts";
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  failure,
  forbidden,
  notFound,
  OPTIMISTIC_LOCK_ERROR_MSG,
  routeNotAllowed,
  tooLargeResourceVersion,
} from "../machinery/status.ts";
import {
  bucketOf,
  gr,
  groupVersion,
  type JsonObject,
  keyOf,
  type ServedResource,
  type WebhookConversion,
} from "../registry/served-resource.ts";
import type { Change, Storage, StoredObject } from "../storage/storage.ts";
import { StorageError } from "../storage/storage.ts";
import { decodeContinue, encodeContinue } from "./continue-token.ts";
import { type DeleteValidation, deleteOnce, shouldDeleteDuringUpdate } from "./deletion.ts";
import { present, serialize } from "./encoding.ts";
import { compileFieldSelector, matchesFields, parseFieldSelector } from "./field-selector.ts";
import { matchesLabels, parseLabelSelector } from "./label-selector.ts";
import { refuseCreateInNamespace } from "./namespace-lifecycle.ts";
import { checkUpdateUid, storedUid } from "./preconditions.ts";
import {
  beforeCreate,
  checkBodyIdentity,
  decodeCreate,
  invalid,
  prepareUpdate,
  reportUnknownFields,
  runMutators,
  validateUpdated,
} from "./strategy.ts";
import type {
  AdmissionRequestInfo,
  CustomResourceConverter,
  DeleteOptions,
  DeleteResult,
  DynamicAdmission,
  ListPage,
  ListQuery,
  MutableMeta,
  ObjectDecoder,
  ObjectMutator,
  ObjectValidator,
  StopWatch,
  WatchSink,
  WriteOptions,
  WriteTarget,
} from "./types.ts";
import { convertingSink, presentConverted, toStorageVersion } from "./webhook-converted.ts";

/**
 * The options of the storage-version half of a converted write: the client's version already had its
 * unknown fields reported; what the conversion leaves unknown to the storage schema is pruned silently.
 */
function quietly(opts: WriteOptions): WriteOptions {
  return { ...opts, fieldValidation: "Ignore", owned: true };
}

/** `options` of a write that goes on through another resource's storage: admission still reports `served` as requested. */
function requestedAs<O extends WriteOptions | DeleteOptions>(served: ServedResource, options: O): O {
  return options.requestedAs ? options : { ...options, requestedAs: served };
}

function writeOptionsOf(options: WriteOptions | boolean | undefined): WriteOptions {
  return typeof options === "boolean" ? { dryRun: options } : (options ?? {});
}

/** How often a patch re-reads and re-applies after losing a race to another writer (GuaranteedUpdate retries). */
const MAX_PATCH_RETRIES = 16;

export class ObjectStore {
  /** Extra validation of objects (custom resource schemas). */
  readonly validators: ObjectValidator[] = [];
  /** Admission webhooks (admission/webhook-admission.ts); none when absent. */
  admission: DynamicAdmission | undefined;
  /** Conversion of custom objects through their CRD's webhook (conversion/conversion-webhook.ts). */
  converter: CustomResourceConverter | undefined;
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

  /**
   * The stored object in `served`'s version, converted by the CRD's webhook when its versions are
   * (what the HTTP API answers; {@link get} gives such objects in the storage version).
   */
  async read(served: ServedResource, namespace: string, name: string): Promise<string> {
    const data = this.get(served, namespace, name);
    const conversion = served.webhookConversion;
    if (!conversion) return data;
    return (await presentConverted(this.converter, served, conversion, [data]))[0]!;
  }

  /** {@link list}, with the items converted as {@link read} converts them. */
  async readList(served: ServedResource, namespace: string, query: ListQuery): Promise<ListPage> {
    const page = this.list(served, namespace, query);
    const conversion = served.webhookConversion;
    if (!conversion) return page;
    return { ...page, items: await presentConverted(this.converter, served, conversion, page.items) };
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
    // Admission (NamespaceLifecycle) runs on the decoded body, before it is converted to the storage
    // version (the refusal names the resource the client wrote to), validated or named.
    if (served.namespaced) refuseCreateInNamespace(this.storage, gr(served), namespace, input);
    if (served.conversion) {
      const { storage, toStorage } = served.conversion;
      return present(served, await this.create(storage, namespace, toStorage(input), requestedAs(served, opts)));
    }
    const conversion = served.webhookConversion;
    if (conversion) {
      const stored = await this.toStorageVersion(served, conversion, input, opts);
      const data = await this.create(conversion.storage, namespace, stored, quietly(requestedAs(served, opts)));
      return (await presentConverted(this.converter, served, conversion, [data]))[0]!;
    }
    const { dryRun = false } = opts;
    // handlers/create.go then store.Create: mutating admission sees the decoded body, before it is
    // named from generateName or given a uid, creationTimestamp and generation (BeforeCreate);
    // validation and validating admission see the prepared object.
    let decoded = decodeCreate(this, served, namespace, input, opts);
    const info = {
      served,
      ...(opts.requestedAs ? { requested: opts.requestedAs } : {}),
      namespace,
      name: String((decoded.metadata as MutableMeta).name ?? ""),
      operation: "CREATE" as const,
      subresource: "",
      options: opts,
    };
    if (this.admission !== undefined) {
      const mutated = await this.admission.mutate(info, decoded, undefined);
      // A mutated object is decoded again: defaulted, pruned, its unknown fields reported.
      if (mutated !== decoded) decoded = decodeCreate(this, served, namespace, mutated, opts);
    }
    const obj = beforeCreate(this, served, decoded, opts);
    if (this.admission !== undefined) {
      // The name generated from generateName is the one validating admission is told (AdmissionToValidateObjectFunc).
      const name = String((obj.metadata as MutableMeta).name ?? "");
      await this.admission.validate({ ...info, name }, obj, undefined);
    }
    const meta = obj.metadata as MutableMeta;
    const name = meta.name as string;
    if (dryRun) {
      if (this.storage.get(bucketOf(served), keyOf(served, namespace, name))) throw alreadyExists(gr(served), name);
      delete meta.resourceVersion;
      return JSON.stringify(obj);
    }
    try {
      const stored = await this.storage.create(bucketOf(served), keyOf(served, namespace, name), (rev) => {
        // beforeCreate normalized obj with resourceVersion in place: filling it in keeps the key order.
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
      return present(
        served,
        await this.update(storage, namespace, name, toStorage(input), target, requestedAs(served, opts)),
      );
    }
    const conversion = served.webhookConversion;
    if (conversion) {
      const stored = await this.toStorageVersion(served, conversion, input, opts);
      const data = await this.update(
        conversion.storage,
        namespace,
        name,
        stored,
        target,
        quietly(requestedAs(served, opts)),
      );
      return (await presentConverted(this.converter, served, conversion, [data]))[0]!;
    }
    checkBodyIdentity(served, namespace, name, input);
    const inputMeta = (input.metadata ?? {}) as Record<string, unknown>;
    const requestedRv = typeof inputMeta["resourceVersion"] === "string" ? inputMeta["resourceVersion"] : "";
    const current = this.storage.get(bucketOf(served), keyOf(served, namespace, name));
    if (!current) throw notFound(gr(served), name);
    // The body's uid is a storage precondition, checked before anything else about the update.
    const uid = inputMeta["uid"];
    if (typeof uid === "string" && uid !== "") checkUpdateUid(served, namespace, name, uid, storedUid(current.data));
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
    mutate: (current: JsonObject) => JsonObject | Promise<JsonObject>,
    options?: WriteOptions | boolean,
  ): Promise<string> {
    let opts = writeOptionsOf(options);
    if (this.decoders.length > 0 && !opts.decoded) {
      // kube-apiserver decodes the patched result: its unknown fields are the patch's.
      const pending = this.decodersPending(served);
      if (pending) await pending;
      const apply = mutate;
      const decodeOpts = opts;
      mutate = async (current) => {
        const next = await apply(current);
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
        async (current) => view.toStorage(await mutate(view.fromStorage(current))),
        requestedAs(served, opts),
      );
      return present(served, data);
    }
    const conversion = served.webhookConversion;
    if (conversion) {
      // The patch applies to the object in the client's version, as kube-apiserver's patcher reads it.
      const data = await this.guaranteedUpdate(
        conversion.storage,
        namespace,
        name,
        target,
        async (current) => {
          const [shown] = await presentConverted(this.converter, served, conversion, [JSON.stringify(current)]);
          return this.toStorageVersion(served, conversion, await mutate(JSON.parse(shown!) as JsonObject), opts);
        },
        quietly(requestedAs(served, opts)),
      );
      return (await presentConverted(this.converter, served, conversion, [data]))[0]!;
    }
    for (let attempt = 0; ; attempt++) {
      const current = this.storage.get(bucketOf(served), keyOf(served, namespace, name));
      if (!current) throw notFound(gr(served), name);
      const currentObj = JSON.parse(present(served, current.data)) as JsonObject;
      const next = await mutate(currentObj);
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
      const result = await this.delete(view.storage, namespace, name, requestedAs(served, options));
      const body = result.body as JsonObject;
      return body.kind === "Status" ? result : { ...result, body: view.fromStorage(body) };
    }
    const conversion = served.webhookConversion;
    if (conversion) {
      const result = await this.delete(conversion.storage, namespace, name, requestedAs(served, options));
      const body = result.body as JsonObject;
      if (body.kind === "Status") return result;
      const [shown] = await presentConverted(this.converter, served, conversion, [JSON.stringify(body)]);
      return { ...result, body: JSON.parse(shown!) as JsonObject };
    }
    return this.deleteStored(served, namespace, name, options, name);
  }

  /**
   * Deletes an object of a resource stored as served (no conversion view), retrying when another
   * writer got in between. Admission sees the request's name, `admissionName`: the object's for a
   * DELETE of one object, `""` for each object of a collection delete (the handler's static
   * attributes name none there).
   */
  private async deleteStored(
    served: ServedResource,
    namespace: string,
    name: string,
    options: DeleteOptions,
    admissionName: string,
  ): Promise<DeleteResult> {
    const validate = this.deleteValidation(served, namespace, admissionName, options);
    for (let attempt = 0; ; attempt++) {
      try {
        return await deleteOnce(this.storage, served, namespace, name, options, validate);
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
      const list = await this.deleteCollection(view.storage, namespace, query, requestedAs(served, options));
      const items = (list["items"] as JsonObject[]).map((i) => view.fromStorage(i));
      return { ...list, kind: served.listKind, apiVersion: groupVersion(served), items };
    }
    const conversion = served.webhookConversion;
    if (conversion) {
      const list = await this.deleteCollection(conversion.storage, namespace, query, requestedAs(served, options));
      const objects = (list["items"] as JsonObject[]).map((i) => JSON.stringify(i));
      const items = (await presentConverted(this.converter, served, conversion, objects)).map((d) => JSON.parse(d));
      return { ...list, kind: served.listKind, apiVersion: groupVersion(served), items };
    }
    const page = this.list(served, namespace, { ...query, limit: undefined, continue: undefined });
    const items: unknown[] = [];
    for (const data of page.items) {
      const obj = JSON.parse(data) as JsonObject;
      const meta = obj.metadata as Record<string, string>;
      try {
        const itemName = meta["name"]!;
        const refusal = served.refuseDelete?.(itemName);
        if (refusal !== undefined) throw forbidden(gr(served), itemName, refusal);
        const itemOptions = { ...options, preconditions: undefined };
        const result = await this.deleteStored(served, meta["namespace"] ?? "", itemName, itemOptions, "");
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

  /**
   * The admission of a delete (rest.AdmissionToValidateObjectDeleteFunc): the mutating webhooks,
   * then the validating policies and webhooks, on the stored object with no new one; undefined when
   * there is none to run.
   */
  private deleteValidation(
    served: ServedResource,
    namespace: string,
    name: string,
    options: DeleteOptions,
  ): DeleteValidation | undefined {
    const admission = this.admission;
    if (admission === undefined || options.skipAdmission) return undefined;
    return async (stored) => {
      const info: AdmissionRequestInfo = {
        served,
        ...(options.requestedAs ? { requested: options.requestedAs } : {}),
        namespace,
        name,
        operation: "DELETE",
        subresource: "",
        options: {
          dryRun: options.dryRun,
          ...(options.requester ? { requester: options.requester } : {}),
          ...(options.warnings ? { warnings: options.warnings } : {}),
        },
        deleteOptions: withDefaultedGrace(served, stored, options),
      };
      await admission.mutateDelete(info, stored);
      await admission.validate(info, undefined, stored);
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
  ): StopWatch {
    const conversion = served.webhookConversion;
    if (conversion) {
      const converting = convertingSink(this.converter, served, conversion, sink);
      const stop = this.watch(conversion.storage, namespace, query, converting, sendInitialEvents);
      return Object.assign(
        () => {
          converting.stop();
          stop();
        },
        { afterPending: converting.afterPending },
      );
    }
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

  /**
   * A write's object, pruned and defaulted in the client's version (unknown fields reported there),
   * then converted to the storage version by the CRD's webhook.
   */
  private toStorageVersion(
    served: ServedResource,
    conversion: WebhookConversion,
    input: JsonObject,
    opts: WriteOptions,
  ): Promise<JsonObject> {
    const obj = opts.owned ? input : structuredClone(input);
    runMutators(this, served, obj, opts);
    return toStorageVersion(this.converter, conversion, obj);
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
    // With dynamic admission, validation of the object waits for the mutating webhooks.
    const admitted = this.admission !== undefined && target !== "finalize";
    let prepared = prepareUpdate(this, served, old, input, target, String(current.rev), options, !admitted);
    if (this.admission !== undefined && admitted) {
      const subresource = target === "main" ? "" : target;
      const info = {
        served,
        ...(options.requestedAs ? { requested: options.requestedAs } : {}),
        namespace,
        name,
        operation: "UPDATE" as const,
        subresource,
        options,
      };
      const mutated = await this.admission.mutate(info, prepared, old);
      if (mutated !== prepared)
        prepared = prepareUpdate(this, served, old, mutated, target, String(current.rev), options);
      else if (target === "main") validateUpdated(this, served, prepared, old);
      await this.admission.validate(info, prepared, old);
    }
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
}

// ---------------------------------------------------------------- helpers of this module

/**
 * The options admission is shown: a graceful kind's first deletion carries the grace period its
 * strategy chose (rest.BeforeDelete's CheckGracefulDelete fills in the very options the admission
 * attributes hold), any other what the client sent.
 */
function withDefaultedGrace(served: ServedResource, stored: JsonObject, options: DeleteOptions): DeleteOptions {
  if (!served.gracePeriod || (stored.metadata as MutableMeta).deletionTimestamp) return options;
  return { ...options, gracePeriodSeconds: served.gracePeriod(stored, options.gracePeriodSeconds) };
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
