/**
 * Posts core/v1 Events about objects, as client-go's `record.EventRecorder` does, correlating
 * repeats so a reconcile loop that emits the same event every few seconds costs one object with a
 * growing `count`, not thousands of objects.
 *
 * ## Expected flow
 * `recorder.event(obj, "Warning", "FetchFailed", "rate server unreachable")` returns at once; the
 * recorder correlates the event and writes it in the background. `flush()` waits for writes in
 * flight; `close()` stops intake and flushes (the manager does this on shutdown).
 *
 * ## Guarantees
 * - `event()` never throws and never blocks the caller: failures to write are logged and dropped.
 * - Identical events (same object, type, reason, message, source) within the cache's reach
 *   become one Event whose `count` grows and whose `lastTimestamp` moves (a merge patch of
 *   `count`, `lastTimestamp`, `message`); if that Event was deleted meanwhile, a new one is created.
 * - Aggregation (client-go's EventAggregator): the 10th distinct message with the same object,
 *   type and reason within 10 minutes turns into one aggregate event,
 *   "(combined from similar events): <message>", counted like a repeat from then on.
 * - Spam filter (client-go's EventSourceObjectSpamFilter): per source and object, a burst of 25
 *   events, then one every 5 minutes; events beyond that are dropped (and logged at debug).
 *
 * ## Assumptions
 * - The involved object has `metadata.name`; Events for cluster-scoped objects go to the
 *   `default` namespace, as client-go does.
 *
 * ## Caveats
 * - The correlation cache is in memory (LRU of 4096 entries): after a restart the first repeat
 *   creates a new Event instead of bumping the old one's count.
 * - At most {@link MAX_PENDING} writes wait at once; beyond that events are dropped, like the
 *   full channel of client-go's broadcaster.
 */
import type { Event as CoreEvent } from "kubernetes-types/core/v1.d.ts";
import { isNotFound } from "../client/errors.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { outsideRuns } from "../client/write-trace.ts";
import { type Clock, systemClock } from "./clock.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";

/** `Normal` for information, `Warning` for something an operator should look at. */
export type EventType = "Normal" | "Warning";

