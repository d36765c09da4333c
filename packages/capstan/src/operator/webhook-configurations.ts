/**
 * The webhook configurations an operator's handlers call for: its
 * Validating/MutatingWebhookConfigurations (`<operator>-validating`, `<operator>-mutating`, one
 * webhook per `op.on.validate`/`op.on.mutate` handler with exactly the rules it declares), and the
 * `conversion` of the CRDs of kinds it converts (`op.convert`). Built from one
 * {@link WebhookClientConfig}: a Service (deployment, `capstan generate`) or a URL (development,
 * `capstan dev`, `capstan-dev/testing`, an operator run outside the cluster).
 */
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import type { AdmissionWebhook } from "./admission-handlers.ts";
import type { ConversionWebhook } from "./conversion-handlers.ts";

/**
 * Where the API server reaches the operator's webhook server: a `url` base each handler's path is
 * appended to, or a Service (port 443 unless given); `caBundle` is the base64 PEM of the CA that
 * signed the server's certificate (cert-manager's CA injector can write it instead).
 */
export interface WebhookClientConfig {
  url?: string;
  service?: { name: string; namespace: string; port?: number };
  caBundle?: string;
}

/**
 * admissionregistration/v1's RuleWithOperations (kubernetes-types drops the fields it embeds from
 * Rule: resources and scope).
 */
interface RuleWithOperations {
  apiGroups: string[];
  apiVersions: string[];
  operations: string[];
  resources: string[];
  scope: "Namespaced" | "Cluster";
}

/** A handler's clientConfig: the base URL or the Service, with the handler's path. */
function clientConfigFor(config: WebhookClientConfig, path: string): Record<string, unknown> {
  return {
    ...(config.url !== undefined ? { url: `${config.url.replace(/\/+$/, "")}${path}` } : {}),
    ...(config.service !== undefined ? { service: { ...config.service, port: config.service.port ?? 443, path } } : {}),
    ...(config.caBundle !== undefined ? { caBundle: config.caBundle } : {}),
  };
}

/**
 * The MutatingWebhookConfiguration and ValidatingWebhookConfiguration of `webhooks` (each only when
 * it has webhooks), in that order.
 */
export function webhookConfigurations(options: {
  name: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  webhooks: readonly AdmissionWebhook[];
  clientConfig: WebhookClientConfig;
}): object[] {
  const { name, labels, annotations, webhooks } = options;
  const metadata = (suffix: string) => ({
    name: `${name}-${suffix}`,
    labels: { ...labels },
    ...(annotations ? { annotations: { ...annotations } } : {}),
  });
  const common = (w: AdmissionWebhook) => ({
    name: w.name,
    admissionReviewVersions: ["v1"],
    clientConfig: clientConfigFor(options.clientConfig, w.path),
    rules: [rule(w)],
    failurePolicy: w.options.failurePolicy ?? "Fail",
    matchPolicy: "Equivalent",
    sideEffects: w.options.sideEffects ?? "None",
    timeoutSeconds: Math.ceil(w.timeoutMs / 1000),
    ...(w.options.namespaceSelector ? { namespaceSelector: w.options.namespaceSelector } : {}),
    ...(w.options.objectSelector ? { objectSelector: w.options.objectSelector } : {}),
  });
  const validating = webhooks.filter((w) => w.type === "validating");
  const mutating = webhooks.filter((w) => w.type === "mutating");
  const docs: object[] = [];
  if (mutating.length > 0) {
    docs.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: metadata("mutating"),
      webhooks: mutating.map((w) => ({ ...common(w), reinvocationPolicy: w.options.reinvocationPolicy ?? "Never" })),
    });
  }
  if (validating.length > 0) {
    docs.push({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: metadata("validating"),
      webhooks: validating.map((w) => common(w)),
    });
  }
  return docs;
}

function rule(w: AdmissionWebhook): RuleWithOperations {
  const subresources = w.options.subresources ?? [];
  return {
    apiGroups: [w.kind.group],
    apiVersions: [w.kind.version],
    operations: [...(w.options.operations ?? ["CREATE", "UPDATE"])],
    resources: [w.kind.plural, ...subresources.map((s) => `${w.kind.plural}/${s}`)],
    scope: w.kind.namespaced ? "Namespaced" : "Cluster",
  };
}

/** `crd` with `conversion.strategy: Webhook` calling `webhook`'s path through `config`. */
export function withWebhookConversion(
  crd: CustomResourceDefinition,
  webhook: ConversionWebhook,
  config: WebhookClientConfig,
): CustomResourceDefinition {
  return {
    ...crd,
    spec: {
      ...crd.spec,
      conversion: {
        strategy: "Webhook",
        webhook: { clientConfig: clientConfigFor(config, webhook.path), conversionReviewVersions: ["v1"] },
      },
    },
  };
}
