/**
 * `capstan generate webhooks`: what the API server needs to call an operator's admission handlers
 * (operator/admission-handlers.ts), as kubebuilder's scaffold lays it out:
 *
 * - a Service `<operator>-webhook` in front of the operator's webhook port (443 -> 9443);
 * - a ValidatingWebhookConfiguration `<operator>-validating` and a MutatingWebhookConfiguration
 *   `<operator>-mutating` with exactly the rules each handler declares;
 * - the serving certificate: by default a cert-manager self-signed Issuer and a Certificate for the
 *   Service's DNS names, stored in the Secret the Deployment mounts, with cert-manager's CA
 *   injector filling each configuration's `caBundle` (`cert-manager.io/inject-ca-from`); with
 *   `--ca-bundle` the given CA is written into the configurations and no cert-manager object is
 *   made (the Secret is then the user's to create);
 * - for kinds with conversions (`op.convert`), their CRDs with `conversion.strategy: Webhook`
 *   calling the same Service (`crdsWithConversion`, used by `generate crds`).
 */
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { AdmissionWebhook } from "../operator/admission-handlers.ts";
import type { ConversionWebhook } from "../operator/conversion-handlers.ts";
import { webhookConfigurations, withWebhookConversion } from "../operator/webhook-configurations.ts";
import { DEFAULT_CERT_DIR, DEFAULT_WEBHOOK_PORT } from "../webhooks/webhook-server.ts";

/** Inputs of {@link webhookManifests}. */
export interface WebhookManifestOptions {
  /** The operator's name (names the Service, Secret, configurations). */
  name: string;
  namespace: string;
  labels: Record<string, string>;
  webhooks: readonly AdmissionWebhook[];
  /** Its conversion webhooks (`op.convert`): they need the Service and certificate too. */
  conversions?: readonly ConversionWebhook[];
  /** PEM of the CA that signed the serving certificate; absent: cert-manager makes and injects it. */
  caBundle?: string;
}

/**
 * The CRDs of kinds with conversions, with `conversion.strategy: Webhook` calling the operator's
 * Service, and either the `--ca-bundle` CA or cert-manager's injection annotation
 * (`cert-manager.io/inject-ca-from`, which the CA injector honours on CRDs too).
 */
export function crdsWithConversion(
  crds: readonly CustomResourceDefinition[],
  options: Pick<WebhookManifestOptions, "name" | "namespace" | "conversions" | "caBundle">,
): CustomResourceDefinition[] {
  const caBundle = options.caBundle === undefined ? undefined : Buffer.from(options.caBundle).toString("base64");
  return crds.map((crd) => {
    const conversion = options.conversions?.find((c) => c.kind.crdName === crd.metadata?.name);
    if (conversion === undefined) return crd;
    const converted = withWebhookConversion(crd, conversion, {
      service: { name: webhookServiceName(options.name), namespace: options.namespace },
      ...(caBundle === undefined ? {} : { caBundle }),
    });
    if (caBundle !== undefined) return converted;
    const annotations = { ...converted.metadata?.annotations, ...injectCaFrom(options.name, options.namespace) };
    return { ...converted, metadata: { ...converted.metadata, annotations } };
  });
}

function webhookServiceName(operator: string): string {
  return `${operator}-webhook`;
}

function injectCaFrom(operator: string, namespace: string): Record<string, string> {
  return { "cert-manager.io/inject-ca-from": `${namespace}/${operator}-serving-cert` };
}

/** The Secret holding the webhook server's `tls.crt` and `tls.key`. */
export function webhookCertSecretName(operator: string): string {
  return `${operator}-webhook-server-cert`;
}

/** The Deployment's additions for a webhook server: its port, and the Secret mounted where it reads certificates. */
export const WEBHOOK_SERVER = { port: DEFAULT_WEBHOOK_PORT, certDir: DEFAULT_CERT_DIR } as const;

/** The manifests, in an order `kubectl apply` accepts (the Issuer before the Certificate). */
export function webhookManifests(options: WebhookManifestOptions & { url?: string }): object[] {
  const { name, namespace, labels, webhooks } = options;
  if (webhooks.length === 0 && (options.conversions?.length ?? 0) === 0) return [];
  const service = webhookServiceName(name);
  const certificate = `${name}-serving-cert`;
  const issuer = `${name}-selfsigned-issuer`;
  const caBundle = options.caBundle === undefined ? undefined : Buffer.from(options.caBundle).toString("base64");
  const annotations = caBundle === undefined ? injectCaFrom(name, namespace) : undefined;
  const docs: object[] = [];
  if (caBundle === undefined) {
    docs.push(
      {
        apiVersion: "cert-manager.io/v1",
        kind: "Issuer",
        metadata: { name: issuer, namespace, labels: { ...labels } },
        spec: { selfSigned: {} },
      },
      {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: { name: certificate, namespace, labels: { ...labels } },
        spec: {
          dnsNames: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`],
          issuerRef: { kind: "Issuer", name: issuer },
          secretName: webhookCertSecretName(name),
        },
      },
    );
  }
  docs.push({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: service, namespace, labels: { ...labels } },
    spec: {
      ports: [{ name: "webhook", port: 443, protocol: "TCP", targetPort: "webhook" }],
      // The Deployment's pod selector (deployment-manifest.ts).
      selector: { "app.kubernetes.io/name": name },
    },
  } satisfies Service);
  docs.push(
    ...webhookConfigurations({
      name,
      labels,
      ...(annotations ? { annotations } : {}),
      webhooks,
      clientConfig: {
        ...(options.url !== undefined ? { url: options.url } : { service: { name: service, namespace } }),
        ...(caBundle === undefined ? {} : { caBundle }),
      },
    }),
  );
  return docs;
}
