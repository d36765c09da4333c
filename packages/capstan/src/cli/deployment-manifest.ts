/**
 * The Deployment that runs an operator in a cluster with `capstan run`: what `capstan generate
 * deploy` prints.
 *
 * Guarantees:
 * - Without leader election: one replica and the `Recreate` strategy, so two copies never act at
 *   once (a rolling update would briefly run old and new side by side, both reconciling).
 * - With leader election: several replicas and rolling updates; the standby takes over when the
 *   leader's Lease is released on shutdown or expires.
 * - Liveness on `/healthz` and readiness on `/readyz` of the health port (plain HTTP, every
 *   interface of the pod: the kubelet probes the pod IP); `/metrics` over HTTPS on the metrics port
 *   (container port `metrics`), every scrape authenticated and authorized by the API server
 *   (`--metrics-secure`), reached through the `<name>-metrics-service` Service (port `https`), as
 *   kubebuilder's scaffolding does; the pod runs as a non-root user with a read-only root
 *   filesystem, no privilege escalation and no capabilities.
 */

import type { Deployment } from "kubernetes-types/apps/v1.d.ts";
import type { Namespace, Service } from "kubernetes-types/core/v1.d.ts";

/** kubebuilder's conventional ports: probes on 8081, secure metrics on 8443 (8080 is its plain HTTP port). */
export const DEFAULT_HEALTH_PORT = 8081;
export const DEFAULT_METRICS_PORT = 8443;
/** Two replicas are enough for a standby to take over; more only add watch load on the API server. */
export const LEADER_ELECTED_REPLICAS = 2;
/**
 * The UID of the `node` user of the official Node.js images, which the generated Dockerfile runs
 * as; a numeric UID lets the kubelet verify `runAsNonRoot`.
 */
export const NODE_IMAGE_UID = 1000;

/** Namespaces every cluster has: the manifests never create (or, on `kubectl delete -f`, delete) them. */
const SYSTEM_NAMESPACES = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);

export interface DeploymentOptions {
  /** Operator name: Deployment, ServiceAccount and label value. */
  name: string;
  namespace: string;
  image: string;
  /** The operator module's path inside the image (relative to its working directory). */
  operatorPath: string;
  /** Namespaces the operator watches (`capstan run --namespace`); all when empty. */
  watchNamespaces?: readonly string[];
  leaderElect: boolean;
  /** Sharded (`capstan run --sharded`): every replica works on its share; excludes `leaderElect`. */
  sharded?: boolean;
  /** With `sharded`: new objects are assigned at admission (`capstan run --shard-admission`). */
  shardAdmission?: boolean;
  /** Whether the operator registers its CRDs at start-up (`--no-crd-registration` when false). */
  registerCrds?: boolean;
  replicas?: number;
  healthPort?: number;
  metricsPort?: number;
  labels: Record<string, string>;
  /**
   * The operator serves admission webhooks: its port (named `webhook`, the Service's target) and
   * the Secret with its serving certificate, mounted where the server reads it.
   */
  webhookServer?: { port: number; certDir: string; certSecret: string };
}

/** The Namespace object for `namespace`, unless it is one every cluster has. */
export function namespaceManifest(namespace: string, labels: Record<string, string>): Namespace[] {
  if (SYSTEM_NAMESPACES.has(namespace)) return [];
  return [{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: { ...labels } } }];
}

/** The operator's Deployment; see the module documentation. */
export function deploymentManifest(options: DeploymentOptions): Deployment {
  const healthPort = options.healthPort ?? DEFAULT_HEALTH_PORT;
  const metricsPort = options.metricsPort ?? DEFAULT_METRICS_PORT;
  const several = options.leaderElect || options.sharded === true;
  if (options.leaderElect && options.sharded) throw new Error("--sharded and --leader-elect exclude each other");
  const replicas = several ? (options.replicas ?? LEADER_ELECTED_REPLICAS) : 1;
  if (!several && options.replicas !== undefined && options.replicas !== 1) {
    throw new Error(
      "more than one replica needs --leader-elect or --sharded: without either, every replica would reconcile the same objects",
    );
  }
  const selector = { "app.kubernetes.io/name": options.name };
  const webhook = options.webhookServer;
  const args = [
    options.operatorPath,
    `--health-probe-bind-address=:${healthPort}`,
    `--metrics-bind-address=:${metricsPort}`,
    // The default in a pod already; written out so the manifest says how metrics are served.
    "--metrics-secure=true",
    "--log-format=json",
    ...(options.watchNamespaces ?? []).map((ns) => `--namespace=${ns}`),
    ...(options.leaderElect ? ["--leader-elect"] : []),
    ...(options.sharded ? ["--sharded"] : []),
    ...(options.sharded && options.shardAdmission ? ["--shard-admission"] : []),
    ...(options.registerCrds === false ? ["--no-crd-registration"] : []),
  ];
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: options.name, namespace: options.namespace, labels: { ...options.labels } },
    spec: {
      replicas,
      strategy: several
        ? { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } }
        : { type: "Recreate" },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...options.labels, ...selector } },
        spec: {
          serviceAccountName: options.name,
          // The manager's graceful shutdown drains reconciles for up to 30 s (its default); give it that.
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: NODE_IMAGE_UID,
            runAsGroup: NODE_IMAGE_UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "operator",
              image: options.image,
              args,
              ports: [
                { name: "health", containerPort: healthPort, protocol: "TCP" },
                { name: "metrics", containerPort: metricsPort, protocol: "TCP" },
                ...(webhook ? [{ name: "webhook", containerPort: webhook.port, protocol: "TCP" }] : []),
              ],
              // Probe timings are kubebuilder's scaffold values: start-up (loading TypeScript through
              // tsx, listing every watched kind) takes seconds, not minutes.
              livenessProbe: {
                httpGet: { path: "/healthz", port: "health" },
                initialDelaySeconds: 15,
                periodSeconds: 20,
              },
              readinessProbe: {
                httpGet: { path: "/readyz", port: "health" },
                initialDelaySeconds: 5,
                periodSeconds: 10,
              },
              // Requests fit a Node.js process with a few informers; no CPU limit, so start-up
              // transpilation is not throttled; the memory limit leaves room for large caches.
              resources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "512Mi" } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
              },
              // tsx caches transpiled modules under the temp dir: the one writable place.
              volumeMounts: [
                { name: "tmp", mountPath: "/tmp" },
                ...(webhook ? [{ name: "webhook-certs", mountPath: webhook.certDir, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: "tmp", emptyDir: {} },
            ...(webhook ? [{ name: "webhook-certs", secret: { secretName: webhook.certSecret } }] : []),
          ],
        },
      },
    },
  };
}

/** Name of the Service in front of the secure metrics endpoint (kubebuilder's `<name>-metrics-service`). */
export function metricsServiceName(operator: string): string {
  return `${operator}-metrics-service`;
}

/**
 * The Service Prometheus (a ServiceMonitor with `scheme: https` and the scraper's bearer token)
 * scrapes: port `https` to the pods' `metrics` port, selecting the Deployment's pods.
 */
export function metricsServiceManifest(options: {
  name: string;
  namespace: string;
  metricsPort?: number;
  labels: Record<string, string>;
}): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: metricsServiceName(options.name), namespace: options.namespace, labels: { ...options.labels } },
    spec: {
      selector: { "app.kubernetes.io/name": options.name },
      ports: [
        {
          name: "https",
          port: options.metricsPort ?? DEFAULT_METRICS_PORT,
          targetPort: "metrics",
          protocol: "TCP",
        },
      ],
    },
  };
}
