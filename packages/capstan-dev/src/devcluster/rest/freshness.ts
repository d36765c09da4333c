/**
 * Waiting for the store to reach a resourceVersion a client asked for, as kube-apiserver's watch cache
 * does (waitUntilFreshAndBlock) before it answers 504 "Too large resource version".
 */
import type { Storage } from "../storage/storage.ts";

/** Why 3 s: the cacher's blockTimeout, how long a read waits for a version the cache has not seen yet. */
export const FRESHNESS_TIMEOUT_MS = 3_000;

/** Resolves once the storage revision is at least `revision`, or after `timeoutMs`, or when `signal` aborts. */
export function waitForRevision(
  storage: Storage,
  revision: number,
  signal?: AbortSignal,
  timeoutMs = FRESHNESS_TIMEOUT_MS,
): Promise<void> {
  if (storage.currentRevision() >= revision || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    let stop: () => void = () => {};
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      stop();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    signal?.addEventListener("abort", done, { once: true });
    stop = storage.watch(storage.currentRevision(), (change) => {
      if (change.rev >= revision) queueMicrotask(done);
    });
  });
}
