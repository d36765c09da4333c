/**
 * Whether the informers have caught up with the writes a client made: the part of "the operator is
 * idle" (idleness.ts) that is about the cluster, not the process. A reconcile that wrote a child
 * is done, but the informer event of that child (which may enqueue more work) is still on the
 * wire; until it arrives, the operator is not idle.
 *
 * ## Expected flow
 * `new WriteVisibility(informers, onChange)`, `track(client)` for each client whose writes count
 * (the manager's own, a test's). Each write the client starts counts as in flight; when it ends
 * with an object, every informer that will see that object is expected to show it. `busy()` says
 * what is still in flight or unseen; `onChange` is called whenever that may have become nothing.
 *
 * ## Guarantees
 * - A write answered with resourceVersion R of object K is seen by an informer when its cache holds
 *   K at R or later, or when the informer has seen any event at R or later (a watch delivers one
 *   kind's events in resourceVersion order, so it has then passed K's write, whatever became of K
 *   since, a deletion included). A DELETE answered without the object is seen once K is gone from
 *   the cache.
 * - Only informers that will ever see K are waited for: same API group and resource, K inside
 *   their namespace and selectors (selector-match.ts). An object that left an informer's selectors
 *   is waited for until that informer drops it.
 * - Memory is bounded by the writes in transit: an entry is dropped as soon as the informers it
 *   waits for delivered its event, whether or not anyone asks `busy()`.
 *
 * ## Assumptions
 * - resourceVersions are decimal integers that grow (etcd's, the embedded server's), as
 *   own-writes.ts assumes; with other versions only an exact match in the cache counts.
 *
 * ## Caveats
 * - Dry-run writes, collection deletes and subresources other than `status` and `scale` (an
 *   eviction, a token request) are not followed: their answer is not the object the informer sees.
 */
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject } from "../client/types.ts";
import type { ObservedWrite, WriteResult } from "../client/write-observer.ts";
import { resourcePath } from "../client/write-trace.ts";
import { objectKey } from "./cache.ts";
import { DeletedFinalStateUnknown, type Informer } from "./informer.ts";
import { reachedVersion } from "./own-writes.ts";
import { fieldSelectorMatches, labelSelectorMatches } from "./selector-match.ts";
import type { SharedInformerEntry } from "./shared-informers.ts";

/**
 * Pending writes above which every event also checks all of them, not just its own object's: the
 * bound on writes whose own event never comes (created and deleted while the watch was down, seen
 * only through a relist) when nobody asks `busy()`, as in production.
 */
const PRUNE_ALL_ABOVE = 1000;

/** Subresources whose answer is the object itself (its resourceVersion is the object's). */
const OBJECT_SUBRESOURCES = new Set(["status", "scale"]);

/** What an informer must show of a write: the version written, or the object's absence. */
type Expectation = "version" | "absence";

interface PendingWrite {
  /** `namespace/name` or `name`: the informer's cache key. */
  readonly key: string;
  /** The written resourceVersion; `undefined` for a deletion answered with a Status. */
  readonly rv: string | undefined;
  /** For messages (`PATCH configmaps default/x (resourceVersion 12)`), built only when asked. */
  readonly write: ObservedWrite;
  readonly resource: string;
  readonly subresource: string | undefined;
  readonly waitingFor: Map<Informer<KubeObject>, Expectation>;
}

/** Follows a client's writes until the informers show them; see the module documentation. */
export class WriteVisibility {
  private readonly pending = new Map<string, PendingWrite>();
  private readonly inFlight = new Set<ObservedWrite>();
  private readonly attached = new Map<Informer<KubeObject>, () => void>();
  private readonly stops: (() => void)[] = [];

  constructor(
    private readonly informers: { entries(): readonly SharedInformerEntry[] },
    private readonly onChange: () => void,
  ) {}

  /** Follows the writes of `client` (and its views); returns a function that stops following them. */
  track(client: Pick<KubeClient, "observeWrites">): () => void {
    // A stand-in client (a test's fake of the KubeClient shape) cannot report writes: none to follow.
    if (typeof client.observeWrites !== "function") return () => {};
    const stop = client.observeWrites({
      started: (write) => {
        this.inFlight.add(write);
      },
      ended: (write, result) => {
        this.inFlight.delete(write);
        this.record(write, result);
        this.onChange();
      },
    });
    this.stops.push(stop);
    return stop;
  }

  /** What is not visible yet: writes in flight, writes an informer has not shown. Prunes what is. */
  busy(): string[] {
    const reasons = [...this.inFlight].map((w) => `write in flight: ${w.method} ${w.path}`);
    for (const [id, entry] of this.pending) {
      this.prune(id);
      if (entry.waitingFor.size === 0) continue;
      const names = [...entry.waitingFor.keys()].map((i) => i.name).join(", ");
      reasons.push(`${describe(entry)} not yet seen by ${names}`);
    }
    return reasons;
  }

