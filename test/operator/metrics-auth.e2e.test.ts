/**
 * Secure metrics against a real authorizer: an operator running as the ServiceAccount of the RBAC
 * `capstan generate rbac` prints, on a cluster that enforces RBAC, reviews every scrape of its HTTPS
 * `/metrics` with the API server (TokenReview, SubjectAccessReview). A scraper bound to the generated
 * `<operator>-metrics-reader` ClusterRole gets the metrics; one without it a 403; no token or a
 * token the API server does not know, a 401. Without the generated review rules, the operator
 * cannot review, and answers 500.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { generate } from "../../packages/capstan/src/cli/generate.ts";
import type { LoadedOperator } from "../../packages/capstan/src/cli/operator-module.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import {
  type RunningOperator,
  startTestCluster,
  type TestCluster,
  waitUntil,
} from "../../packages/capstan-dev/src/testing/index.ts";
import { scrape } from "../support/metrics-scrape.ts";

const NAME = "scraped";
const SYSTEM_NS = "scraped-system";

/** An operator with one controller: enough to have metrics, and RBAC to derive. */
function scrapedOperator() {
  const op = operator({ name: NAME });
  op.controller(ConfigMap).reconcile(() => {});
  return op;
}

type Manifest = { kind: string; metadata: { name: string }; rules?: { resources?: string[] }[] };

let cluster: TestCluster;
let manifests: Manifest[];

beforeAll(async () => {
  cluster = await startTestCluster(); // RBAC enforced, as a real cluster does
  const text = generate("rbac", scrapedOperator() as unknown as LoadedOperator, "operator.ts", {
    namespace: SYSTEM_NS,
    leaderElect: false,
  });
  manifests = parseAllDocuments(text).map((d) => d.toJS() as Manifest);
});
afterAll(async () => {
  await cluster?.stop();
});

async function apply(docs: object[]): Promise<void> {
  const applied = await cluster.kubectl(["apply", "-f", "-"], {
    stdin: docs.map((d) => `---\n${stringify(d)}`).join(""),
  });
  expect(applied.code, applied.stderr).toBe(0);
}

/** The bearer token in a ServiceAccount's kubeconfig (what a scraper mounts). */
async function tokenOf(key: string): Promise<string> {
  const sa = await cluster.serviceAccount(key);
  const kubeconfig = parse(await readFile(sa.kubeconfigPath, "utf8")) as { users: { user: { token: string } }[] };
  const token = kubeconfig.users[0]?.user.token;
  if (token === undefined) throw new Error(`no token in ${sa.kubeconfigPath}`);
  return token;
}

/** Binds `<operator>-metrics-reader` to a ServiceAccount, as one binds it to Prometheus's. */
async function bindMetricsReader(namespace: string, name: string): Promise<void> {
  await apply([
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${name}-reads-${NAME}-metrics` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${NAME}-metrics-reader` },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  ]);
}

/** Runs a fresh operator as its ServiceAccount with secure metrics forced on (tests do not run in a pod). */
async function runSecure(): Promise<{ running: RunningOperator; port: number }> {
  const sa = await cluster.serviceAccount(`${SYSTEM_NS}/${NAME}`);
  const op = scrapedOperator();
  const running = await cluster.run(op, {
    client: sa.client,
    metricsServer: { bindAddress: "127.0.0.1:0", secureServing: true },
  });
  const metrics = await waitUntil(() => op.endpointAddresses.metrics, { what: "the metrics server listening" });
  expect(metrics).toMatchObject({ host: "127.0.0.1", secure: true });
  return { running, port: metrics?.port ?? 0 };
}

describe("secure metrics under the generated RBAC", () => {
  it("generates the review rules for the operator and a metrics-reader ClusterRole", () => {
    const role = manifests.find((m) => m.kind === "ClusterRole" && m.metadata.name === NAME);
    const resources = (role?.rules ?? []).flatMap((r) => r.resources ?? []);
    expect(resources).toEqual(expect.arrayContaining(["tokenreviews", "subjectaccessreviews"]));
    expect(manifests.find((m) => m.metadata.name === `${NAME}-metrics-reader`)).toMatchObject({
      kind: "ClusterRole",
      rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
    });
  });

  it("gives 401 without a token or with a garbage one, 403 without the metrics-reader role, 200 with it", async () => {
    await apply(manifests);
    const { running, port } = await runSecure();
    try {
      expect(await scrape(port)).toEqual({ status: 401, body: "Unauthorized\n" });
      expect(await scrape(port, "not-a-token")).toEqual({ status: 401, body: "Unauthorized\n" });

      const stranger = await tokenOf("monitoring/stranger");
      expect(await scrape(port, stranger)).toEqual({
        status: 403,
        body: "Authorization denied for user system:serviceaccount:monitoring:stranger\n",
      });

      const prometheus = await tokenOf("monitoring/prometheus");
      await bindMetricsReader("monitoring", "prometheus");
      const allowed = await scrape(port, prometheus);
      expect(allowed.status).toBe(200);
      expect(allowed.body).toContain("# TYPE controller_runtime_reconcile_total counter");
      expect(allowed.body).toContain('controller_runtime_max_concurrent_reconciles{controller="configmap"}');

      // The operator was refused nothing along the way.
      expect(running.logs.filter((r) => /forbidden|\b403\b/i.test(JSON.stringify(r)))).toEqual([]);
    } finally {
      await running.stop();
    }
  }, 60_000);

  it("answers 500 and says why when the operator may not create TokenReviews", async () => {
    const withoutReviews = manifests.map((m) =>
      m.kind === "ClusterRole" && m.metadata.name === NAME
        ? { ...m, rules: (m.rules ?? []).filter((r) => !(r.resources ?? []).includes("tokenreviews")) }
        : m,
    );
    await apply(withoutReviews);
    const { running, port } = await runSecure();
    try {
      const prometheus = await tokenOf("monitoring/prometheus");
      expect(await scrape(port, prometheus)).toEqual({ status: 500, body: "Authentication failed\n" });
      const logged = await running.waitForLog("metrics: authentication failed (TokenReview)");
      expect(JSON.stringify(logged)).toContain('cannot create resource \\"tokenreviews\\"');
    } finally {
      await running.stop();
      await apply(manifests);
    }
  }, 60_000);
});
