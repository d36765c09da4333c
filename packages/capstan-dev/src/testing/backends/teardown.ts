/**
 * Deleting what a run created on a shared cluster (`created-objects.ts`), and waiting until it is
 * gone, within a bounded time.
 *
 * ## Guarantees
 * - Every recorded object is asked to be deleted (background propagation: its dependents go too,
 *   through the cluster's garbage collector), all at once; an object already gone counts as deleted.
 * - Objects in `deleted` (deleted already by the caller) are only waited for, never deleted again:
 *   one re-created since (another uid) counts as gone.
 * - Resolves once none of them exists any more; rejects after `timeoutMs` naming those still there
 *   (a namespace stuck Terminating on a finalizer nobody serves, for instance), and with the first
 *   request that failed for another reason than 404. Either way every deletion was attempted.
 */
import type { KubeClient } from "capstan";
import { isNotFound } from "capstan";
import { waitUntil } from "../wait-for.ts";
import type { CreatedObject } from "./created-objects.ts";

/**
 * How often a deletion is checked: a real cluster deletes a namespace in seconds, so checking four
 * times a second adds at most a quarter of a second to `stop()` and few requests.
 */
const DELETION_POLL_MS = 250;

/** Deletes `objects` and waits for them to be gone; see the module documentation. */
export async function deleteAndWait(
  client: KubeClient,
  objects: readonly CreatedObject[],
  timeoutMs: number,
  deleted: readonly CreatedObject[] = [],
): Promise<void> {
  const failures: string[] = [];
  await Promise.all(
    objects.map(async (obj) => {
      try {
        await client.request("DELETE", obj.path, { body: { propagationPolicy: "Background" } });
      } catch (err) {
        if (!isNotFound(err)) failures.push(`${obj.description}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }),
  );
  const remaining = new Set([...objects, ...deleted]);
  try {
    await waitUntil(
      async () => {
        await Promise.all(
          [...remaining].map(async (obj) => {
            try {
              const current = await client.request<{ metadata?: { uid?: string } }>("GET", obj.path);
              if (obj.uid !== undefined && current.metadata?.uid !== obj.uid) remaining.delete(obj);
            } catch (err) {
              if (isNotFound(err)) remaining.delete(obj);
            }
          }),
        );
        return remaining.size === 0;
      },
      { timeout: timeoutMs, interval: DELETION_POLL_MS, what: () => "" },
    );
  } catch {
    failures.push(`still there after ${timeoutMs} ms: ${[...remaining].map((o) => o.description).join(", ")}`);
  }
  if (failures.length > 0) {
    throw new Error(`the test cluster could not delete everything it created: ${failures.join("; ")}`);
  }
}