  /** Stops following every client and detaches from the informers. */
  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    for (const detach of this.attached.values()) detach();
    this.attached.clear();
    this.pending.clear();
    this.inFlight.clear();
  }

  private record(write: ObservedWrite, result: WriteResult): void {
    if (!("body" in result)) return;
    const target = resourcePath(write.path);
    if (target === undefined || isDryRun(write.path)) return;
    if (target.subresource !== undefined && !OBJECT_SUBRESOURCES.has(target.subresource)) return;
    const body = result.body as Partial<KubeObject> | undefined;
    const answered = body?.kind !== "Status" && typeof body?.metadata?.name === "string" ? body : undefined;
    const name = target.subresource === "scale" ? target.name : (answered?.metadata?.name ?? target.name);
    if (name === undefined) return; // a collection delete
    const namespace = answered?.metadata?.namespace || target.namespace;
    const key = namespace ? `${namespace}/${name}` : name;
    const rv = answered?.metadata?.resourceVersion;
    if (rv === undefined && write.method !== "DELETE") return;
    const entry: PendingWrite = {
      key,
      rv,
      write,
      resource: target.resource,
      subresource: target.subresource,
      waitingFor: new Map(),
    };
    const object = target.subresource === undefined ? answered : undefined;
    for (const { kind, scope, informer } of this.informers.entries()) {
      if (kind.group !== target.group || kind.plural !== target.resource) continue;
      if (scope.namespace && scope.namespace !== namespace) continue;
      const inScope = object === undefined || withinSelectors(object as KubeObject, scope);
      // Outside its selectors: it sees nothing more of the object, except dropping a copy it holds.
      const expectation: Expectation | undefined = !inScope
        ? informer.store.get(key) === undefined
          ? undefined
          : "absence"
        : rv === undefined
          ? "absence"
          : "version";
      if (expectation === undefined || shows(informer, entry, expectation)) continue;
      entry.waitingFor.set(informer, expectation);
      this.attach(informer, target.group, target.resource);
    }
    const id = pendingId(target.group, target.resource, key);
    if (entry.waitingFor.size > 0) this.pending.set(id, entry);
    else this.pending.delete(id); // a later write that is visible already supersedes an earlier one
  }

  /** Listens to an informer's events to drop what it has shown (once per informer). */
  private attach(informer: Informer<KubeObject>, group: string, resource: string): void {
    if (this.attached.has(informer)) return;
    const seen = (obj: KubeObject | DeletedFinalStateUnknown) => {
      if (this.pending.size === 0) return;
      const key = obj instanceof DeletedFinalStateUnknown ? obj.key : safeKey(obj);
      // After the informer has moved its resourceVersion past this event (it does so right after
      // calling its handlers): a deletion at a later version shows a write it never echoed.
      queueMicrotask(() => {
        if (key !== undefined) this.prune(pendingId(group, resource, key));
        if (this.pending.size > PRUNE_ALL_ABOVE) this.busy();
        // Any event moves the informer's resourceVersion on, which may show other writes.
        this.onChange();
      });
    };
    this.attached.set(
      informer,
      informer.addEventHandler({ onAdd: seen, onUpdate: (_old, obj) => seen(obj), onDelete: seen }),
    );
  }

  /** Drops what the informers show of the pending write `id`. */
  private prune(id: string): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    for (const [informer, expectation] of entry.waitingFor) {
      if (shows(informer, entry, expectation)) entry.waitingFor.delete(informer);
    }
    if (entry.waitingFor.size === 0) this.pending.delete(id);
  }
}

/** `PATCH configmaps/status default/x (resourceVersion 12)`. */
function describe(entry: PendingWrite): string {
  const resource = entry.subresource ? `${entry.resource}/${entry.subresource}` : entry.resource;
  return `${entry.write.method} ${resource} ${entry.key}${entry.rv === undefined ? "" : ` (resourceVersion ${entry.rv})`}`;
}

/** Whether the request's query has `dryRun=` (what `/[?&]dryRun=/` matches, without a regex per write). */
function isDryRun(path: string): boolean {
  return path.includes("?dryRun=") || path.includes("&dryRun=");
}

function pendingId(group: string, resource: string, key: string): string {
  return `${group}/${resource}/${key}`;
}

function safeKey(obj: KubeObject): string | undefined {
  try {
    return objectKey(obj);
  } catch {
    return undefined;
  }
}

/** Whether `informer` shows the write `entry` as `expectation` asks. */
function shows(informer: Informer<KubeObject>, entry: PendingWrite, expectation: Expectation): boolean {
  const cached = informer.store.get(entry.key);
  if (expectation === "absence") return cached === undefined;
  const rv = entry.rv as string;
  return reachedVersion(cached?.metadata?.resourceVersion, rv) || reachedVersion(informer.lastSyncResourceVersion, rv);
}

/** Whether an informer with these selectors watches `obj` (unparsable selectors: assumed to). */
function withinSelectors(obj: KubeObject, scope: SharedInformerEntry["scope"]): boolean {
  if (scope.labelSelector && labelSelectorMatches(scope.labelSelector, obj.metadata?.labels ?? {}) === false) {
    return false;
  }
  if (scope.fieldSelector && fieldSelectorMatches(scope.fieldSelector, obj) === false) return false;
  return true;
}
