/**
 * The shard coordinator's memory per ring object (issue 28): V8 heap held by a ShardCoordinator that
 * has synced N objects of a ring kind, each with one child, as bench:sharding's chaos operator has
 * them (a ChaosItem with a finalizer, a ConfigMap it controls).
 *
 *   npm run bench:coordinator-memory            # BENCH_OBJECTS=10000 by default
 *
 * No API server: the coordinator's client is a fake whose metadata lists serve the objects as
 * kube-apiserver's `PartialObjectMetadata` (uid, generation, creationTimestamp, finalizers, owner
 * references, managedFields; parsed from JSON text page by page, as the client receives them) and
 * whose watches stay open and quiet. No member holds a Lease, so the coordinator writes nothing. The
 * heap in use after two full GCs is taken before the coordinator starts and once it has synced and
 * is idle; one JSON line: `objects`, `heap_mb` (the difference) and `bytes_per_ring_object`.
 */
import { ShardCoordinator, shardLabels } from "capstan/runtime";

const N = Number(process.env["BENCH_OBJECTS"] ?? 10_000);
if (!Number.isInteger(N) || N < 1) throw new Error(`BENCH_OBJECTS must be a positive integer, got ${N}`);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc (npm run bench:coordinator-memory)");

const CHAOS = { group: "chaos.capstan.dev", version: "v1", kind: "ChaosItem", plural: "chaositems", namespaced: true };
const CONFIGMAP = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true };
const MEMBERS = ["r0", "r1", "r2", "r3"];
const CREATED = "2026-12-02T11:00:00Z";
/** kube-apiserver's list page size is the informer's (500): pages are parsed one at a time. */
const LIST_PAGE = 500;

function uid(i: number, salt: number): string {
  const h = ((i * 2654435761 + salt * 97) >>> 0).toString(16).padStart(8, "0");
  return `${h}-${h.slice(0, 4)}-4${h.slice(1, 4)}-8${h.slice(2, 5)}-${h}${h.slice(0, 4)}`;
}

function item(i: number): object {
  return {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: {
      name: `chaos-${i}`,
      namespace: "chaos",
      uid: uid(i, 1),
      resourceVersion: String(100_000 + i * 3),
      generation: 2,
      creationTimestamp: CREATED,
      labels: { "shard.capstan.dev/chaos": MEMBERS[i % MEMBERS.length] },
      finalizers: ["chaos.capstan.dev/cleanup"],
      managedFields: [
        {
          manager: "chaos",
          operation: "Update",
          apiVersion: "chaos.capstan.dev/v1",
          time: CREATED,
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": { "f:finalizers": { ".": {}, 'v:"chaos.capstan.dev/cleanup"': {} } } },
        },
      ],
    },
  };
}

function child(i: number): object {
  const name = `chaos-${i}`;
  return {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: {
      name,
      namespace: "chaos",
      uid: uid(i, 2),
      resourceVersion: String(100_001 + i * 3),
      creationTimestamp: CREATED,
      labels: { "shard.capstan.dev/chaos": MEMBERS[i % MEMBERS.length] },
      ownerReferences: [
        {
          apiVersion: "chaos.capstan.dev/v1",
          kind: "ChaosItem",
          name,
          uid: uid(i, 1),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: "chaos",
          operation: "Apply",
          apiVersion: "v1",
          time: CREATED,
          fieldsType: "FieldsV1",
          fieldsV1: { "f:data": { "f:gen": {} }, "f:metadata": { "f:ownerReferences": {} } },
        },
      ],
    },
  };
}

/** A ListerWatcher serving `count` objects made by `make`, and watches that stay quiet until aborted. */
function listerWatcher(make: (i: number) => object, count: number) {
  return {
    async list(options: { limit?: number; continue?: string }) {
      const start = Number(options.continue ?? 0);
      const end = Math.min(count, start + (options.limit ?? LIST_PAGE));
      const items = [];
      for (let i = start; i < end; i++) items.push(make(i));
      const page = { metadata: { resourceVersion: "200000", continue: end < count ? String(end) : undefined }, items };
      return JSON.parse(JSON.stringify(page));
    },
    async watch(options: { signal?: AbortSignal }) {
      return {
        async *[Symbol.asyncIterator]() {
          await new Promise((resolve) => options.signal?.addEventListener("abort", resolve, { once: true }));
        },
      };
    },
  };
}

const client = {
  metadata: (kind: { kind: string }) => listerWatcher(kind.kind === "ChaosItem" ? item : child, N),
  resource: () => listerWatcher(() => ({}), 0),
};

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

const before = heapUsed();
const coordinator = new ShardCoordinator({
  client: client as unknown as ConstructorParameters<typeof ShardCoordinator>[0]["client"],
  labels: shardLabels("chaos"),
  leaseNamespace: "chaos",
  kinds: [{ kind: CHAOS, namespace: "chaos", owns: [CONFIGMAP] }],
});
const stop = new AbortController();
const running = coordinator.run(stop.signal);
while (coordinator.state !== "coordinating" || coordinator.busy() !== undefined) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const after = heapUsed();
process.stdout.write(
  `${JSON.stringify({
    objects: N,
    children_per_object: 1,
    heap_mb: Math.round(((after - before) / 2 ** 20) * 100) / 100,
    bytes_per_ring_object: Math.round((after - before) / N),
  })}\n`,
);
stop.abort();
await running;
