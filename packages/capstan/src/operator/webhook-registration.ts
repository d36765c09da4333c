/**
 * Managed webhooks: an operator that registers its own Validating/MutatingWebhookConfigurations at
 * start-up, as Kopf's managed admission does (`settings.admission.managed`), so that a development
 * run (`capstan dev`, `capstan run --managed-webhooks-url`) needs no manifests. The configurations
 * are created, or replaced when they exist (a previous run's, with other handlers or another
 * address); one left for a type of handler the operator no longer has is deleted.
 *
 * Caveats: the operator's identity needs create, update and delete on the configurations, which
 * `capstan generate rbac` does not grant (deployments use `capstan generate webhooks`).
 */
import { isAlreadyExists, isNotFound } from "../client/errors.ts";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import type { AdmissionWebhook } from "./admission-handlers.ts";
import { type WebhookClientConfig, webhookConfigurations } from "./webhook-configurations.ts";

const CONFIGURATION_KINDS = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] as const;

function configurationKind(kind: string): ResourceKind {
  return {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind,
    plural: `${kind.toLowerCase()}s`,
    namespaced: false,
  };
}

/** Creates or replaces `<name>-mutating` and `<name>-validating`, and deletes the one with no handlers. */
export async function registerWebhookConfigurations(
  client: KubeClient,
  options: {
    name: string;
    webhooks: readonly AdmissionWebhook[];
    clientConfig: WebhookClientConfig;
    /** Default: managed-by capstan, and the operator's name. */
    labels?: Record<string, string>;
  },
  signal?: AbortSignal,
): Promise<void> {
  const docs = webhookConfigurations({
    name: options.name,
    labels: options.labels ?? { "app.kubernetes.io/managed-by": "capstan", "app.kubernetes.io/name": options.name },
    webhooks: options.webhooks,
    clientConfig: options.clientConfig,
  }) as KubeObject[];
  for (const kind of CONFIGURATION_KINDS) {
    const api = client.resource(configurationKind(kind));
    const suffix = kind === "MutatingWebhookConfiguration" ? "mutating" : "validating";
    const name = `${options.name}-${suffix}`;
    const doc = docs.find((d) => d.kind === kind);
    if (doc === undefined) {
      await deleteIfPresent(api, name, signal);
      continue;
    }
    try {
      await api.create(doc, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const current = await api.get(name, { signal });
      await api.update(
        { ...doc, metadata: { ...doc.metadata, resourceVersion: current.metadata?.resourceVersion } },
        { signal },
      );
    }
  }
}

/** Deletes `<name>-mutating` and `<name>-validating` (those that exist). */
export async function removeWebhookConfigurations(
  client: KubeClient,
  name: string,
  signal?: AbortSignal,
): Promise<void> {
  for (const kind of CONFIGURATION_KINDS) {
    const suffix = kind === "MutatingWebhookConfiguration" ? "mutating" : "validating";
    await deleteIfPresent(client.resource(configurationKind(kind)), `${name}-${suffix}`, signal);
  }
}

async function deleteIfPresent(
  api: ReturnType<KubeClient["resource"]>,
  name: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  await api.delete(name, { signal }).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}
