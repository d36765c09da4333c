/**
 * The driver's side of bench/chaos.ts: creating, updating and deleting ChaosItems, 32 requests at a
 * time, persisting through injected failures, and reading back whether the operator converged.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  type CustomResource,
  isAlreadyExists,
  isNotFound,
  type KubeClient,
  type KubeObject,
  type ResourceClient,
} from "capstan";
import { ConfigMap } from "capstan/core";
import { NAMESPACE } from "./chaos-cluster.ts";
import { CHAOS_FINALIZER } from "./chaos-operator.ts";

/** Concurrent requests of the driver. */
export const DRIVER_CONCURRENCY = 32;

export type ChaosItemObject = KubeObject & { spec: { gen: number }; status?: { observedGen?: number } };

/** What the API server holds, judged against what the driver asked for. */
export interface State {
  /** Expected objects in their expected state (live: finalizer, child, status; deleted: gone with its child). */
  converged: number;
  /** Live objects the server no longer has. */
  lost: number;
  /** Deleted objects still held by a finalizer. */
  pendingFinalizers: number;
  /** Children whose owner is gone. */
  orphans: number;
  /** Deleted objects already gone. */
  gone: number;
  /** Names not converged yet (the first few, for messages). */
  notConverged: string[];
}

/** Runs `fn` on every item, `concurrency` at a time. */
export async function forEach<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
    }),
  );
}

/**
 * Calls `attempt` until it succeeds: an injected 500 on a POST is not retried by the client (the
 * write may have happened), so the driver retries, and `attempt` gets whether it is a retry.
 */
async function persist(what: string, attempt: (retry: boolean) => Promise<void>): Promise<void> {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n > 0);
    } catch (err) {
      if (n >= 30) throw new Error(`${what}: still failing after ${n + 1} attempts`, { cause: err });
      await sleep(Math.min(1000, 50 * 2 ** Math.min(n, 5)));
    }
  }
}

/** The ChaosItems of a scenario and what the driver asked of each. */
export class Workload {
  /** The gen asked of each live object, or "deleted". */
  readonly expected = new Map<string, number | "deleted">();
  readonly #client: KubeClient;
  readonly #kind: CustomResource & { apiVersion: string };
  readonly #namespace: string;

  constructor(client: KubeClient, kind: CustomResource & { apiVersion: string }, namespace = NAMESPACE) {
    this.#client = client;
    this.#kind = kind;
    this.#namespace = namespace;
  }

  #items(): ResourceClient<ChaosItemObject> {
    return this.#client.resource(this.#kind, this.#namespace) as unknown as ResourceClient<ChaosItemObject>;
  }

  /** Creates `names` with gen 1. */
  async create(names: readonly string[]): Promise<void> {
    const items = this.#items();
    await forEach(names, DRIVER_CONCURRENCY, (name) =>
      persist(`create ${name}`, async (retry) => {
        try {
          await items.create({
            apiVersion: this.#kind.apiVersion,
            kind: this.#kind.kind,
            metadata: { name },
            spec: { gen: 1 },
          });
        } catch (err) {
          if (!(retry && isAlreadyExists(err))) throw err; // an earlier attempt that failed was stored
        }
        this.expected.set(name, 1);
      }),
    );
  }

  /** Sets `spec.gen` of `names` to their gen + 1. */
  async bump(names: readonly string[]): Promise<void> {
    const items = this.#items();
    await forEach(names, DRIVER_CONCURRENCY, (name) =>
      persist(`update ${name}`, async () => {
        const gen = (this.expected.get(name) as number) + 1;
        await items.patch(name, { spec: { gen } }, { type: "merge" });
        this.expected.set(name, gen);
      }),
    );
  }

  /** Deletes `names` (their finalizer holds them until the operator lets go). */
  async delete(names: readonly string[]): Promise<void> {
    const items = this.#items();
    await forEach(names, DRIVER_CONCURRENCY, (name) =>
      persist(`delete ${name}`, async (retry) => {
        try {
          await items.delete(name);
        } catch (err) {
          if (!(retry && isNotFound(err))) throw err;
        }
        this.expected.set(name, "deleted");
      }),
    );
  }

  /**
   * Reads every ChaosItem and judges them against `expected`; with `children`, their child ConfigMaps
   * too (without, a live object's child is not checked and no orphan is counted: the cheap poll).
   */
  async state(children = true): Promise<State> {
    const [items, childList] = await Promise.all([
      this.#items().list(),
      children ? this.#client.resource(ConfigMap, this.#namespace).list() : undefined,
    ]);
    const live = new Map(items.items.map((o) => [o.metadata?.name ?? "", o]));
    const liveUids = new Set(items.items.map((o) => o.metadata?.uid));
    const childOf = new Map<string, KubeObject & { data?: Record<string, string> }>();
    let orphans = 0;
    for (const c of childList?.items ?? []) {
      const owner = c.metadata?.ownerReferences?.find((r) => r.kind === this.#kind.kind);
      if (owner === undefined) continue;
      if (!liveUids.has(owner.uid)) orphans++;
      else childOf.set(owner.name, c);
    }
    const state: State = { converged: 0, lost: 0, pendingFinalizers: 0, orphans, gone: 0, notConverged: [] };
    for (const [name, want] of this.expected) {
      const item = live.get(name);
      let ok: boolean;
      if (want === "deleted") {
        ok = item === undefined;
        if (ok) state.gone++;
        if (item?.metadata?.finalizers?.includes(CHAOS_FINALIZER)) state.pendingFinalizers++;
      } else if (item === undefined) {
        state.lost++;
        ok = false;
      } else {
        ok =
          item.spec.gen === want &&
          item.status?.observedGen === want &&
          (item.metadata?.finalizers?.includes(CHAOS_FINALIZER) ?? false) &&
          (childList === undefined || childOf.get(name)?.data?.["gen"] === String(want));
      }
      if (ok) state.converged++;
      else if (state.notConverged.length < 5) state.notConverged.push(name);
    }
    return state;
  }

  /**
   * Polls the objects (not their children: listing thousands of ConfigMaps several times a second
   * would load the API server it measures) until `done` holds, or `timeoutMs` passes; resolves with
   * the last state and whether it held.
   */
  async waitFor(
    done: (s: State) => boolean,
    timeoutMs: number,
    pollMs = 1000,
  ): Promise<{ state: State; met: boolean }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await this.state(false);
      if (done(state)) return { state, met: true };
      if (Date.now() > deadline) return { state, met: false };
      await sleep(pollMs);
    }
  }

  /**
   * Waits until every expected object converged with its child and no orphan is left, checking the
   * children once the objects alone look converged; resolves with the last full state.
   */
  async waitConverged(timeoutMs: number, pollMs = 1000): Promise<{ state: State; met: boolean }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const objects = await this.waitFor((s) => s.converged === this.expected.size, deadline - Date.now(), pollMs);
      const state = await this.state(true);
      if (state.converged === this.expected.size && state.orphans === 0) return { state, met: true };
      if (!objects.met || Date.now() > deadline) return { state, met: false };
      await sleep(pollMs);
    }
  }
}

/** `chaos-0`, `chaos-1`, ... */
export function itemNames(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `chaos-${from + i}`);
}
