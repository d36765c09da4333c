/**
 * Webhook configurations a previous `capstan dev` left in its data dir. Each operator under
 * `capstan dev` registers configurations calling its webhook server on a loopback port chosen for
 * that run (dev-webhooks.ts); once the run ends, they call a port nobody listens on, and with
 * `failurePolicy: Fail` every write of their kinds is refused ("connection refused") until they go.
 * The operators of the new run register theirs again when they start, so at start `capstan dev`
 * deletes the configurations that are Capstan's own (labelled managed-by capstan, as
 * registerWebhookConfigurations labels them) and call loopback URLs only. Anything else — a
 * configuration applied by hand, one calling a Service or another host — is left alone.
 */
import { isConflict, isNotFound, KubeClient, type KubeObject } from "capstan";
import { loadClientConfig } from "capstan/client";
import { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from "capstan/core";

const MANAGED_BY_CAPSTAN = "app.kubernetes.io/managed-by=capstan";

type Configuration = KubeObject & { webhooks?: { clientConfig?: { url?: string } }[] };

/** Whether every webhook of `configuration` calls a loopback URL, as those of `capstan dev`'s operators do. */
export function callsLoopbackOnly(configuration: Configuration): boolean {
  const webhooks = configuration.webhooks ?? [];
  return (
    webhooks.length > 0 &&
    webhooks.every((w) => {
      const url = w.clientConfig?.url;
      if (url === undefined) return false;
      try {
        const host = new URL(url).hostname;
        return host === "127.0.0.1" || host === "[::1]" || host === "localhost";
      } catch {
        return false;
      }
    })
  );
}

/** Deletes the stale configurations of the cluster behind `kubeconfigPath`; resolves with their kinds and names. */
export async function removeStaleDevWebhooks(kubeconfigPath: string): Promise<string[]> {
  const client = new KubeClient(loadClientConfig({ kubeconfig: kubeconfigPath }));
  const removed: string[] = [];
  try {
    for (const kind of [ValidatingWebhookConfiguration, MutatingWebhookConfiguration]) {
      const api = client.resource<Configuration>(kind);
      const { items } = await api.list({ labelSelector: MANAGED_BY_CAPSTAN });
      for (const configuration of items) {
        if (!callsLoopbackOnly(configuration)) continue;
        const name = configuration.metadata?.name as string;
        // Pinned to what was read: one replaced meanwhile (409) is not this one, and stays.
        const gone = await api.delete(name, { preconditions: { uid: configuration.metadata?.uid } }).then(
          () => true,
          (err: unknown) => {
            if (isNotFound(err) || isConflict(err)) return false;
            throw err;
          },
        );
        if (gone) removed.push(`${kind.kind}/${name}`);
      }
    }
  } finally {
    await client.close();
  }
  return removed;
}
