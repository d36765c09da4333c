/**
 * `op.convert`: a kind with two versions, converted by the operator's conversion webhook, which
 * the embedded API server calls over HTTPS on every read and write of the version that is not
 * stored, as kube-apiserver calls a CRD's conversion webhook.
 */
import { startTestCluster } from "capstan-dev/testing";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import type { KubeObject, ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import type { CustomObject } from "../../packages/capstan/src/resources/resource-types.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { namespace } from "./support/cluster.ts";

const GROUP = "conversion.capstan.test";
const V1Spec = Type.Object({ switchPosition: Type.Optional(Type.String()), colour: Type.Optional(Type.String()) });
// v2 is the typed version (the hub); v1 is stored, so a v2 read or write always goes through the webhook.
const Gadget = defineResource({
  group: GROUP,
  kind: "Gadget",
  scope: "Namespaced",
  versions: [
    { name: "v2", spec: Type.Object({ position: Type.Optional(Type.String()), colour: Type.Optional(Type.String()) }) },
    { name: "v1", spec: V1Spec, storage: true },
  ],
});
type GadgetV1 = CustomObject<typeof V1Spec, undefined>;
const v1: ResourceKind<GadgetV1> = { group: GROUP, version: "v1", kind: "Gadget", plural: "gadgets", namespaced: true };

function gadgetOperator(calls: string[] = []) {
  const op = operator({ name: "gadgets" });
  op.convert(Gadget, {
    v1: {
      toHub: (old: GadgetV1) => {
        calls.push(`toHub ${old.metadata.name}`);
        if (old.spec.switchPosition === "explode") throw new Error("cannot convert an exploding switch");
        const { switchPosition, ...rest } = old.spec;
        return { ...old, spec: { ...rest, ...(switchPosition === undefined ? {} : { position: switchPosition }) } };
      },
      fromHub: (hub) => {
        calls.push(`fromHub ${hub.metadata.name}`);
        const { position, ...rest } = hub.spec;
        return { ...hub, spec: { ...rest, ...(position === undefined ? {} : { switchPosition: position }) } };
      },
    },
  });
  return op;
}

const cluster = fileFixture(() => startTestCluster());

describe("conversion webhooks", () => {
  it("refuses conversions that do not cover exactly the kind's other versions", () => {
    const op = operator({ name: "bad" });
    expect(() => op.convert(Gadget, {})).toThrow("convert(Gadget): no conversion for v1 (toHub and fromHub)");
    expect(() =>
      op.convert(Gadget, { v2: { toHub: (o: KubeObject) => o, fromHub: (o: KubeObject) => o } } as never),
    ).toThrow("v2 is the hub");
    expect(() =>
      op.convert(Gadget, { v3: { toHub: (o: KubeObject) => o, fromHub: (o: KubeObject) => o } } as never),
    ).toThrow("v3 is not a version of Gadget (v2, v1)");
  });

  it("converts writes to the storage version and reads, lists, patches and watches back", async () => {
    const ns = await namespace(cluster, "convert-rw");
    const calls: string[] = [];
    const running = await cluster.run(gadgetOperator(calls));
    try {
      const crd = await cluster.client
        .resource({
          group: "apiextensions.k8s.io",
          version: "v1",
          kind: "CustomResourceDefinition",
          plural: "customresourcedefinitions",
          namespaced: false,
        })
        .get(Gadget.crdName);
      expect((crd as { spec: { conversion: { strategy: string } } }).spec.conversion.strategy).toBe("Webhook");

      const gadgets = cluster.client.resource(Gadget, ns);
      // Written in v2 (typed): stored as v1, so the webhook converted it on the way in.
      const created = await gadgets.create(
        Gadget.make({ metadata: { name: "a", namespace: ns }, spec: { position: "up", colour: "red" } }),
      );
      expect(created.apiVersion).toBe(`${GROUP}/v2`);
      expect(created.spec).toEqual({ position: "up", colour: "red" });
      const stored = await cluster.client.resource(v1, ns).get("a");
      expect(stored.apiVersion).toBe(`${GROUP}/v1`);
      expect((stored as GadgetV1).spec).toEqual({ switchPosition: "up", colour: "red" });
      expect(calls).toContain("toHub a");

      // Written in v1, read in v2; a list converts every item.
      await cluster.client.resource(v1, ns).create({
        apiVersion: `${GROUP}/v1`,
        kind: "Gadget",
        metadata: { name: "b", namespace: ns },
        spec: { switchPosition: "down" },
      });
      const read = await gadgets.get("b");
      expect(read.spec).toEqual({ position: "down" });
      const listed = await gadgets.list();
      expect(listed.items.map((g) => [g.apiVersion, g.metadata.name, g.spec.position])).toEqual([
        [`${GROUP}/v2`, "a", "up"],
        [`${GROUP}/v2`, "b", "down"],
      ]);

      // A merge patch in v2 applies to the v2 shape, and lands in v1's field.
      const patched = await gadgets.patch("b", { spec: { position: "up" } }, { type: "merge" });
      expect(patched.spec.position).toBe("up");
      expect(((await cluster.client.resource(v1, ns).get("b")) as GadgetV1).spec.switchPosition).toBe("up");

      // kubectl reads either version by its full name.
      const yaml = await cluster.kubectl([
        "get",
        `gadgets.v2.${GROUP}`,
        "b",
        "-n",
        ns,
        "-o",
        "jsonpath={.spec.position}",
      ]);
      expect(yaml).toMatchObject({ code: 0, stdout: "up" });
      const old = await cluster.kubectl([
        "get",
        `gadgets.v1.${GROUP}`,
        "b",
        "-n",
        ns,
        "-o",
        "jsonpath={.spec.switchPosition}",
      ]);
      expect(old).toMatchObject({ code: 0, stdout: "up" });

      // A watch in v2 sees each change converted, in order.
      const seen: string[] = [];
      const abort = new AbortController();
      const events = await cluster.client.resource(Gadget, ns).watch({ signal: abort.signal, resourceVersion: "0" });
      const watching = (async () => {
        for await (const event of events) {
          if (event.type !== "ADDED" && event.type !== "MODIFIED") continue;
          const obj = event.object;
          seen.push(`${event.type} ${obj.apiVersion} ${obj.metadata.name} ${obj.spec.position}`);
          if (seen.length === 4) abort.abort();
        }
      })().catch((err: unknown) => {
        if (!abort.signal.aborted) throw err;
      });
      const writer = cluster.client.resource(v1, ns);
      await writer.patch("a", { spec: { switchPosition: "down" } }, { type: "merge" });
      await writer.patch("a", { spec: { colour: "blue" } }, { type: "merge" });
      await watching;
      expect(seen).toEqual([
        `ADDED ${GROUP}/v2 a up`,
        `ADDED ${GROUP}/v2 b up`,
        `MODIFIED ${GROUP}/v2 a down`,
        `MODIFIED ${GROUP}/v2 a down`,
      ]);
    } finally {
      await running.stop();
    }
  });

  it("fails a request with the webhook's message, and with a clear error when the operator is stopped", async () => {
    const ns = await namespace(cluster, "convert-fail");
    const running = await cluster.run(gadgetOperator());
    const gadgets = cluster.client.resource(Gadget, ns);
    await cluster.client.resource(v1, ns).create({
      apiVersion: `${GROUP}/v1`,
      kind: "Gadget",
      metadata: { name: "x", namespace: ns },
      spec: { switchPosition: "explode" },
    });
    const refused = await cluster.kubectl(["get", `gadgets.v2.${GROUP}`, "x", "-n", ns]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `Error from server: conversion webhook for ${GROUP}/v1, Kind=Gadget failed: converting Gadget ${ns}/x from v1 to v2: cannot convert an exploding switch`,
    );
    // A watch of v2 open while the operator stops ends at the first event it cannot convert, with no
    // ERROR event (kube-apiserver's watch server logs the encoding failure and ends the stream).
    // (From the storage version's resourceVersion: a v2 list would need the exploding conversion.)
    const from = (await cluster.client.resource(v1, ns).list()).metadata.resourceVersion;
    const events = await gadgets.watch({ resourceVersion: from });
    const types: string[] = [];
    const ended = (async () => {
      for await (const event of events) types.push(event.type);
    })();
    await running.stop();
    await cluster.client.resource(v1, ns).patch("x", { metadata: { labels: { touched: "yes" } } }, { type: "merge" });
    await ended;
    expect(types).toEqual([]);
    // The CRD still calls the stopped operator: v2 is unreadable, v1 (stored) is not.
    await expect(gadgets.get("x")).rejects.toThrow(
      /conversion webhook for conversion\.capstan\.test\/v1, Kind=Gadget failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert-conversion-capstan-test-gadget\?timeout=30s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused/,
    );
    const stored = await cluster.client.resource(v1, ns).get("x");
    expect((stored as GadgetV1).spec.switchPosition).toBe("explode");
  });
});
