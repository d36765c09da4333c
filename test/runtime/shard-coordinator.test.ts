import { waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/kube-client.ts";
import type { KubeObject, ListOptions, WatchEvent, WatchOptions } from "../../packages/capstan/src/client/types.ts";
import { Store } from "../../packages/capstan/src/runtime/cache.ts";
import { controllerOwnerKeys } from "../../packages/capstan/src/runtime/controller.ts";
import { HashRing } from "../../packages/capstan/src/runtime/hash-ring.ts";
import { coordinatorView, ShardCoordinator } from "../../packages/capstan/src/runtime/shard-coordinator.ts";
import { assignedMember, isDraining, shardLabels } from "../../packages/capstan/src/runtime/shard-labels.ts";
import { apiError } from "./support/fake-lister-watcher.ts";

const labels = shardLabels("widgets");
const WIDGET = { group: "example.com", version: "v1", kind: "Widget", plural: "widgets", namespaced: true };

/** PartialObjectMetadata as kube-apiserver's metadata view serves it. */
function metadataObject(name: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      resourceVersion: "42",
      generation: 3,
      creationTimestamp: "2026-12-02T11:00:00Z",
      annotations: { note: "a long annotation the coordinator never reads" },
      finalizers: ["example.com/cleanup"],
      managedFields: [{ manager: "kubectl", operation: "Apply" }],
      ...extra,
    },
  };
}

describe("the shard coordinator's view of an object", () => {
  it("keeps only the key, the resourceVersion, the ring's two labels and, for a child, its controller owner", () => {
    const child = coordinatorView(
      labels,
      true,
    )(
      metadataObject("w1-config", {
        labels: { [labels.shard]: "r1", [labels.drain]: "true", app: "w", [shardLabels("other").shard]: "x" },
        ownerReferences: [
          { apiVersion: "v1", kind: "Secret", name: "s", uid: "u-s" },
          { apiVersion: "example.com/v1", kind: "Widget", name: "w1", uid: "uid-w1", controller: true },
        ],
      }),
    );
    expect(JSON.parse(JSON.stringify(child))).toEqual({
      metadata: {
        name: "w1-config",
        namespace: "ns",
        resourceVersion: "42",
        labels: { [labels.shard]: "r1", [labels.drain]: "true" },
        ownerReferences: [{ apiVersion: "example.com/v1", kind: "Widget", name: "w1", controller: true }],
      },
    });
    // What the coordinator reads of it still answers as on the whole object.
    expect(assignedMember(labels, child)).toBe("r1");
    expect(isDraining(labels, child)).toBe(true);
    expect(controllerOwnerKeys(WIDGET, child)).toEqual(["ns/w1"]);

    const primary = coordinatorView(
      labels,
      false,
    )(
      metadataObject("w1", {
        ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "u", controller: true }],
      }),
    );
    expect(JSON.parse(JSON.stringify(primary))).toEqual({
      metadata: { name: "w1", namespace: "ns", resourceVersion: "42" },
    });
    expect(assignedMember(labels, primary)).toBeUndefined();
    expect(isDraining(labels, primary)).toBe(false);
  });

  it("shares one frozen labels object between objects with the same member, and is idempotent in a store", () => {
    const view = coordinatorView(labels, false);
    const a = view(metadataObject("a", { labels: { [labels.shard]: "r0", app: "1" } }));
    const b = view(metadataObject("b", { labels: { [labels.shard]: "r0", app: "2" } }));
    const c = view(metadataObject("c", { labels: { [labels.shard]: "r1" } }));
    expect(a.metadata?.labels).toBe(b.metadata?.labels);
    expect(Object.isFrozen(a.metadata?.labels)).toBe(true);
    expect(c.metadata?.labels).toEqual({ [labels.shard]: "r1" });
    expect(view(a)).toEqual(a);
    // In the coordinator's store: prepared (list page), inserted, then updated.
    const store = new Store<KubeObject>({ transform: view, builtInIndexes: false });
    store.upsert(store.prepare(metadataObject("d", { labels: { [labels.shard]: "r2" } })));
    const { previous, stored } = store.upsert(
      metadataObject("d", { resourceVersion: "43", labels: { [labels.shard]: "r2", [labels.drain]: "true" } }),
    );
    expect(JSON.parse(JSON.stringify([previous, stored]))).toEqual([
      { metadata: { name: "d", namespace: "ns", resourceVersion: "42", labels: { [labels.shard]: "r2" } } },
      {
        metadata: {
          name: "d",
          namespace: "ns",
          resourceVersion: "43",
          labels: { [labels.shard]: "r2", [labels.drain]: "true" },
        },
      },
    ]);
  });
});

