/**
 * What operator authors write: handler functions, the one typed context object each receives,
 * and the options of each handler kind. The registry entries built from them are internal.
 */
import type { ObjectMeta } from "kubernetes-types/meta/v1.d.ts";
import type { Logger } from "pino";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import type { Duration } from "../runtime/duration.ts";
import type { EventType } from "../runtime/event-recorder.ts";
import type { Diff } from "./diff.ts";
import type { Filters } from "./filters.ts";
import type { Purpose } from "./progress.ts";

/** `.spec`'s type of an object type (`undefined` when it has none). */
export type SpecOfObject<T> = T extends { spec?: infer S } ? S : undefined;
/** `.status`'s type of an object type (without `undefined`). */
export type StatusOfObject<T> = T extends { status?: infer S } ? NonNullable<S> : Record<string, unknown>;

/** A JSON merge patch of a value of type `V`: any field may be set, or set to `null` to remove it. */
export type MergePatchOf<V> = [V] extends [undefined]
  ? Record<string, unknown>
  : V extends readonly unknown[]
    ? V
    : V extends object
      ? { -readonly [K in keyof V]?: MergePatchOf<V[K]> | null }
      : V;

/**
 * Changes a handler collects while it runs (Kopf's `patch`); applied after it returns, in one
 * merge patch of the object (metadata, spec) and one of its status subresource. Assign fields:
 * `ctx.patch.status.rate = 1.2`, `ctx.patch.spec.switchPosition = "down"`,
 * `ctx.patch.metadata.labels.reviewed = "yes"` (`null` removes a field).
 */
export interface ObjectPatch<T extends KubeObject> {
  metadata: { labels: Record<string, string | null>; annotations: Record<string, string | null> };
  spec: MergePatchOf<SpecOfObject<T>>;
  status: MergePatchOf<StatusOfObject<T>>;
}

/** The essential part of an object as handlers compare it (spec, labels, annotations; no status). */
export type EssenceOf<T> = Omit<T, "apiVersion" | "kind" | "metadata" | "status"> & {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
};

/** Options of {@link ObjectContext.adopt}. */
export interface AdoptOptions {
  /**
   * For a child with neither `name` nor `generateName`: `"parent"` (default) names it after the
   * parent (idempotent: a re-run handler cannot create a second child); `"generate"` sets
   * `generateName: "<parent>-"`, Kopf's default, which creates a new child on every re-run.
   */
  naming?: "parent" | "generate";
}

/** What every handler kind gets about its object. */
export interface ObjectContext<T extends KubeObject> {
  /** The object as it was when the handler started (a read-only snapshot). */
  readonly obj: T;
  readonly spec: SpecOfObject<T>;
  readonly status: Partial<StatusOfObject<T>> | undefined;
  readonly meta: ObjectMeta;
  readonly name: string;
  /** `undefined` for cluster-scoped objects. */
  readonly namespace: string | undefined;
  /** Bound to the operator, handler, and the object's namespace/name. */
  readonly logger: Logger;
  /** The API client. */
  readonly api: KubeClient;
  /**
   * Aborts when this process must stop acting: leadership lost, or the graceful shutdown's drain
   * timed out (a running handler is given `gracefulShutdownTimeout` to finish first). A daemon's
   * signal also aborts as soon as the operator starts stopping and when its object goes away.
   */
  readonly signal: AbortSignal;
  /**
   * A copy of `child` controlled by this object: an ownerReference with `controller: true` and
   * `blockOwnerDeletion: true` (the API server then garbage-collects the child with its owner),
   * this object's namespace when it is namespaced and the child has none, and a name derived
   * from this object when the child has neither `name` nor `generateName` (see {@link AdoptOptions}).
   * Throws when the child already has another controller.
   */
  adopt<C extends KubeObject>(child: C, options?: AdoptOptions): C;
  /** Posts an Event about this object. */
  event(type: EventType, reason: string, message: string): void;
  /**
   * The operator's current time (its clock's: the system's, or a test's that moves it). Read the
   * time here rather than with `new Date()`, so a test that moves the clock moves it for you.
   */
  now(): Date;
}

/** Context of create, update, delete, resume and field handlers. */
export interface ChangeContext<T extends KubeObject, V = EssenceOf<T>> extends ObjectContext<T> {
  /** Which cause runs the handler. */
  readonly cause: Purpose;
  /** The handler's id (its progress annotation and `status.<id>` key). */
  readonly handlerId: string;
  /** Field-level changes (`spec.size` changed from 1 to 2); for field handlers, within that field. */
  readonly diff: Diff;
  /** The last handled essence (undefined on create); for field handlers, the field's old value. */
  readonly old: V | undefined;
  /** The current essence; for field handlers, the field's new value. */
  readonly new: V | undefined;
  /** Attempts that failed before this one (0 on the first attempt). */
  readonly retry: number;
  /** When the first attempt started. */
  readonly started: Date;
  /** Changes to apply after the handler returns (also when it throws). */
  readonly patch: ObjectPatch<T>;
}

