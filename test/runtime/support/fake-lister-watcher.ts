/**
 * An in-memory API for one kind that implements the ListerWatcher contract the informer
 * consumes: paginated lists, watches replayed from a resourceVersion, bookmarks, forced
 * 410s, dropped watches and injected errors. Watch streams end when their signal aborts.
 */
import { createHook } from "node:async_hooks";
import { ApiError } from "../../../packages/capstan/src/client/errors.ts";
import type {
  KubeObject,
  ListerWatcher,
  ListOptions,
  ObjectList,
  WatchEvent,
  WatchOptions,
} from "../../../packages/capstan/src/client/types.ts";

export type TestObject = KubeObject & { data?: Record<string, string> };

/** The client's error for an API answer with `code`, as the real client throws it. */
export function apiError(code: number, message = `status ${code}`): ApiError {
  const reasons: Record<number, string> = {
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    500: "InternalError",
    503: "ServiceUnavailable",
  };
  return new ApiError({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason: reasons[code], message });
}

class FakeWatch<T extends KubeObject> implements AsyncIterable<WatchEvent<T>> {
  private buffer: WatchEvent<T>[] = [];
  private ended = false;
  private failure: unknown;
  private wake: (() => void) | undefined;

  constructor(
    private readonly owner: Set<FakeWatch<T>>,
    signal: AbortSignal | undefined,
  ) {
    signal?.addEventListener("abort", () => this.end(), { once: true });
  }

  push(event: WatchEvent<T>): void {
    if (this.ended) return;
    this.buffer.push(event);
    this.poke();
  }

  fail(error: unknown): void {
    this.failure = error;
    this.poke();
  }

  end(): void {
    this.ended = true;
    this.owner.delete(this);
    this.poke();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    try {
      for (;;) {
        const next = this.buffer.shift();
        if (next !== undefined) {
          yield structuredClone(next);
          continue;
        }
        if (this.failure !== undefined) {
          this.ended = true;
          throw this.failure;
        }
        if (this.ended) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      this.end();
    }
  }
}

export class FakeListerWatcher<T extends TestObject = TestObject> implements ListerWatcher<T> {
  private rv = 100;
  private readonly objects = new Map<string, T>();
  private history: { rv: number; event: WatchEvent<T> }[] = [];
  /** Watches from a version below this get 410 Gone. */
  private oldestWatchable = 0;
  private readonly watches = new Set<FakeWatch<T>>();
  /** While true, changes are stored but not sent to open watches (as if the stream stalled). */
  muted = false;
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  /** Errors thrown by the next list / watch calls, in order. */
  readonly listFailures: unknown[] = [];
  readonly watchFailures: unknown[] = [];

  get resourceVersion(): string {
    return String(this.rv);
  }

  get openWatches(): number {
    return this.watches.size;
  }

  /** The current objects: key -> resourceVersion. */
  current(): Map<string, string> {
    return new Map([...this.objects].map(([k, o]) => [k, o.metadata?.resourceVersion ?? ""]));
  }

  upsert(name: string, data: Record<string, string> = {}, namespace = "default"): T {
    const key = `${namespace}/${name}`;
    const exists = this.objects.has(key);
    const obj = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: String(++this.rv) },
      data,
    } as unknown as T;
    this.objects.set(key, obj);
    this.record({ type: exists ? "MODIFIED" : "ADDED", object: obj });
    return obj;
  }

  remove(name: string, namespace = "default"): void {
    const key = `${namespace}/${name}`;
    const obj = this.objects.get(key);
    if (obj === undefined) throw new Error(`no ${key}`);
    this.objects.delete(key);
    const deleted = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } } as T;
    this.record({ type: "DELETED", object: deleted });
  }

  /** Forgets the history: watches from any version seen so far get 410. */
  compact(): void {
    this.oldestWatchable = this.rv + 1;
    this.history = [];
  }

  bookmark(): void {
    const rv = String(++this.rv);
    for (const w of this.watches)
      w.push({ type: "BOOKMARK", object: { kind: "ConfigMap", metadata: { resourceVersion: rv } } });
  }

  closeWatches(): void {
    for (const w of [...this.watches]) w.end();
  }

  /** Sends an ERROR event with 410 to open watches (the client throws it from the iterator). */
  expireWatches(): void {
    for (const w of [...this.watches]) w.fail(apiError(410, "too old resource version"));
  }

  async list(options: ListOptions): Promise<ObjectList<T>> {
    this.listCalls.push(options);
    const failure = this.listFailures.shift();
    if (failure !== undefined) throw failure;
    const all = [...this.objects.values()].sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
    const start = options.continue ? Number(options.continue) : 0;
    const end = options.limit ? start + options.limit : all.length;
    const page = all.slice(start, end);
    return {
      apiVersion: "v1",
      kind: "ConfigMapList",
      metadata: { resourceVersion: String(this.rv), continue: end < all.length ? String(end) : undefined },
      // List items come without apiVersion/kind, as from a real API server.
      items: page.map((o) => {
        const { apiVersion: _a, kind: _k, ...rest } = structuredClone(o);
        return rest as T;
      }),
    };
  }

  async watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>> {
    this.watchCalls.push(options);
    const failure = this.watchFailures.shift();
    if (failure !== undefined) throw failure;
    const from = Number(options.resourceVersion ?? "0");
    if (from < this.oldestWatchable - 1) throw apiError(410, "too old resource version");
    const w = new FakeWatch<T>(this.watches, options.signal);
    this.watches.add(w);
    for (const h of this.history) if (h.rv > from) w.push(h.event);
    return w;
  }

  private record(event: WatchEvent<T>): void {
    this.history.push({ rv: this.rv, event });
    if (this.muted) return;
    for (const w of this.watches) w.push(event);
  }
}

/**
 * Tracks the timers that runtime code (src/runtime) creates from now on, so a test can prove that
 * stopping leaves none behind, regardless of the test runner's own timers.
 */
export function trackRuntimeTimers(): { pending(): Promise<number>; stop(): void } {
  const live = new Set<number>();
  const hook = createHook({
    init(asyncId, type) {
      if (type !== "Timeout") return;
      const stack = new Error().stack ?? "";
      if (stack.includes("/src/runtime/")) live.add(asyncId);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    async pending() {
      // Destroy hooks are delivered asynchronously; let them run.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      return live.size;
    },
    stop: () => hook.disable(),
  };
}
