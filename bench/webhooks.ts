/**
 * Webhooks benchmark (issue 15): what admission webhooks add to a write, and what a conversion
 * webhook adds to a read, on the embedded API server. One JSON line per measurement.
 *
 *   npm run bench:webhooks
 *
 * One test cluster and the operators (all in this process, as a `capstan-dev/testing` test runs
 * them), their webhooks registered by URL.
 *
 * `bench: "webhooks"` (admission): an `op.on.validate` and an `op.on.mutate` handler on a custom
 * kind. BENCH_OBJECTS (default 500) objects are created one at a time without the webhook
 * configurations, then as many with them, alternating in rounds of 50 so that load on a shared
 * machine hits both alike. Printed: p50 and p99 of each create's latency in both phases, and the
 * added latency (with minus without) at p50 and p99. Goal (issue 15): p99 added < 5 ms.
 *
 * Conversions ("conversions per second", issue 15): an `op.convert` kind with versions v2 (the
 * typed hub, field `position`) and v1 (stored, field `switchPosition`); BENCH_OBJECTS objects are
 * written in v1, so a v2 read is one ConversionReview to the operator and a v1 read none.
 * - `bench: "webhooks-conversion-get"`: BENCH_OBJECTS GETs of one object in v2 (converted) and as
 *   many in v1 (not), one at a time, alternating in rounds of 50: p50/p99 of both, the added
 *   latency per converted read at p50 and p99, and GETs per second one at a time (= conversions/s).
 * - `bench: "webhooks-conversion-list"`: BENCH_LISTS (default 20) LISTs of all BENCH_OBJECTS
 *   objects in v2 (one ConversionReview carrying every object) and as many in v1, alternating one
 *   by one: p50/p99 of both, their p50 ratio, and objects listed per second in each version.
 * Every converted object is checked (v2, `position` = what v1 stored) and the server's count of
 * reviews and objects must match the requests: otherwise the bench throws (non-zero exit), since a
 * figure for a conversion that did not happen or went wrong measures nothing.
 */
import { Type } from "typebox";
import type { ResourceKind } from "../packages/capstan/src/client/types.ts";
import { operator } from "../packages/capstan/src/operator/index.ts";
import { toCrd } from "../packages/capstan/src/resources/crd.ts";
import { defineResource } from "../packages/capstan/src/resources/define-resource.ts";
import type { CustomObject } from "../packages/capstan/src/resources/resource-types.ts";
import { AdmissionDenied } from "../packages/capstan/src/webhooks/admission.ts";
import {
  type ConversionCounts,
  ConversionWebhookCaller,
} from "../packages/capstan-dev/src/devcluster/conversion/conversion-webhook.ts";
import { createServingCertificates } from "../packages/capstan-dev/src/devcluster/tls.ts";
import { startTestCluster, type TestCluster } from "../packages/capstan-dev/src/testing/index.ts";

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 500);
/**
 * LISTs of all OBJECTS per version: at a few tens of ms per converted list of 500, 20 of each keep
 * the conversion measurements to a few seconds while still giving a p99 that is not the maximum of 5.
 */
const LISTS = Number(process.env.BENCH_LISTS ?? 20);
/** Requests per phase before switching: alternating spreads a shared machine's load over both. */
const ROUND = 50;
/**
 * Unrecorded requests of each version first: the first conversions compile the webhook path and
 * open its keep-alive connection, which would otherwise land on whichever phase runs first.
 */
const WARM_UP = 20;

const Gadget = defineResource({
  group: "bench.capstan.dev",
  version: "v1",
  kind: "Gadget",
  scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
});