/** Context of timer handlers. */
export interface TimerContext<T extends KubeObject> extends ObjectContext<T> {
  readonly handlerId: string;
  readonly patch: ObjectPatch<T>;
}

/** Context of a daemon: `obj` is always the latest cached version of the object. */
export interface DaemonContext<T extends KubeObject> extends ObjectContext<T> {
  readonly handlerId: string;
  /** Restarts after failures so far (0 on the first run). */
  readonly retry: number;
  /**
   * Waits `duration` (`"30s"`, ms) of the operator's clock: resolves `true` when the time has
   * passed, `false` as soon as the daemon's signal aborts. `Infinity` waits for the signal alone.
   * Sleep with this rather than with a timer of your own: while it sleeps the daemon counts as
   * idle (a test's `cluster.advance` waits for busy daemons), and a test's clock moves it.
   * `while (await ctx.sleep("1m")) { ... }` runs until the object goes away.
   */
  sleep(duration: Duration): Promise<boolean>;
}

/** Context of raw watch-event handlers (`op.on.event`). */
export interface EventContext<T extends KubeObject> {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  /** The object as the event carried it (for DELETED: its last known state). */
  readonly obj: T;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly logger: Logger;
  readonly api: KubeClient;
}

/** A handler's return value is stored under `status.<handler id>` unless `undefined` (or disabled). */
export type HandlerFn<C> = (ctx: C) => unknown;

/** Options of create, update, resume and field handlers. */
export interface HandlerOptions<T extends KubeObject> extends Filters<T> {
  /** Id of the handler: annotation key of its progress, `status.<id>` key of its result. Default: the function's name, else `<cause>-<n>`. */
  id?: string;
  /** Failed attempts after which the handler fails for good (default: unlimited, as Kopf). */
  retries?: number;
  /** Time since the first attempt after which a failure is final (default: none). */
  timeout?: Duration;
  /** First retry delay after an arbitrary error; doubles per attempt up to 60 s (default 1 s). */
  backoff?: Duration;
  /** Store the return value under `status.<id>` (default true, as Kopf). */
  storeResult?: boolean;
}

/** Options of delete handlers. */
export interface DeleteHandlerOptions<T extends KubeObject> extends HandlerOptions<T> {
  /**
   * Do not add the finalizer for this handler: it runs only if the object is seen while being
   * deleted (another finalizer holds it), best effort, as Kopf's `optional=True`.
   */
  optional?: boolean;
}

/** Options of timers. */
export interface TimerOptions<T extends KubeObject> extends Filters<T> {
  id?: string;
  /** Time between the end of one run and the start of the next. */
  interval: Duration;
  /** Time from the first sight of the object (in this process) to the first run (default 0). */
  initialDelay?: Duration;
  /** Run only when the object's essence (spec, labels, annotations) has not changed for this long. */
  idle?: Duration;
  /** Store the return value under `status.<id>` (default true). */
  storeResult?: boolean;
}

/** Options of daemons. */
export interface DaemonOptions<T extends KubeObject> extends Filters<T> {
  id?: string;
  /** Delay before the first start (default 0). */
  initialDelay?: Duration;
  /** First restart delay after a failure; doubles per failure up to 60 s (default 1 s). */
  backoff?: Duration;
}

/** Options of raw event handlers. */
export interface EventHandlerOptions<T extends KubeObject> extends Filters<T> {
  id?: string;
}

/** Causes a change handler can be registered for; `field` is an update or create touching one field. */
export type ChangeCause = Purpose | "field";

/** @internal A registered create/update/delete/resume/field handler. */
export interface ChangeHandlerSpec {
  readonly kind: ResourceKind;
  readonly id: string;
  readonly cause: ChangeCause;
  /** For field handlers. */
  readonly field?: readonly string[];
  readonly fn: HandlerFn<ChangeContext<KubeObject, unknown>>;
  readonly options: DeleteHandlerOptions<KubeObject>;
}

/** @internal A registered timer. */
export interface TimerSpec {
  readonly kind: ResourceKind;
  readonly id: string;
  readonly intervalMs: number;
  readonly initialDelayMs: number;
  readonly idleMs: number;
  readonly fn: HandlerFn<TimerContext<KubeObject>>;
  readonly options: TimerOptions<KubeObject>;
}

/** @internal A registered daemon. */
export interface DaemonSpec {
  readonly kind: ResourceKind;
  readonly id: string;
  readonly initialDelayMs: number;
  readonly backoffMs: number;
  readonly fn: HandlerFn<DaemonContext<KubeObject>>;
  readonly options: DaemonOptions<KubeObject>;
}

/** @internal A registered raw event handler. */
export interface EventHandlerSpec {
  readonly kind: ResourceKind;
  readonly id: string;
  readonly fn: HandlerFn<EventContext<KubeObject>>;
  readonly options: EventHandlerOptions<KubeObject>;
}
