/**
 * The typed resource client: one kind, all verbs. Objects are plain Kubernetes JSON.
 */
import {
  type ApplyOptions,
  type CallOptions,
  type DeleteOptions,
  deleteBody,
  listQuery,
  type PatchOptions,
  type PatchType,
  type RequestOptions,
  type WriteOptions,
  writeQuery,
} from "./options.ts";
import {
  apiVersionOf,
  type KubeObject,
  type ListerWatcher,
  type ListOptions,
  type ObjectList,
  type ObjectMeta,
  type ResourceKind,
  type Status,
  type WatchEvent,
  type WatchOptions,
} from "./types.ts";
import { decodeWatchStream, type WatchBody } from "./watch-stream.ts";

/**
 * Every verb for one kind. Namespaced kinds resolve the namespace of a single-object call from, in order:
 * the call's `namespace` option, the object's `metadata.namespace` (create/update/apply), the namespace
 * bound with `client.resource(kind, ns)`; with none of them the call throws (it never falls back to
 * "default" silently). list/watch/deleteCollection use the bound namespace, else all namespaces.
 */
export interface ResourceClient<T extends KubeObject> extends ListerWatcher<T> {
  get(name: string, opts?: CallOptions): Promise<T>;
  /** One page. */
  list(opts?: ListOptions): Promise<ObjectList<T>>;
  /** Every object, following continue tokens page by page. */
  listAll(opts?: Omit<ListOptions, "continue">): AsyncIterable<T>;
  create(obj: T, opts?: WriteOptions): Promise<T>;
  update(obj: T, opts?: WriteOptions): Promise<T>;
  updateStatus(obj: T, opts?: WriteOptions): Promise<T>;
  patch(name: string, patch: unknown, opts: PatchOptions): Promise<T>;
  /** Patches the status subresource; a merge patch unless `type` says otherwise. */
  patchStatus(
    name: string,
    patch: unknown,
    opts?: Omit<PatchOptions, "subresource" | "type"> & { type?: PatchType },
  ): Promise<T>;
  /** Server-side apply of `obj` (apiVersion/kind/name filled in from the kind and object). */
  apply(obj: T, opts: ApplyOptions): Promise<T>;
  /** The deleted object (or the object with deletionTimestamp set while finalizers run), or a Status. */
  delete(name: string, opts?: DeleteOptions): Promise<T | Status>;
  deleteCollection(opts?: ListOptions & DeleteOptions): Promise<ObjectList<T> | Status>;
  /**
   * Resolves once the server accepted the watch (rejects with `ApiError` otherwise). The iterator yields
   * typed events, throws `ApiError` for an ERROR event (410 -> `isGone`), ends quietly when the server
   * closes the stream or the signal aborts, and frees the socket if the consumer stops early.
   */
  watch(opts: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
}

/** An object's metadata without its body, what the metadata view yields (`meta.k8s.io/v1`). */
export interface PartialObjectMetadata extends KubeObject {
  metadata: ObjectMeta;
}

/** The read verbs of the metadata-only view; a `ListerWatcher` for informers. */
export type MetadataClient = Pick<ResourceClient<PartialObjectMetadata>, "get" | "list" | "listAll" | "watch">;

/** Page size of `listAll`: client-go's pager default (`defaultPageSize = 500`). */
const defaultPageSize = 500;

const patchContentTypes: Record<PatchType, string> = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

/**
 * What a typed client needs of the client it is built on: raw requests and a streaming GET.
 * `KubeClient` has both; the typed client holds a requester and never the reverse (as kube-rs's `Api`
 * holds a `Client`), so this module does not import the client.
 */
export interface Requester {
  /** One API call; resolves with the parsed JSON body, rejects with `ApiError` for a non-2xx answer. */
  request<R>(method: string, path: string, opts?: RequestOptions): Promise<R>;
  /** A streaming GET (a watch); resolves once the server answered 200. */
  openStream(path: string, opts?: RequestOptions): Promise<{ body: WatchBody }>;
}

/** The `ResourceClient` implementation: URL building and verb semantics over a {@link Requester}. */
export class TypedResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly #client: Requester;
  readonly #kind: ResourceKind<T>;
  readonly #namespace: string | undefined;
  readonly #base: string;
  readonly #apiVersion: string;
  /** Metadata-only view: asks for PartialObjectMetadata and cuts whole objects down to it. */
  readonly #metadataOnly: boolean;

