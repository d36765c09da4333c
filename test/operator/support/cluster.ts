/**
 * What the operator's end-to-end tests share beside `capstan-dev/testing`'s cluster: the Machine
 * kind and its CRD (for the cluster to register up front), an operator started with quiet logs and short informer
 * backoffs until its handlers run, Events of an object, one namespace per test, and timer tracking.
 */
import { createHook } from "node:async_hooks";
import { type TestCluster, waitUntil } from "capstan-dev/testing";
import type { Event as CoreEvent } from "kubernetes-types/core/v1.d.ts";
import pino from "pino";
import { Type } from "typebox";
import type { Operator, OperatorStartOptions } from "../../../packages/capstan/src/operator/index.ts";
import { ConfigMap, Event } from "../../../packages/capstan/src/resources/builtins.ts";
import { toCrd } from "../../../packages/capstan/src/resources/crd.ts";
import { defineResource } from "../../../packages/capstan/src/resources/define-resource.ts";

export { ConfigMap };

/** The useless machine of the seeds: the operator flips the switch back down. */
export const Machine = defineResource({
  group: "useless.capstan.test",
  version: "v1alpha1",
  kind: "Machine",
  scope: "Namespaced",
  spec: Type.Object({
    switchPosition: Type.String(),
    size: Type.Optional(Type.Integer()),
  }),
  // Handler results land in status.<handler id>: the status keeps unknown fields.
  status: Type.Object({ flips: Type.Optional(Type.Integer()) }, { additionalProperties: true }),
});
export type MachineObject = ReturnType<typeof Machine.make>;

/** The Machine CRD, for `startTestCluster({ crds: [machineCrd] })`: tests create Machines before their operator starts. */
export const machineCrd = toCrd(Machine);

/**
 * The handler state operator `name` keeps on a Machine: in `status.capstan.<name>`, where it goes
 * for kinds defined with a status (operator/state-storage.ts), entry name -> raw JSON.
 */
export function handlerState(obj: { status?: unknown }, name: string): Record<string, string> {
  const all = (obj.status as { capstan?: Record<string, Record<string, string>> } | undefined)?.capstan;
  return all?.[name] ?? {};
}

/** A running operator and how to stop it. */
export interface RunningOperator {
  stop(): Promise<void>;
  /** Aborts the operator's signal without waiting (safe inside a handler or hook). */
  abort(): void;
  /** The promise `start` returned (rejects if the operator failed). */
  done: Promise<void>;
}

/**
 * Starts `op` against the cluster with quiet logs and short informer backoffs; resolves once its
 * handlers run (caches synced, controllers started).
 */
export async function run(
  op: Operator,
  cluster: TestCluster,
  extra: Partial<OperatorStartOptions> = {},
): Promise<RunningOperator> {
  const abort = new AbortController();
  const done = op.start({
    client: cluster.client,
    signal: abort.signal,
    logger: pino({ level: process.env.OP_LOG ?? "silent" }),
    informerDefaults: { backoff: { initial: 20, max: 200 } },
    gracefulShutdownTimeout: "5s",
    ...extra,
  });
  const failed = done.then(
    () => new Error("the operator stopped before it was running"),
    (err: unknown) => err,
  );
  await Promise.race([
    waitUntil(() => op.state === "leading" || op.state === "stopped", { what: "the operator to run" }),
    failed.then((err) => {
      throw err;
    }),
  ]);
  return {
    done,
    abort: () => abort.abort(),
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}

/** Events about object `name` in `namespace`. */
export async function eventsFor(cluster: TestCluster, namespace: string, name: string): Promise<CoreEvent[]> {
  const list = await cluster.client.resource(Event, namespace).list();
  return list.items.filter((e) => e.involvedObject?.name === name);
}

/** Creates a namespace for one test (objects of different tests never meet). */
export async function namespace(cluster: TestCluster, name: string): Promise<string> {
  await cluster.client
    .resource({ group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false })
    .create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    });
  return name;
}

/**
 * Tracks timers created by operator and runtime code from now on, so a test can prove that a
 * stopped operator leaves none behind (whatever the test runner itself schedules).
 */
export function trackTimers(): { pending(): Promise<number>; stop(): void } {
  const live = new Set<number>();
  const hook = createHook({
    init(asyncId, type) {
      if (type !== "Timeout") return;
      const stack = new Error().stack ?? "";
      if (stack.includes("/src/operator/") || stack.includes("/src/runtime/")) live.add(asyncId);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    async pending() {
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      return live.size;
    },
    stop: () => hook.disable(),
  };
}