/** Records events about objects. */
export interface EventRecorder {
  /** Records an event about `obj`; never throws. `reason` is UpperCamelCase, `message` human-readable. */
  event(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

/** The Event calls the recorder makes: a structural subset of `ResourceClient<Event>`. */
export interface EventApi {
  create(obj: CoreEvent, opts: { namespace: string }): Promise<CoreEvent>;
  patch(name: string, patch: unknown, opts: { namespace: string; type: "merge" }): Promise<CoreEvent>;
}

/** The core/v1 Event kind, for building an {@link EventApi} from the client. */
export const EVENT_KIND: ResourceKind<CoreEvent> = {
  group: "",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};

/** Options of an {@link ApiEventRecorder}. */
export interface EventRecorderOptions {
  events: EventApi;
  /** `source.component` and `reportingController` (the controller or operator name). */
  component: string;
  /** `source.host` and `reportingInstance` (pod or host name). */
  host?: string;
  logger?: RuntimeLogger;
  clock?: Pick<Clock, "now">;
}

/** client-go's `maxLruCacheEntries`: enough distinct events for a busy controller, bounded memory. */
const CACHE_SIZE = 4096;
/** client-go's defaultAggregateMaxEvents / defaultAggregateIntervalInSeconds. */
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_INTERVAL_MS = 600_000;
/** client-go's defaultSpamBurst / defaultSpamQPS (one event per 5 minutes per object after the burst). */
const SPAM_BURST = 25;
const SPAM_QPS = 1 / 300;
/** Writes allowed to wait at once (client-go's broadcaster queue length is 1000). */
export const MAX_PENDING = 1000;

/** An LRU map: reads refresh an entry, inserts past the capacity evict the oldest. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly capacity: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
  }
}

interface Observation {
  count: number;
  firstTimestamp: string;
  name: string;
}

/** An {@link EventRecorder} writing core/v1 Events through the API; see the module documentation. */
export class ApiEventRecorder implements EventRecorder {
  private readonly options: EventRecorderOptions;
  private readonly logger: RuntimeLogger;
  private readonly clock: Pick<Clock, "now">;
  private readonly observations = new Lru<Observation>(CACHE_SIZE);
  private readonly aggregates = new Lru<{ messages: Set<string>; last: number }>(CACHE_SIZE);
  private readonly spam = new Lru<{ tokens: number; last: number }>(CACHE_SIZE);
  /** Writes per event key are chained so a repeat never races its own first write. */
  private readonly chains = new Map<string, Promise<void>>();
  private pending = 0;
  private closed = false;

  constructor(options: EventRecorderOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    try {
      this.record(obj, type, reason, message);
    } catch (err) {
      this.logger.warn({ err, reason }, "cannot record event");
    }
  }

  /** Resolves once every write started so far has finished. */
  async flush(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  /** Stops accepting events and waits for the writes in flight. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private record(obj: KubeObject, type: EventType, reason: string, rawMessage: string): void {
    if (this.closed) return;
    const meta = obj.metadata;
    if (!meta?.name) throw new Error("the involved object has no metadata.name");
    const now = this.clock.now();
    const { component, host = "" } = this.options;
    const involved = {
      kind: obj.kind,
      namespace: meta.namespace,
      name: meta.name,
      uid: meta.uid,
      apiVersion: obj.apiVersion,
      resourceVersion: meta.resourceVersion,
    };
    const objectId = [component, host, obj.kind, meta.namespace, meta.name, meta.uid, obj.apiVersion].join("\u0000");

    // Aggregation: similar events (differing only in message) past the threshold share one event.
    const aggregateKey = [objectId, type, reason].join("\u0000");
    let agg = this.aggregates.get(aggregateKey);
    if (agg === undefined || now - agg.last > AGGREGATE_INTERVAL_MS) agg = { messages: new Set(), last: now };
    agg.messages.add(rawMessage);
    agg.last = now;
    this.aggregates.set(aggregateKey, agg);
    let message = rawMessage;
    let eventKey = [aggregateKey, rawMessage].join("\u0000");
    if (agg.messages.size >= AGGREGATE_MAX_EVENTS) {
      // Keep the set bounded, as client-go does (PopAny).
      agg.messages.delete(agg.messages.values().next().value as string);
      message = `(combined from similar events): ${rawMessage}`;
      eventKey = aggregateKey;
    }

    // Spam filter: a token bucket per source + object.
    let bucket = this.spam.get(objectId);
    if (bucket === undefined) bucket = { tokens: SPAM_BURST, last: now };
    bucket.tokens = Math.min(SPAM_BURST, bucket.tokens + ((now - bucket.last) / 1000) * SPAM_QPS);
    bucket.last = now;
    this.spam.set(objectId, bucket);
    if (bucket.tokens < 1) {
      this.logger.debug({ reason, object: meta.name }, "event dropped by the spam filter");
      return;
    }
    bucket.tokens -= 1;

    if (this.pending >= MAX_PENDING) {
      this.logger.warn({ reason, object: meta.name }, "too many events waiting to be written, dropping one");
      return;
    }
    const timestamp = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
    const namespace = meta.namespace || "default";
    const previous = this.observations.get(eventKey);
    const observation: Observation =
      previous === undefined
        ? { count: 1, firstTimestamp: timestamp, name: `${meta.name}.${eventNameSuffix(now)}` }
        : { ...previous, count: previous.count + 1 };
    this.observations.set(eventKey, observation);
    const event: CoreEvent = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: observation.name, namespace },
      involvedObject: stripUndefined(involved),
      reason,
      message,
      type,
      count: observation.count,
      firstTimestamp: observation.firstTimestamp,
      lastTimestamp: timestamp,
      source: stripUndefined({ component, host: host || undefined }),
      reportingComponent: component,
      reportingInstance: host,
    };
    const isRepeat = previous !== undefined;
    this.pending++;
    const prior = this.chains.get(eventKey) ?? Promise.resolve();
    // Written in the background, outside the run that recorded it (write-trace.ts): whether the write
    // ended before that run did is chance, so a run's traced writes never list its events.
    const write = outsideRuns(() => prior.then(() => this.write(event, isRepeat, namespace)))
      .catch((err: unknown) => this.logger.warn({ err, reason, object: meta.name }, "cannot write event"))
      .finally(() => {
        this.pending--;
        if (this.chains.get(eventKey) === write) this.chains.delete(eventKey);
      });
    this.chains.set(eventKey, write);
  }

  private async write(event: CoreEvent, isRepeat: boolean, namespace: string): Promise<void> {
    const { events } = this.options;
    if (isRepeat) {
      try {
        await events.patch(
          event.metadata.name as string,
          { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message },
          { namespace, type: "merge" },
        );
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The earlier Event was deleted (TTL, or by hand): start over with a fresh one.
      }
    }
    await events.create(event, { namespace });
  }
}

/** client-go names events `<object>.<unix nanoseconds in hex>`; a counter keeps same-ms names apart. */
let sequence = 0;
function eventNameSuffix(nowMs: number): string {
  sequence = (sequence + 1) % 1_000_000;
  return (BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(sequence)).toString(16);
}

function stripUndefined<T extends object>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as T;
}