// v2 is the typed version (the hub); v1 is stored, so every v2 read goes through the webhook.
const WidgetV1Spec = Type.Object({ switchPosition: Type.String() });
const Widget = defineResource({
  group: "bench.capstan.dev",
  kind: "Widget",
  scope: "Namespaced",
  versions: [
    { name: "v2", spec: Type.Object({ position: Type.String() }) },
    { name: "v1", spec: WidgetV1Spec, storage: true },
  ],
});
type WidgetV1 = CustomObject<typeof WidgetV1Spec, undefined>;
const WidgetV1: ResourceKind<WidgetV1> = {
  group: Widget.group,
  version: "v1",
  kind: "Widget",
  plural: Widget.plural,
  namespaced: true,
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const round = (v: number) => Math.round(v * 100) / 100;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** p50 and p99 of two phases' latencies, and what the second adds to the first. */
function latencies(a: number[], b: number[], names: [string, string]): Record<string, number> {
  const x = [...a].sort((p, q) => p - q);
  const y = [...b].sort((p, q) => p - q);
  return {
    [`${names[0]}_p50_ms`]: round(percentile(x, 50)),
    [`${names[0]}_p99_ms`]: round(percentile(x, 99)),
    [`${names[1]}_p50_ms`]: round(percentile(y, 50)),
    [`${names[1]}_p99_ms`]: round(percentile(y, 99)),
    added_p50_ms: round(percentile(y, 50) - percentile(x, 50)),
    added_p99_ms: round(percentile(y, 99) - percentile(x, 99)),
  };
}

/** Creates one at a time with and without a validating and a mutating webhook. */
async function admission(cluster: TestCluster): Promise<void> {
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
  }
  console.log(
    JSON.stringify({
      bench: "webhooks",
      objects: OBJECTS,
      ...latencies(without, withHooks, ["without", "with"]),
    }),
  );
}

/** Throws unless `obj` is widget `i` as v2 shows it: a wrong conversion must not make a figure. */
function checkConverted(obj: { apiVersion?: string; metadata: { name?: string }; spec: object }, i: number): void {
  const expected = { position: `p${i}` };
  if (
    obj.apiVersion !== `${Widget.group}/v2` ||
    obj.metadata.name !== `w${i}` ||
    JSON.stringify(obj.spec) !== JSON.stringify(expected)
  ) {
    throw new Error(
      `conversion returned a wrong object for w${i}: ${JSON.stringify({ apiVersion: obj.apiVersion, name: obj.metadata.name, spec: obj.spec })}, expected ${Widget.group}/v2 spec ${JSON.stringify(expected)}`,
    );
  }
}

