/**
 * Admission webhooks benchmark (issue 15): what a validating and a mutating webhook add to a write
 * on the embedded API server. One JSON line.
 *
 *   npm run bench:webhooks
 *
 * One test cluster and one operator (both in this process, as a `capstan-dev/testing` test runs
 * them) with an `op.on.validate` and an `op.on.mutate` handler on a custom kind, registered by URL.
 * BENCH_OBJECTS (default 500) objects are created one at a time without the webhook
 * configurations, then as many with them, alternating in rounds of 50 so that load on a shared
 * machine hits both alike. Printed: p50 and p99 of each create's latency in both phases, and the
 * added latency (with minus without) at p50 and p99. Goal (issue 15): p99 added < 5 ms.
 *
 * Conversion webhooks are not built yet, so there is no conversions-per-second figure.
 */
import { Type } from "typebox";
import { operator } from "../packages/capstan/src/operator/index.ts";
import { toCrd } from "../packages/capstan/src/resources/crd.ts";
import { defineResource } from "../packages/capstan/src/resources/define-resource.ts";
import { AdmissionDenied } from "../packages/capstan/src/webhooks/admission.ts";
import { createServingCertificates } from "../packages/capstan-dev/src/devcluster/tls.ts";
import { startTestCluster } from "../packages/capstan-dev/src/testing/index.ts";

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 500);
/** Creates per phase before switching: alternating spreads a shared machine's load over both. */
const ROUND = 50;

const Gadget = defineResource({
  group: "bench.capstan.dev",
  version: "v1",
  kind: "Gadget",
  scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  const cluster = await startTestCluster({ crds: [toCrd(Gadget)] });
  const op = operator({ name: "bench" });
  op.on.validate(Gadget, function sized({ obj }) {
    if (obj.spec.size < 0) throw new AdmissionDenied("size must not be negative");
  });
  op.on.mutate(Gadget, function labelled({ obj }) {
    obj.metadata.labels = { ...obj.metadata.labels, sized: "yes" };
  });
  // A server of its own: cluster.run would otherwise register the configurations for the whole run.
  const certs = await createServingCertificates();
  const running = await cluster.run(op, {
    webhookServer: { port: 0, host: "127.0.0.1", tls: { cert: certs.certPem, key: certs.keyPem } },
  });
  const caBundle = Buffer.from(certs.caPem).toString("base64");
  const configs = (["mutating", "validating"] as const).map((type) => ({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: type === "mutating" ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration",
    metadata: { name: `bench-${type}` },
    webhooks: op
      .webhooks()
      .filter((w) => w.type === type)
      .map((w) => ({
        name: w.name,
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        clientConfig: { url: `https://127.0.0.1:${op.webhookPort}${w.path}`, caBundle },
        rules: [{ apiGroups: [Gadget.group], apiVersions: ["*"], operations: ["CREATE"], resources: [Gadget.plural] }],
      })),
  }));
  const configClients = {
    mutating: cluster.client.resource({
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "MutatingWebhookConfiguration",
      plural: "mutatingwebhookconfigurations",
      namespaced: false,
    }),
    validating: cluster.client.resource({
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "ValidatingWebhookConfiguration",
      plural: "validatingwebhookconfigurations",
      namespaced: false,
    }),
  };
  const gadgets = cluster.client.resource(Gadget, "default");
  const without: number[] = [];
  const withHooks: number[] = [];
  let n = 0;
  const createSome = async (into: number[]) => {
    for (let i = 0; i < ROUND && into.length < OBJECTS; i++) {
      const t0 = performance.now();
      await gadgets.create(Gadget.make({ metadata: { name: `g${n++}` }, spec: { size: 1 } }));
      into.push(performance.now() - t0);
    }
  };
  try {
    while (without.length < OBJECTS || withHooks.length < OBJECTS) {
      await createSome(without);
      for (const c of configs)
        await (c.kind === "MutatingWebhookConfiguration" ? configClients.mutating : configClients.validating).create(c);
      await createSome(withHooks);
      await configClients.mutating.delete("bench-mutating");
      await configClients.validating.delete("bench-validating");
    }
    const labelled = await gadgets.get(`g${ROUND}`);
    if (labelled.metadata.labels?.sized !== "yes")
      throw new Error("the mutating webhook did not run: the benchmark measured nothing");
  } finally {
    await running.stop();
    await cluster.stop();
  }
  const a = [...without].sort((x, y) => x - y);
  const b = [...withHooks].sort((x, y) => x - y);
  const round = (v: number) => Math.round(v * 100) / 100;
  console.log(
    JSON.stringify({
      bench: "webhooks",
      objects: OBJECTS,
      without_p50_ms: round(percentile(a, 50)),
      without_p99_ms: round(percentile(a, 99)),
      with_p50_ms: round(percentile(b, 50)),
      with_p99_ms: round(percentile(b, 99)),
      added_p50_ms: round(percentile(b, 50) - percentile(a, 50)),
      added_p99_ms: round(percentile(b, 99) - percentile(a, 99)),
    }),
  );
}

await main();