/** A list of fixed objects and a watch the test feeds; every other call is recorded and answered 404. */
class FakeKind {
  readonly patches: { name: string; body: unknown }[] = [];
  private readonly open = new Set<(e: WatchEvent<KubeObject>) => void>();
  constructor(private readonly items: KubeObject[]) {}
  async list(_o: ListOptions) {
    return { metadata: { resourceVersion: "100" }, items: structuredClone(this.items) };
  }
  async watch(o: WatchOptions): Promise<AsyncIterable<WatchEvent<KubeObject>>> {
    const queue: WatchEvent<KubeObject>[] = [];
    let wake: (() => void) | undefined;
    const push = (e: WatchEvent<KubeObject>) => {
      queue.push(e);
      wake?.();
    };
    this.open.add(push);
    const open = this.open;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          while (!o.signal?.aborted) {
            const e = queue.shift();
            if (e !== undefined) yield e;
            else
              await new Promise<void>((r) => {
                wake = r;
                o.signal?.addEventListener("abort", () => r(), { once: true });
              });
          }
        } finally {
          open.delete(push);
        }
      },
    };
  }
  get watching(): boolean {
    return this.open.size > 0;
  }
  send(e: WatchEvent<KubeObject>): void {
    for (const push of this.open) push(structuredClone(e));
  }
  async patch(name: string, body: unknown) {
    this.patches.push({ name, body });
    return {};
  }
  async get(name: string): Promise<never> {
    throw apiError(404, `${name} not found`);
  }
  async delete() {
    return {};
  }
}

const stops: AbortController[] = [];
const runs: Promise<void>[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const s of stops.splice(0)) s.abort();
  await Promise.all(runs.splice(0));
});

describe("ShardCoordinator's counts", () => {
  it("keeps objects per member and misplaced objects with each event, without walking the objects", async () => {
    const widget = (name: string, member: string, rv: string): KubeObject =>
      metadataObject(name, { resourceVersion: rv, labels: { [labels.shard]: member } });
    const widgets = new FakeKind(Array.from({ length: 50 }, (_, i) => widget(`w${i}`, "r0", "10")));
    const leases = new FakeKind([
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          name: "widgets-r0",
          namespace: "ns",
          resourceVersion: "5",
          labels: { "capstan.dev/shard-ring": "widgets" },
        },
        spec: { holderIdentity: "r0", leaseDurationSeconds: 3600, renewTime: new Date().toISOString() },
      } as KubeObject,
    ]);
    const client = {
      metadata: () => widgets,
      resource: (kind: { kind: string }) => (kind.kind === "Lease" ? leases : widgets),
    } as unknown as KubeClient;
    const counts: Record<string, number>[] = [];
    const coordinator = new ShardCoordinator({
      client,
      labels,
      leaseNamespace: "ns",
      kinds: [{ kind: WIDGET, namespace: "ns", owns: [] }],
      workers: 2,
      observer: { assigned: (perMember) => counts.push(Object.fromEntries(perMember)) },
    });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(coordinator.run(stop.signal));
    await waitUntil(
      () => coordinator.state === "coordinating" && coordinator.busy() === undefined && widgets.watching,
      {
        what: "the coordinator synced and idle",
        timeout: 5000,
      },
    );
    expect(coordinator.members()).toEqual(["r0"]);
    expect(counts.at(-1)).toEqual({ r0: 50 });
    expect(widgets.patches).toEqual([]);

    // From here every placement the coordinator computes is counted: busy() and misplaced() must
    // answer from their counts, not hash all 50 objects again.
    const memberFor = vi.spyOn(HashRing.prototype, "memberFor");
    expect(coordinator.misplaced()).toBe(0);
    expect(coordinator.busy()).toBeUndefined();
    expect(memberFor).not.toHaveBeenCalled();

    // Someone labels w3 with a member that does not exist: misplaced, and the coordinator moves it back.
    widgets.send({ type: "MODIFIED", object: widget("w3", "r9", "11") });
    await waitUntil(() => widgets.patches.length === 1, { what: "the reassignment", timeout: 5000 });
    expect(widgets.patches[0]).toEqual({
      name: "w3",
      body: { metadata: { resourceVersion: "11", labels: { [labels.shard]: "r0", [labels.drain]: null } } },
    });
    expect(coordinator.misplaced()).toBe(1);
    expect(counts.at(-1)).toEqual({ r0: 49, r9: 1 });
    widgets.send({ type: "MODIFIED", object: widget("w3", "r0", "12") });
    await waitUntil(() => coordinator.misplaced() === 0 && coordinator.busy() === undefined, {
      what: "w3 back on r0",
      timeout: 5000,
    });
    expect(counts.at(-1)).toEqual({ r0: 50 });
    // A deletion counts the object out by the labels it was deleted with.
    widgets.send({ type: "DELETED", object: widget("w7", "r0", "13") });
    await waitUntil(() => counts.at(-1)?.r0 === 49, { what: "the deletion counted", timeout: 5000 });
    expect(counts.at(-1)).toEqual({ r0: 49 });
    // A handful of placements per event (the old and new version, the write's decision), not 50 per check.
    expect(memberFor.mock.calls.length).toBeLessThan(20);
  });
});
