/**
 * The member's side of a hand-over: when the coordinator puts the drain label on an object this
 * replica holds, let go of it and give it back.
 *
 * ## Expected flow
 * The manager registers every ring kind's informer (`watch`) and, per kind, whatever must let go
 * of a key before it moves (`addReleaser`: each controller's `release`, the Kopf-style processor's
 * daemons). While the member works, `run(signal)` listens to those informers; for an object that
 * carries the drain label it calls every releaser of its kind (in-flight reconciles finish, the
 * key is forgotten, daemons stop), then removes the shard and drain labels with one merge patch.
 * The object then leaves this replica's selection; the coordinator assigns it to its new member.
 *
 * ## Guarantees
 * - The labels are removed only after every releaser of the kind resolved: by then no reconcile
 *   of the key runs here and none will start, so the next member never overlaps with this one.
 * - One hand-over per key: a drain label seen again while it runs, or in an event older than the
 *   label removal (before the object left this replica's cache), is ignored; so a late event never
 *   strips the label the coordinator has given the object's next member.
 * - Objects already draining when the member starts working are handed over too (the informer's
 *   cache is scanned at `run`).
 * - A failed patch is retried after `retryPeriod` (on the clock) until it succeeds, the object is
 *   gone, or `signal` aborts; `run` resolves after every hand-over in progress has ended.
 *
 * ## Caveats
 * - A replica that stops working (graceful stop, lost Lease) hands nothing over: its Lease going
 *   away tells the coordinator to reassign its objects without a drain.
 */
import { setMaxListeners } from "node:events";
import { isNotFound } from "../client/errors.ts";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { type CacheReader, objectKey } from "./cache.ts";
import { type Clock, sleep, systemClock } from "./clock.ts";
import { DeletedFinalStateUnknown, type InformerEventHandler } from "./informer.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";
import { isDraining, type ShardLabels } from "./shard-labels.ts";

/** Lets go of one key of a kind before it is handed over; resolves when nothing of it runs here. */
export type KeyReleaser = (key: string) => Promise<void>;

/** The informer of a ring kind, as the hand-over uses it. */
export interface HandOverSource {
  addEventHandler(handler: InformerEventHandler<KubeObject>): () => void;
  readonly store: CacheReader<KubeObject>;
}

/** Options of a {@link ShardHandOver}. */
export interface ShardHandOverOptions {
  labels: ShardLabels;
  client: KubeClient;
  /** Pause before retrying a failed label removal (the ring's retry period). */
  retryPeriodMs: number;
  clock?: Clock;
  logger?: RuntimeLogger;
  /** Told when a hand-over started or ended (the manager's idleness). */
  onChange?: () => void;
  /** Called when a key was handed over (metrics). */
  onHandedOver?: (kind: ResourceKind) => void;
}

interface Watched {
  kind: ResourceKind;
  source: HandOverSource;
  releasers: Set<KeyReleaser>;
}

/** A member's hand-overs; see the module documentation. */
export class ShardHandOver {
  private readonly sources = new Map<HandOverSource, Watched>();
  private readonly inProgress = new Map<string, Promise<void>>();
  /**
   * Keys handed over whose object has not left this replica's cache yet: an event older than the
   * label removal (still carrying the drain label) must not start a second hand-over, whose patch
   * could strip the label the coordinator has given the object meanwhile.
   */
  private readonly handedOver = new Set<string>();
  private readonly clock: Clock;
  private readonly logger: RuntimeLogger;

