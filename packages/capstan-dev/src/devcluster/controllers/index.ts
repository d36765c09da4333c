/**
 * The devcluster's built-in controllers, the in-process counterparts of kube-controller-manager's
 * and apiextensions-apiserver's: CRD lifecycle, garbage collection and namespace deletion. The
 * server starts them with itself and stops them in `stop()`.
 */
import type { Controller, ControllerContext } from "./cluster-view.ts";
import { CrdLifecycle } from "./crd-lifecycle.ts";
import { GarbageCollector } from "./garbage-collector.ts";
import { NamespaceLifecycle } from "./namespace-lifecycle.ts";

export type { Controller, ControllerContext } from "./cluster-view.ts";
export { CrdLifecycle } from "./crd-lifecycle.ts";
export { GarbageCollector } from "./garbage-collector.ts";
export { NamespaceLifecycle } from "./namespace-lifecycle.ts";

/** The running controllers of one server. */
export interface ControllerSet {
  readonly controllers: readonly Controller[];
  /** True when no controller has work queued or in flight. */
  idle(): boolean;
  /** Stops every controller and waits for work in flight. */
  stop(): Promise<void>;
}

/**
 * Starts the CRD lifecycle first (it installs the CRD kind's delete strategy and serves existing
 * CRDs), then the garbage collector and the namespace controller.
 * `onError` receives handler failures (they are retried with backoff).
 */
export function startControllers(
  ctx: ControllerContext,
  onError?: (controller: string, key: string, err: unknown) => void,
): ControllerSet {
  const crds = new CrdLifecycle(ctx);
  const gc = new GarbageCollector(ctx);
  const namespaces = new NamespaceLifecycle(ctx);
  const controllers = [crds, gc, namespaces];
  if (onError) {
    for (const c of controllers) c.onError = (key, err) => onError(c.name, key, err);
  }
  crds.start();
  gc.start();
  namespaces.start();
  return {
    controllers,
    idle: () => controllers.every((c) => c.idle()),
    stop: async () => {
      await Promise.all(controllers.map((c) => c.stop()));
    },
  };
}

/**
 * The controllers as a server plugin: started with the server, stopped (awaiting work in flight)
 * before it closes. Takes the structural subset of the server's plugin context it needs.
 */
export function controllersPlugin(ctx: ControllerContext): () => Promise<void> {
  // Idempotent per store: a server that already runs them (as a default plugin) is not given a second set.
  if (running.has(ctx.store)) return async () => {};
  const set = startControllers(ctx);
  running.add(ctx.store);
  return async () => {
    await set.stop();
    running.delete(ctx.store);
  };
}

const running = new WeakSet<object>();