/** GETs and LISTs of a converted version against the same in the storage version. */
async function conversion(cluster: TestCluster): Promise<void> {
  const caller = cluster.server.internals.store.converter;
  if (!(caller instanceof ConversionWebhookCaller)) {
    throw new Error("the embedded server's converter is not its ConversionWebhookCaller: nothing to count");
  }
  /** The reviews sent and objects converted since `before` (a copy of the caller's counts). */
  const since = (before: ConversionCounts): ConversionCounts => ({
    reviews: caller.counts.reviews - before.reviews,
    objects: caller.counts.objects - before.objects,
  });
  const op = operator({ name: "bench-conversion" });
  op.convert(Widget, {
    v1: {
      toHub: (old: WidgetV1) => {
        const { switchPosition, ...rest } = old.spec;
        return { ...old, spec: { ...rest, position: switchPosition } };
      },
      fromHub: (hub) => {
        const { position, ...rest } = hub.spec;
        return { ...hub, spec: { ...rest, switchPosition: position } };
      },
    },
  });
  // run serves the conversion webhook on loopback and has the operator register Widget's CRD calling it.
  const running = await cluster.run(op);
  const stored = cluster.client.resource(WidgetV1, "default");
  const converted = cluster.client.resource(Widget, "default");
  try {
    // Written in the storage version: seeding converts nothing, so the counts below are the reads'.
    for (let i = 0; i < OBJECTS; i++) {
      await stored.create({
        apiVersion: `${Widget.group}/v1`,
        kind: "Widget",
        metadata: { name: `w${i}` },
        spec: { switchPosition: `p${i}` },
      });
    }
    for (let i = 0; i < WARM_UP; i++) {
      await stored.get(`w${i}`);
      checkConverted(await converted.get(`w${i}`), i);
    }

    // (a) One object at a time: what a conversion adds to a read.
    const v1Gets: number[] = [];
    const v2Gets: number[] = [];
    const before = { ...caller.counts };
    while (v1Gets.length < OBJECTS || v2Gets.length < OBJECTS) {
      for (let k = 0; k < ROUND && v1Gets.length < OBJECTS; k++) {
        const i = v1Gets.length;
        const t0 = performance.now();
        const obj = await stored.get(`w${i}`);
        v1Gets.push(performance.now() - t0);
        if (obj.spec.switchPosition !== `p${i}`) throw new Error(`w${i} read in v1 has ${JSON.stringify(obj.spec)}`);
      }
      for (let k = 0; k < ROUND && v2Gets.length < OBJECTS; k++) {
        const i = v2Gets.length;
        const t0 = performance.now();
        const obj = await converted.get(`w${i}`);
        v2Gets.push(performance.now() - t0);
        checkConverted(obj, i);
      }
    }
    const getCounts = since(before);
    if (getCounts.reviews !== OBJECTS || getCounts.objects !== OBJECTS) {
      throw new Error(`${OBJECTS} converted GETs made ${JSON.stringify(getCounts)} conversions, expected one each`);
    }
    console.log(
      JSON.stringify({
        bench: "webhooks-conversion-get",
        gets: OBJECTS,
        ...latencies(v1Gets, v2Gets, ["storage", "converted"]),
        // One at a time, so requests per second is 1 / mean latency: for v2, conversions per second.
        storage_gets_per_s: Math.round((OBJECTS * 1000) / sum(v1Gets)),
        converted_gets_per_s: Math.round((OBJECTS * 1000) / sum(v2Gets)),
        reviews: getCounts.reviews,
      }),
    );

    // (b) A whole list: one review carrying every object.
    const v1Lists: number[] = [];
    const v2Lists: number[] = [];
    const beforeLists = { ...caller.counts };
    while (v1Lists.length < LISTS) {
      let t0 = performance.now();
      const plain = await stored.list();
      v1Lists.push(performance.now() - t0);
      if (plain.items.length !== OBJECTS) throw new Error(`a v1 list has ${plain.items.length} of ${OBJECTS} objects`);
      t0 = performance.now();
      const list = await converted.list();
      v2Lists.push(performance.now() - t0);
      if (list.items.length !== OBJECTS) throw new Error(`a v2 list has ${list.items.length} of ${OBJECTS} objects`);
      for (const obj of list.items) checkConverted(obj, Number(obj.metadata.name?.slice(1)));
    }
    const listCounts = since(beforeLists);
    if (listCounts.reviews !== LISTS || listCounts.objects !== LISTS * OBJECTS) {
      throw new Error(
        `${LISTS} converted LISTs of ${OBJECTS} made ${JSON.stringify(listCounts)}, expected one review of ${OBJECTS} each`,
      );
    }
    const v1Sorted = [...v1Lists].sort((p, q) => p - q);
    const v2Sorted = [...v2Lists].sort((p, q) => p - q);
    console.log(
      JSON.stringify({
        bench: "webhooks-conversion-list",
        objects: OBJECTS,
        lists: LISTS,
        ...latencies(v1Lists, v2Lists, ["storage", "converted"]),
        ratio_p50: round(percentile(v2Sorted, 50) / percentile(v1Sorted, 50)),
        storage_objects_per_s: Math.round((LISTS * OBJECTS * 1000) / sum(v1Lists)),
        converted_objects_per_s: Math.round((LISTS * OBJECTS * 1000) / sum(v2Lists)),
        reviews: listCounts.reviews,
        objects_converted: listCounts.objects,
      }),
    );
  } finally {
    await running.stop();
  }
}

async function main(): Promise<void> {
  const cluster = await startTestCluster({ crds: [toCrd(Gadget)] });
  try {
    await admission(cluster);
    await conversion(cluster);
  } finally {
    await cluster.stop();
  }
}

await main();