  constructor(client: Requester, kind: ResourceKind<T>, namespace: string | undefined, metadataOnly = false) {
    this.#client = client;
    this.#metadataOnly = metadataOnly;
    this.#kind = kind;
    this.#namespace = kind.namespaced ? namespace : undefined;
    this.#apiVersion = apiVersionOf(kind);
    this.#base = kind.group === "" ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  }

  /** Collection path: bound namespace, else all namespaces (or cluster scope). */
  #collection(namespace: string | undefined): string {
    const ns = this.#kind.namespaced ? namespace : undefined;
    return ns
      ? `${this.#base}/namespaces/${encodeURIComponent(ns)}/${this.#kind.plural}`
      : `${this.#base}/${this.#kind.plural}`;
  }

  #namespaceFor(
    verb: string,
    name: string | undefined,
    explicit: string | undefined,
    obj?: KubeObject,
  ): string | undefined {
    if (!this.#kind.namespaced) return undefined;
    const ns = explicit ?? obj?.metadata?.namespace ?? this.#namespace;
    if (!ns) {
      throw new TypeError(
        `${verb} ${this.#kind.kind}${name ? ` "${name}"` : ""}: ${this.#kind.kind} is namespaced and no namespace was given ` +
          "(pass { namespace }, set metadata.namespace, or bind one with client.resource(kind, namespace))",
      );
    }
    return ns;
  }

  #itemPath(verb: string, name: string, ns: string | undefined, subresource?: string): string {
    if (!name) throw new TypeError(`${verb} ${this.#kind.kind}: a name is required`);
    const path = `${this.#collection(ns)}/${encodeURIComponent(name)}`;
    return subresource ? `${path}/${subresource}` : path;
  }

  #resource(name?: string): { group: string; plural: string; name?: string } {
    return name
      ? { group: this.#kind.group, plural: this.#kind.plural, name }
      : { group: this.#kind.group, plural: this.#kind.plural };
  }

  #nameOf(verb: string, obj: T): string {
    const name = obj.metadata?.name;
    if (!name) throw new TypeError(`${verb} ${this.#kind.kind}: metadata.name is required`);
    return name;
  }

  async get(name: string, opts: CallOptions = {}): Promise<T> {
    const ns = this.#namespaceFor("get", name, opts.namespace);
    const obj = await this.#client.request<T>("GET", this.#itemPath("get", name, ns), {
      signal: opts.signal,
      resource: this.#resource(name),
      accept: this.#metadataOnly ? metadataAccept : undefined,
    });
    return this.#metadataOnly ? (toPartial(obj) as unknown as T) : obj;
  }

  async list(opts: ListOptions = {}): Promise<ObjectList<T>> {
    const list = await this.#client.request<ObjectList<T>>("GET", this.#collection(this.#namespace), {
      query: listQuery(opts),
      signal: opts.signal,
      resource: this.#resource(),
      accept: this.#metadataOnly ? metadataListAccept : undefined,
    });
    if (this.#metadataOnly) {
      // kube-apiserver encodes an empty PartialObjectMetadataList's nil items as `"items": null`.
      const items = list.items ?? [];
      for (let i = 0; i < items.length; i++) items[i] = toPartial(items[i]!) as unknown as T;
      list.items = items;
    }
    return list;
  }

  async *listAll(opts: Omit<ListOptions, "continue"> = {}): AsyncIterable<T> {
    let token: string | undefined;
    do {
      const page = await this.list({ ...opts, limit: opts.limit ?? defaultPageSize, continue: token });
      yield* page.items;
      token = page.metadata?.continue || undefined;
    } while (token);
  }

  async create(obj: T, opts: WriteOptions = {}): Promise<T> {
    const ns = this.#namespaceFor("create", obj.metadata?.name, opts.namespace, obj);
    return this.#client.request<T>("POST", this.#collection(ns), {
      query: writeQuery(opts),
      body: this.#complete(obj),
      signal: opts.signal,
      resource: this.#resource(),
    });
  }

  async update(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put("update", obj, opts, undefined);
  }

  async updateStatus(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put("updateStatus", obj, opts, "status");
  }

  async #put(verb: string, obj: T, opts: WriteOptions, subresource: string | undefined): Promise<T> {
    const name = this.#nameOf(verb, obj);
    const ns = this.#namespaceFor(verb, name, opts.namespace, obj);
    return this.#client.request<T>("PUT", this.#itemPath(verb, name, ns, subresource), {
      query: writeQuery(opts),
      body: this.#complete(obj),
      signal: opts.signal,
      resource: this.#resource(name),
    });
  }

  async patch(name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    const ns = this.#namespaceFor("patch", name, opts.namespace);
    if (opts.type === "apply" && !opts.fieldManager) {
      throw new TypeError(`patch ${this.#kind.kind} "${name}": a server-side apply patch needs a fieldManager`);
    }
    const contentType = patchContentTypes[opts.type];
    if (!contentType)
      throw new TypeError(`patch ${this.#kind.kind} "${name}": unknown patch type ${String(opts.type)}`);
    return this.#client.request<T>("PATCH", this.#itemPath("patch", name, ns, opts.subresource), {
      query: { ...writeQuery(opts), force: opts.type === "apply" && opts.force ? true : undefined },
      body: patch,
      contentType,
      // JSON patch ops like "add to array" apply twice if repeated; the others converge.
      idempotent: opts.type !== "json",
      signal: opts.signal,
      resource: this.#resource(name),
    });
  }

  async patchStatus(
    name: string,
    patch: unknown,
    opts: Omit<PatchOptions, "subresource" | "type"> & { type?: PatchType } = {},
  ): Promise<T> {
    return this.patch(name, patch, { ...opts, type: opts.type ?? "merge", subresource: "status" });
  }

  async apply(obj: T, opts: ApplyOptions): Promise<T> {
    const name = this.#nameOf("apply", obj);
    const ns = this.#namespaceFor("apply", name, opts.namespace, obj);
    const body = this.#complete(obj);
    return this.patch(name, body, {
      type: "apply",
      fieldManager: opts.fieldManager,
      force: opts.force,
      subresource: opts.subresource,
      namespace: ns,
      dryRun: opts.dryRun,
      signal: opts.signal,
    });
  }

  async delete(name: string, opts: DeleteOptions = {}): Promise<T | Status> {
    const ns = this.#namespaceFor("delete", name, opts.namespace);
    return this.#client.request<T | Status>("DELETE", this.#itemPath("delete", name, ns), {
      body: deleteBody(opts),
      signal: opts.signal,
      resource: this.#resource(name),
    });
  }

  async deleteCollection(opts: ListOptions & DeleteOptions = {}): Promise<ObjectList<T> | Status> {
    const ns = this.#kind.namespaced ? (opts.namespace ?? this.#namespace) : undefined;
    return this.#client.request<ObjectList<T> | Status>("DELETE", this.#collection(ns), {
      query: listQuery(opts),
      body: deleteBody(opts),
      signal: opts.signal,
      resource: this.#resource(),
    });
  }

  async watch(opts: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>> {
    const res = await this.#client.openStream(this.#collection(this.#namespace), {
      query: {
        watch: true,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: opts.allowWatchBookmarks || undefined,
        timeoutSeconds: opts.timeoutSeconds,
      },
      signal: opts.signal,
      resource: this.#resource(),
      accept: this.#metadataOnly ? metadataAccept : undefined,
    });
    const events = decodeWatchStream<T>(res.body, opts.signal);
    return this.#metadataOnly ? partialEvents(events) : events;
  }

  /** Fills apiVersion and kind when the caller left them out (the server requires them). */
  #complete(obj: T): T {
    if (obj.apiVersion && obj.kind) return obj;
    return { ...obj, apiVersion: obj.apiVersion ?? this.#apiVersion, kind: obj.kind ?? this.#kind.kind };
  }
}

/** client-go metadata client's Accept headers (JSON only: we do not speak protobuf), with a plain JSON fallback. */
const metadataAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
const metadataListAccept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/** A whole object cut down to PartialObjectMetadata; one the server already cut is returned as is. */
function toPartial(obj: KubeObject): PartialObjectMetadata {
  if (obj.kind === "PartialObjectMetadata") return obj as PartialObjectMetadata;
  return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: obj.metadata ?? {} };
}

async function* partialEvents<T extends KubeObject>(
  events: AsyncIterable<WatchEvent<T>>,
): AsyncGenerator<WatchEvent<T>> {
  for await (const e of events) {
    if (e.type !== "BOOKMARK") e.object = toPartial(e.object) as unknown as T;
    yield e;
  }
}
