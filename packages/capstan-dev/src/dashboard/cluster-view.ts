/**
 * Everything the dashboard watches: one {@link ObjectFeed} per kind, the built-in kinds from the
 * start and each custom kind from the moment its CRD is Established until its CRD goes away.
 *
 * ## Expected flow
 * `const view = new ClusterView(client)`, `view.start(signal)`, read `view.kinds()` and each kind's
 * feed, `view.subscribe(...)` for every change; abort the signal, then `await view.stopped()`.
 *
 * ## Guarantees
 * - A kind is listed once its feed exists; its feed runs until the CRD is deleted, stops serving
 *   the kind, or the signal aborts. A CRD whose columns change keeps its feed (only the columns
 *   are replaced); one whose served version changes gets a new feed.
 * - `stopped()` resolves once every feed started here has stopped (no watch or timer left).
 */
import type { KubeClient, KubeObject } from "capstan";
import type { ListerWatcher } from "capstan/client";
import {
  BUILTIN_KINDS,
  CRD_KIND,
  type CustomResourceDefinition,
  type DashboardKind,
  EVENT_KIND_ID,
  kindFromCrd,
} from "./kinds.ts";
import { type FeedChange, ObjectFeed } from "./object-feed.ts";

/** A kind and the feed of its objects. */
export interface ViewedKind {
  readonly kind: DashboardKind;
  readonly feed: ObjectFeed;
}

/** What a {@link ClusterView} tells its listeners. */
export type ViewChange = { type: "kinds" } | { type: "objects"; kind: DashboardKind; change: FeedChange<KubeObject> };

interface Running extends ViewedKind {
  kind: DashboardKind;
  abort: AbortController;
  done: Promise<void>;
  unsubscribe: () => void;
}

/** The dashboard's live picture of the cluster; see the module documentation. */
export class ClusterView {
  readonly #client: KubeClient;
  readonly #kinds = new Map<string, Running>();
  /** CRD name -> the kind id it serves. */
  readonly #crdKinds = new Map<string, string>();
  readonly #listeners = new Set<(change: ViewChange) => void>();
  readonly #running = new Set<Promise<void>>();
  readonly crds: ObjectFeed<CustomResourceDefinition>;
  #signal: AbortSignal | undefined;

  constructor(client: KubeClient) {
    this.#client = client;
    this.crds = new ObjectFeed(client.resource(CRD_KIND));
  }

  /** Starts the CRD feed and the built-in kinds' feeds. */
  start(signal: AbortSignal): void {
    this.#signal = signal;
    for (const kind of BUILTIN_KINDS) this.#startKind(kind);
    this.crds.subscribe((change) => {
      if (change.type === "added" || change.type === "modified") this.#crdChanged(change.object);
      else if (change.type === "deleted") this.#crdRemoved(change.object.metadata?.name ?? "");
      else this.#emit({ type: "kinds" }); // synced or failed: the kinds list shows the CRDs' state
    });
    this.#track(this.crds.run(signal));
  }

  /** Every kind, custom kinds (by group, then kind) before the built-ins. */
  kinds(): ViewedKind[] {
    const all = [...this.#kinds.values()];
    const custom = all
      .filter((k) => !k.kind.builtin)
      .sort((a, b) => a.kind.group.localeCompare(b.kind.group) || a.kind.kind.localeCompare(b.kind.kind));
    const builtins = BUILTIN_KINDS.flatMap((b) => all.filter((k) => k.kind.id === b.id));
    return [...custom, ...builtins];
  }

  /** The kind with this id (`kindId`), if the dashboard watches it. */
  kind(id: string): ViewedKind | undefined {
    return this.#kinds.get(id);
  }

  /** The core/v1 Events feed. */
  get events(): ObjectFeed {
    return (this.#kinds.get(EVENT_KIND_ID) as Running).feed;
  }

  /** Calls `listener` on every change of the kinds or of any object until the returned function is called. */
  subscribe(listener: (change: ViewChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once every feed has stopped (after the signal given to `start` aborted). */
  async stopped(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  #crdChanged(crd: CustomResourceDefinition): void {
    const name = crd.metadata?.name ?? "";
    const kind = kindFromCrd(crd);
    const previous = this.#crdKinds.get(name);
    if (previous !== undefined && previous !== kind?.id) this.#crdRemoved(name);
    if (kind === undefined) return;
    this.#crdKinds.set(name, kind.id);
    const running = this.#kinds.get(kind.id);
    if (running !== undefined) {
      running.kind = kind; // new printer columns, same objects
      this.#emit({ type: "kinds" });
      return;
    }
    this.#startKind(kind);
  }

  #crdRemoved(name: string): void {
    const id = this.#crdKinds.get(name);
    if (id === undefined) return;
    this.#crdKinds.delete(name);
    const running = this.#kinds.get(id);
    if (running === undefined) return;
    this.#kinds.delete(id);
    running.unsubscribe();
    running.abort.abort();
    this.#emit({ type: "kinds" });
  }

  #startKind(kind: DashboardKind): void {
    const signal = this.#signal as AbortSignal;
    const source = (
      kind.metadataOnly ? this.#client.metadata(kind) : this.#client.resource(kind)
    ) as ListerWatcher<KubeObject>;
    const feed = new ObjectFeed(source);
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const running: Running = {
      kind,
      feed,
      abort,
      done: Promise.resolve(),
      unsubscribe: feed.subscribe((change) => this.#emit({ type: "objects", kind: running.kind, change })),
    };
    running.done = this.#track(feed.run(abort.signal).finally(() => signal.removeEventListener("abort", onAbort)));
    this.#kinds.set(kind.id, running);
    this.#emit({ type: "kinds" });
  }

  #track(run: Promise<void>): Promise<void> {
    const tracked = run.catch(() => undefined);
    this.#running.add(tracked);
    void tracked.then(() => this.#running.delete(tracked));
    return tracked;
  }

  #emit(change: ViewChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        // One broken stream must not keep the others from hearing about the change.
      }
    }
  }
}