  constructor(private readonly options: ShardHandOverOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** Registers an informer of a ring kind (this member's share of it); again is harmless. */
  watch(kind: ResourceKind, source: HandOverSource): void {
    if (!this.sources.has(source)) this.sources.set(source, { kind, source, releasers: new Set() });
  }

  /**
   * Adds what must let go of a key of `source`'s objects before it moves (after {@link watch});
   * returns a function that removes it.
   */
  addReleaser(source: HandOverSource, release: KeyReleaser): () => void {
    const watched = this.sources.get(source);
    if (watched === undefined) throw new Error("sharding: addReleaser() before watch() of its informer");
    watched.releasers.add(release);
    return () => watched.releasers.delete(release);
  }

  /** Whether `obj` carries the drain label of this ring. */
  isDraining(obj: KubeObject): boolean {
    return isDraining(this.options.labels, obj);
  }

  /** Hand-overs running now (for whenIdle); `undefined` when none. */
  busy(): string | undefined {
    return this.inProgress.size === 0 ? undefined : `${this.inProgress.size} hand-over(s) in progress`;
  }

  /** Hands over draining objects until `signal` aborts; resolves once the last hand-over ended. */
  async run(outer: AbortSignal): Promise<void> {
    if (outer.aborted) return;
    // One signal shared by every hand-over's requests and retry pauses.
    const stop = new AbortController();
    setMaxListeners(0, stop.signal);
    outer.addEventListener("abort", () => stop.abort(), { once: true });
    const signal = stop.signal;
    const removers: (() => void)[] = [];
    for (const watched of this.sources.values()) {
      const consider = (obj: KubeObject) => {
        if (signal.aborted) return;
        if (this.isDraining(obj)) this.handOver(watched, obj, signal);
        else this.handedOver.delete(this.id(watched, objectKey(obj))); // assigned here again
      };
      removers.push(
        watched.source.addEventHandler({
          onAdd: consider,
          onUpdate: (_old, obj) => consider(obj),
          onDelete: (d) =>
            this.handedOver.delete(this.id(watched, objectKey(d instanceof DeletedFinalStateUnknown ? d.obj : d))),
        }),
      );
      for (const obj of watched.source.store.list()) consider(obj);
    }
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    for (const remove of removers) remove();
    await Promise.all(this.inProgress.values());
  }

  private id(watched: Watched, key: string): string {
    return `${kindId(watched.kind)} ${key}`;
  }

  private handOver(watched: Watched, obj: KubeObject, signal: AbortSignal): void {
    const key = objectKey(obj);
    const id = this.id(watched, key);
    if (this.inProgress.has(id) || this.handedOver.has(id)) return;
    const done = this.release(watched, key, obj, signal).then(
      (released) => {
        if (released) this.handedOver.add(id);
        this.inProgress.delete(id);
        this.options.onChange?.();
      },
      () => {
        this.inProgress.delete(id);
        this.options.onChange?.();
      },
    );
    this.inProgress.set(id, done);
    this.options.onChange?.();
  }

  /** Lets go of the key and removes the labels; true once the labels are gone (or the object is). */
  private async release(watched: Watched, key: string, obj: KubeObject, signal: AbortSignal): Promise<boolean> {
    const { labels } = this.options;
    try {
      await Promise.all([...watched.releasers].map((release) => release(key)));
    } catch (err) {
      this.logger.error({ err, key }, "sharding: letting go of an object failed; handing it over anyway");
    }
    const name = obj.metadata?.name as string;
    const namespace = watched.kind.namespaced ? obj.metadata?.namespace : undefined;
    const patch = { metadata: { labels: { [labels.shard]: null, [labels.drain]: null } } };
    while (!signal.aborted) {
      try {
        await this.options.client.resource(watched.kind, namespace).patch(name, patch, { type: "merge", signal });
        this.logger.debug({ kind: watched.kind.kind, key }, "sharding: handed over");
        this.options.onHandedOver?.(watched.kind);
        return true;
      } catch (err) {
        if (isNotFound(err)) return true;
        if (signal.aborted) return false;
        this.logger.warn({ err, key }, "sharding: cannot remove the shard label; retrying");
        await sleep(this.options.retryPeriodMs, signal, this.clock);
      }
    }
    return false;
  }
}

/** A kind's identity on the ring (version-independent). */
export function kindId(kind: Pick<ResourceKind, "group" | "kind">): string {
  return `${kind.kind}.${kind.group}`;
}
