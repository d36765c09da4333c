/**
 * The labels that mark what one TestCluster run created on a shared cluster, and the sweep that
 * deletes what crashed earlier runs left behind.
 *
 * ## Guarantees
 * - Every run has its own id (random, 8 hex digits); its namespace is `<prefix>-<id>` and carries
 *   `capstan.dev/test-run=<id>` and `capstan.dev/test-started=<unix seconds>`, as do the
 *   cluster-scoped objects the run creates through its clients.
 * - The sweep deletes only objects with both labels whose start is older than `staleAfter`: a run
 *   still going (younger than that) is never touched, nor is anything without the labels.
 *
 * ## Caveats
 * - A run that lasts longer than `staleAfter` can be swept by another run starting then: keep it
 *   well above a suite's duration (default one hour).
 * - The sweep does not wait for the deletions: a namespace whose content has finalizers nobody
 *   serves any more stays Terminating, as it would for `kubectl delete`.
 */
import { randomBytes } from "node:crypto";
import type { KubeClient, ResourceKind } from "capstan";
import { isNotFound } from "capstan";
import {
  ClusterRole,
  ClusterRoleBinding,
  MutatingWebhookConfiguration,
  Namespace,
  ValidatingWebhookConfiguration,
} from "capstan/core";

/** The run's id. */
export const RUN_LABEL = "capstan.dev/test-run";
/** When the run started, in Unix seconds: what the sweep compares with `staleAfter`. */
export const STARTED_LABEL = "capstan.dev/test-started";

/** One run's id and labels. */
export interface RunLabels {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** A new run's id and labels, started `now` (milliseconds). */
export function newRun(now: number = Date.now()): RunLabels {
  const id = randomBytes(4).toString("hex");
  return { id, labels: { [RUN_LABEL]: id, [STARTED_LABEL]: String(Math.floor(now / 1000)) } };
}

/**
 * The kinds a run labels and the sweep looks at: namespaces and the cluster-scoped kinds tests
 * create. CRDs are shared between runs and swept by their users instead (`crd-users.ts`).
 */
const SWEPT_KINDS: readonly ResourceKind[] = [
  Namespace,
  ValidatingWebhookConfiguration,
  MutatingWebhookConfiguration,
  ClusterRoleBinding,
  ClusterRole,
];

/**
 * Deletes the objects of earlier runs started more than `staleAfterMs` before `now`; resolves with
 * `<Kind>/<name>` of each deleted. A kind the cluster does not serve, or the caller may not list, is
 * skipped: the sweep is housekeeping and must not stop a test that could otherwise run.
 */
export async function sweepStaleRuns(client: KubeClient, staleAfterMs: number, now = Date.now()): Promise<string[]> {
  const cutoff = Math.floor((now - staleAfterMs) / 1000);
  const swept: string[] = [];
  await Promise.all(
    SWEPT_KINDS.map(async (kind) => {
      let items: { metadata?: { name?: string; labels?: Record<string, string> } }[];
      try {
        items = (await client.resource(kind).list({ labelSelector: `${RUN_LABEL},${STARTED_LABEL}` })).items;
      } catch {
        return;
      }
      for (const obj of items) {
        const started = Number(obj.metadata?.labels?.[STARTED_LABEL]);
        const name = obj.metadata?.name;
        if (name === undefined || !Number.isFinite(started) || started >= cutoff) continue;
        try {
          await client.resource(kind).delete(name, { propagationPolicy: "Background" });
          swept.push(`${kind.kind}/${name}`);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }),
  );
  return swept.sort();
}
