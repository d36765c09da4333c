import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { Store } from "../../packages/capstan/src/runtime/cache.ts";
import { controllerOwnerKeys } from "../../packages/capstan/src/runtime/controller.ts";
import { coordinatorView } from "../../packages/capstan/src/runtime/shard-coordinator.ts";
import { assignedMember, isDraining, shardLabels } from "../../packages/capstan/src/runtime/shard-labels.ts";

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
