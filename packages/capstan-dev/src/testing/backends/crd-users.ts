/**
 * CustomResourceDefinitions shared by the runs on one cluster. A CRD is cluster-wide: two test
 * files running at once that use the same kind use the same CRD, and the one that created it must
 * not delete it while the other still has objects and informers on it. Each run that uses a CRD
 * puts its user label on it, `capstan.dev/test-user-<run id>=<start, Unix seconds>`, and takes it
 * off when it stops; the last to leave deletes the CRD, when a test run created it.
 *
 * ## Expected flow
 * 1. A run creates a CRD through its client (its POST carries the run's labels and its user label:
 *    `created-objects.ts`), or uses one that exists ({@link joinCrd}: `crds`, an operator's CRDs,
 *    a CRD kubectl applied).
 * 2. At `stop()`, {@link leaveCrd}: with other live users, only the run's label is removed; as the
 *    last user, the CRD is deleted when it carries `capstan.dev/test-run` (a test run created it).
 *
 * ## Guarantees
 * - A CRD that existed before any test run (no `capstan.dev/test-run` label) is never deleted.
 * - Deciding "last user" and deleting is one step: the delete has the read's resourceVersion as
 *   precondition, so a run that joined in between makes it fail with 409, and the leaver reads again.
 * - A crashed run's user label does not keep a CRD forever: users started longer ago than the stale
 *   age (`run-labels.ts`) do not count, and the sweep removes their labels ({@link sweepCrdUsers}).
 *
 * ## Caveats
 * - A run joins an operator's CRD before starting it and again once it is served; if the CRD did not
 *   exist at the first join, another run's stop may delete it in between. It takes a whole other
 *   test file to finish within that moment.
 */
import type { KubeClient } from "capstan";
import { isConflict, isNotFound } from "capstan";
import { CustomResourceDefinition } from "capstan/core";
import { RUN_LABEL, type RunLabels, STARTED_LABEL } from "./run-labels.ts";

/** The prefix of the user labels: the rest of the key is the run's id. */
export const CRD_USER_PREFIX = "capstan.dev/test-user-";

/**
 * Read-decide-write rounds of {@link leaveCrd}: each lost round means another run joined or left
 * at that very moment, so a few are plenty; more would only hide a livelock.
 */
const MAX_LEAVE_ATTEMPTS = 8;

/** The user label of `run`, as a labels map. */
export function crdUserLabels(run: RunLabels): Record<string, string> {
  return { [`${CRD_USER_PREFIX}${run.id}`]: run.labels[STARTED_LABEL] ?? "0" };
}

/** The user labels of `labels` whose run started at or after `cutoff` (Unix seconds), apart from `except`. */
function liveUsers(labels: Readonly<Record<string, string>>, cutoff: number, except?: string): string[] {
  return Object.entries(labels)
    .filter(([k, v]) => k.startsWith(CRD_USER_PREFIX) && k !== except && Number(v) >= cutoff)
    .map(([k]) => k);
}

/** Puts `run`'s user label on the CRD `name`; resolves whether it exists (and is not being deleted). */
export async function joinCrd(client: KubeClient, name: string, run: RunLabels): Promise<boolean> {
  try {
    const crd = await client
      .resource(CustomResourceDefinition)
      .patch(name, { metadata: { labels: crdUserLabels(run) } }, { type: "merge" });
    return crd.metadata?.deletionTimestamp === undefined;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Takes `run`'s user label off the CRD `name`, and deletes the CRD when no live user is left and a
 * test run created it. Resolves with the deleted CRD's uid (to wait for: it is gone once its name
 * answers 404 or holds another uid), or `undefined` when it stays. `cutoff`: users started before it (Unix
 * seconds) are crashed runs and do not count.
 */
export async function leaveCrd(
  client: KubeClient,
  name: string,
  run: RunLabels,
  cutoff: number,
): Promise<string | undefined> {
  const crds = client.resource(CustomResourceDefinition);
  const mine = `${CRD_USER_PREFIX}${run.id}`;
  for (let attempt = 1; attempt <= MAX_LEAVE_ATTEMPTS; attempt++) {
    let crd: Awaited<ReturnType<typeof crds.get>>;
    try {
      crd = await crds.get(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const labels = crd.metadata?.labels ?? {};
    if (crd.metadata?.deletionTimestamp !== undefined) return undefined;
    if (liveUsers(labels, cutoff, mine).length > 0 || labels[RUN_LABEL] === undefined) {
      if (labels[mine] === undefined) return undefined;
      await crds.patch(name, { metadata: { labels: { [mine]: null } } }, { type: "merge" });
      return undefined;
    }
    const uid = crd.metadata?.uid ?? "";
    try {
      await crds.delete(name, {
        propagationPolicy: "Background",
        preconditions: { uid, resourceVersion: crd.metadata?.resourceVersion ?? "" },
      });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      if (isConflict(err)) continue; // someone joined or left since the read: decide again
      throw err;
    }
    return uid;
  }
  throw new Error(`could not release the CRD ${name}: it changed on each of ${MAX_LEAVE_ATTEMPTS} attempts`);
}

/**
 * The sweep's part for CRDs: removes the user labels of runs started before `cutoff` (Unix seconds)
 * and deletes the CRDs a test run created that were left with no live user, their creator started
 * before `cutoff` too. Resolves with the names of the deleted CRDs.
 */
export async function sweepCrdUsers(client: KubeClient, cutoff: number): Promise<string[]> {
  const crds = client.resource(CustomResourceDefinition);
  const swept: string[] = [];
  for (const crd of (await crds.list()).items) {
    const name = crd.metadata?.name;
    const labels = crd.metadata?.labels ?? {};
    if (name === undefined || crd.metadata?.deletionTimestamp !== undefined) continue;
    const stale = Object.keys(labels).filter((k) => k.startsWith(CRD_USER_PREFIX) && !(Number(labels[k]) >= cutoff));
    const started = Number(labels[STARTED_LABEL]);
    if (labels[RUN_LABEL] !== undefined && started < cutoff && liveUsers(labels, cutoff).length === 0) {
      try {
        await crds.delete(name, {
          propagationPolicy: "Background",
          preconditions: { resourceVersion: crd.metadata?.resourceVersion ?? "" },
        });
        swept.push(name);
      } catch (err) {
        // Gone, or someone joined since the list: it is theirs now.
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
    } else if (stale.length > 0) {
      const patch = { metadata: { labels: Object.fromEntries(stale.map((k) => [k, null])) } };
      await crds.patch(name, patch, { type: "merge" }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }
  return swept;
}
