import { startTestCluster, waitUntil } from "capstan-dev/testing";
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import type { Event as CoreEvent } from "kubernetes-types/core/v1.d.ts";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { isAlreadyExists } from "../../packages/capstan/src/client/errors.ts";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import type { ReconcileContext } from "../../packages/capstan/src/runtime/controller.ts";
import { CRD_KIND, ensureCrds } from "../../packages/capstan/src/runtime/crd-registration.ts";
import { EVENT_KIND } from "../../packages/capstan/src/runtime/event-recorder.ts";
import { Manager } from "../../packages/capstan/src/runtime/manager.ts";
import { isDeleted, type ReconcileTarget } from "../../packages/capstan/src/runtime/reconcile.ts";
import { createServingCertificates } from "../../packages/capstan-dev/src/devcluster/tls.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { ConfigMap, type ConfigMapObject, Widget, widgetCrd } from "./support/widget.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [widgetCrd()] }));

/**
 * The reconcile under test: one owned ConfigMap per Widget holding its size (created, or
 * merge-patched when it drifted: the devcluster has no server-side apply yet), then
 * status.observedSize, then a Normal event.
 */
async function reconcileWidget(target: ReconcileTarget<Widget>, ctx: ReconcileContext<Widget>): Promise<undefined> {
  if (isDeleted(target)) return; // the ConfigMap goes with its owner (garbage collection)
  const { namespace, name } = ctx.key;
  const desired = ctx.adopt<ConfigMapObject>({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `${name}-config`, namespace },
    data: { size: String(target.spec.size) },
  });
  const cached = ctx.cache(ConfigMap).get(`${namespace}/${name}-config`);
  const configMaps = ctx.client.resource(ConfigMap, namespace);
  let created = false;
  if (cached === undefined) {
    try {
      await configMaps.create(desired, { signal: ctx.signal });
      created = true;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err; // the cache was behind: fall through to the patch
    }
  }
  if (!created && cached?.data?.size !== desired.data?.size) {
    await configMaps.patch(
      `${name}-config`,
      { metadata: { ownerReferences: desired.metadata?.ownerReferences }, data: desired.data },
      { type: "merge", signal: ctx.signal },
    );
  }
  if (target.status?.observedSize !== target.spec.size) {
    await ctx.patchStatus({ observedSize: target.spec.size });
    ctx.event("Normal", "Synced", `ConfigMap ${name}-config holds size ${target.spec.size}`);
  }
  return undefined;
}

function newManager(extra: Partial<ConstructorParameters<typeof Manager>[0]> = {}): Manager {
  return new Manager({
    config: loadClientConfig({ kubeconfig: cluster.kubeconfigPath }),
    name: "widgets",
    logger: pino({ level: "silent" }),
    informerDefaults: { backoff: { initial: 20, max: 200 } },
    ...extra,
  });
}

describe("a Widget controller against the embedded API server", () => {
  it("applies an owned ConfigMap and patches status for every Widget, follows spec changes, and recreates deleted children", async () => {
    const mgr = newManager({ metricsPort: 0, bindHost: "127.0.0.1", namespace: "default" });
    const active = new Set<string>();
    let overlaps = 0;
    mgr
      .controller(Widget)
      .owns(ConfigMap)
      .withOptions({ maxConcurrentReconciles: 4 })
      .reconcile(async (target, ctx) => {
        const key = `${ctx.key.namespace}/${ctx.key.name}`;
        if (active.has(key)) overlaps++;
        active.add(key);
        try {
          return await reconcileWidget(target, ctx);
        } finally {
          active.delete(key);
        }
      });
    const run = mgr.start();
    try {
      const widgets = cluster.client.resource(Widget, "default");
      const configMaps = cluster.client.resource(ConfigMap, "default");
      const names = Array.from({ length: 12 }, (_, i) => `w${i}`);
      await Promise.all(names.map((name, i) => widgets.create({ metadata: { name }, spec: { size: i } } as Widget)));

      await waitUntil(() => mgr.isLeader, { what: "manager running", timeout: 5000 });
      for (const [i, name] of names.entries()) {
        await waitUntil(async () => (await widgets.get(name)).status?.observedSize === i, {
          what: `status of ${name}`,
        });
        const cm = await configMaps.get(`${name}-config`);
        expect(cm.data).toEqual({ size: String(i) });
        const owner = cm.metadata?.ownerReferences?.[0];
        expect(owner).toMatchObject({ apiVersion: "example.com/v1", kind: "Widget", name, controller: true });
        expect(owner?.uid).toBe((await widgets.get(name)).metadata?.uid);
      }

      // A spec change reaches the child and the status.
      await widgets.patch("w3", { spec: { size: 33 } }, { type: "merge" });
      await waitUntil(async () => (await configMaps.get("w3-config")).data?.size === "33", {
        what: "child follows spec",
      });
      await waitUntil(async () => (await widgets.get("w3")).status?.observedSize === 33, {
        what: "status follows spec",
      });

      // A deleted child is recreated (owns() maps its deletion to the owner).
      const before = (await configMaps.get("w5-config")).metadata?.uid;
      await configMaps.delete("w5-config");
      await waitUntil(
        async () => {
          try {
            const cm = await configMaps.get("w5-config");
            return cm.metadata?.uid !== before && cm.data?.size === "5";
          } catch {
            return false;
          }
        },
        { what: "child recreated" },
      );

      // Events were posted for the objects.
      const events = await cluster.client.resource(EVENT_KIND, "default").list();
      const synced = events.items.filter((e: CoreEvent) => e.reason === "Synced" && e.involvedObject.name === "w3");
      expect(synced.length).toBeGreaterThanOrEqual(1);
      expect(synced[0]?.source?.component).toBe("widget");

      // The REST client metrics were fed by the manager's own client.
      const scrape = await (await fetch(`http://127.0.0.1:${mgr.endpoints.metrics}/metrics`)).text();
      expect(scrape).toMatch(/rest_client_requests_total\{code="201",method="POST",host="127\.0\.0\.1:\d+"\} \d+/);
      expect(scrape).toMatch(/controller_runtime_reconcile_total\{controller="widget",result="success"\} \d+/);
      expect(overlaps).toBe(0);
    } finally {
      await mgr.stop();
      await run;
    }
  });
});

/** The Widget CRD under another kind (`<kind>s.example.com`), so each test registers a CRD of its own. */
function widgetCrdAs(kind: string): CustomResourceDefinition {
  const plural = `${kind.toLowerCase()}s`;
  const crd = { ...widgetCrd(), metadata: { name: `${plural}.example.com` } };
  crd.spec = { ...crd.spec, names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` } };
  return crd;
}

describe("ensureCrds", () => {
  it("converges when several operators register the same CRD at once, and updates only on a real spec change", async () => {
    const crd = widgetCrdAs("Gadget");
    const results = await Promise.all([1, 2, 3].map(() => ensureCrds(cluster.client, [crd], { timeout: "10s" })));
    const actions = results.map((r) => r["gadgets.example.com"]).sort();
    expect(actions.filter((a) => a === "created")).toHaveLength(1);
    expect(actions.filter((a) => a === "updated")).toHaveLength(0);

    // Same spec again: nothing to write, although the server defaulted fields we never sent.
    expect(await ensureCrds(cluster.client, [crd], { timeout: "10s" })).toEqual({ "gadgets.example.com": "unchanged" });

    const withColumn = structuredClone(crd);
    withColumn.spec.versions[0] = {
      ...(withColumn.spec.versions[0] as (typeof crd.spec.versions)[0]),
      additionalPrinterColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }],
    };
    expect(await ensureCrds(cluster.client, [withColumn], { timeout: "10s" })).toEqual({
      "gadgets.example.com": "updated",
    });
    const stored = await cluster.client.resource(CRD_KIND).get("gadgets.example.com");
    expect(JSON.stringify(stored)).toContain('"jsonPath":".spec.size"');
  });

  it("keeps the stored CRD's Webhook conversion when the desired CRD sets none, and still applies its other changes", async () => {
    const crds = cluster.client.resource(CRD_KIND);
    const desired = widgetCrdAs("Sprocket");
    // As `capstan generate crds` applied it: the webhook's client config and CA are the deployment's.
    const { caPem } = await createServingCertificates();
    const conversion = {
      strategy: "Webhook",
      webhook: {
        clientConfig: {
          url: "https://127.0.0.1:9443/convert-example-com-sprocket",
          caBundle: Buffer.from(caPem).toString("base64"),
        },
        conversionReviewVersions: ["v1"],
      },
    };
    const applied: CustomResourceDefinition = { ...desired, spec: { ...desired.spec, conversion } };
    await crds.create(applied);
    const storedConversion = async () =>
      ((await crds.get("sprockets.example.com")) as unknown as CustomResourceDefinition).spec.conversion;

    expect(await ensureCrds(cluster.client, [desired], { timeout: "10s" })).toEqual({
      "sprockets.example.com": "unchanged",
    });
    expect(await storedConversion()).toEqual(conversion);

    const withColumn = widgetCrd([{ name: "Size", type: "integer", jsonPath: ".spec.size" }]);
    const changed = { ...desired, spec: { ...desired.spec, versions: withColumn.spec.versions } };
    expect(await ensureCrds(cluster.client, [changed], { timeout: "10s" })).toEqual({
      "sprockets.example.com": "updated",
    });
    const stored = (await crds.get("sprockets.example.com")) as unknown as CustomResourceDefinition;
    expect(stored.spec.conversion).toEqual(conversion);
    expect(stored.spec.versions[0]?.additionalPrinterColumns).toEqual([
      { name: "Size", type: "integer", jsonPath: ".spec.size" },
    ]);

    // A desired Webhook conversion is the operator's to set: it replaces the stored one.
    const moved = {
      ...conversion,
      webhook: {
        ...conversion.webhook,
        clientConfig: { ...conversion.webhook.clientConfig, url: "https://127.0.0.1:9444/c" },
      },
    };
    expect(
      await ensureCrds(cluster.client, [{ ...changed, spec: { ...changed.spec, conversion: moved } }], {
        timeout: "10s",
      }),
    ).toEqual({ "sprockets.example.com": "updated" });
    expect(await storedConversion()).toEqual(moved);
  });

  it("keeps the descriptions of the stored CRD where the operator's has none, and writes the ones it has", async () => {
    const crds = cluster.client.resource(CRD_KIND);
    // A compiled operator's CRD: no descriptions (it cannot read its source's comments).
    const desired = widgetCrdAs("Gear");
    const schema = (description: string) => ({
      type: "object",
      description: "A gear.",
      properties: {
        spec: { type: "object", properties: { size: { type: "integer", description } } },
        status: { type: "object", properties: { observedSize: { type: "integer" } } },
      },
    });
    const described = (description: string): CustomResourceDefinition => {
      const crd = structuredClone(desired);
      const version = crd.spec.versions[0] as (typeof crd.spec.versions)[0];
      crd.spec.versions[0] = { ...version, schema: { openAPIV3Schema: schema(description) } };
      return crd;
    };
    // As `capstan generate crds` applied it, with the comments' descriptions.
    await crds.create(described("Teeth on the rim."));
    const storedSchema = async () =>
      ((await crds.get("gears.example.com")) as unknown as CustomResourceDefinition).spec.versions[0]?.schema
        ?.openAPIV3Schema;

    expect(await ensureCrds(cluster.client, [desired], { timeout: "10s" })).toEqual({
      "gears.example.com": "unchanged",
    });
    expect(await storedSchema()).toEqual(schema("Teeth on the rim."));

    // An operator run from its TypeScript source has them, and a changed one is written.
    expect(await ensureCrds(cluster.client, [described("Teeth, counted.")], { timeout: "10s" })).toEqual({
      "gears.example.com": "updated",
    });
    expect(await storedSchema()).toEqual(schema("Teeth, counted."));
  });

  it("waits for a CRD being deleted to be gone and creates it again, and names it when the timeout comes first", async () => {
    const crds = cluster.client.resource(CRD_KIND);
    const crd = widgetCrdAs("Holder");
    expect(await ensureCrds(cluster.client, [crd], { timeout: "10s" })).toEqual({ "holders.example.com": "created" });
    const first = await crds.get("holders.example.com");
    // An object whose finalizer holds the CRD's deletion: the server deletes a CRD's objects first.
    const Holder: ResourceKind<Widget> = {
      group: "example.com",
      version: "v1",
      kind: "Holder",
      plural: "holders",
      namespaced: true,
    };
    const holders = cluster.client.resource(Holder, "default");
    await holders.create({
      apiVersion: "example.com/v1",
      kind: "Holder",
      metadata: { name: "held", finalizers: ["example.com/hold"] },
      spec: { size: 1 },
    });
    await crds.delete("holders.example.com");
    await waitUntil(async () => (await crds.get("holders.example.com")).metadata?.deletionTimestamp !== undefined, {
      what: "the CRD being deleted",
    });

    await expect(ensureCrds(cluster.client, [crd], { timeout: "1s" })).rejects.toThrow(
      /CRDs not Established within 1s: CRD holders\.example\.com was still being deleted \(deletionTimestamp /,
    );

    const registering = ensureCrds(cluster.client, [crd], { timeout: "60s" });
    await waitUntil(async () => (await holders.get("held")).metadata?.deletionTimestamp !== undefined, {
      what: "the held object being deleted with its CRD",
    });
    await holders.patch("held", { metadata: { finalizers: null } }, { type: "merge" });
    // Not the old CRD kept ("unchanged"), nor a failure when it vanished: a new one, served.
    expect(await registering).toEqual({ "holders.example.com": "created" });
    const second = await crds.get("holders.example.com");
    expect(second.metadata?.uid).not.toBe(first.metadata?.uid);
    expect(second.metadata?.deletionTimestamp).toBeUndefined();
    expect((await holders.list()).items).toEqual([]);
    await crds.delete("holders.example.com");
  });

  it("fails with the server's reason when a CRD's names are refused", async () => {
    const clash = { ...widgetCrd(), metadata: { name: "doohickeys.example.com" } };
    // Kind Widget is already served in group example.com by widgets.example.com.
    clash.spec = {
      ...clash.spec,
      names: { kind: "Widget", plural: "doohickeys", singular: "doohickey", listKind: "DoohickeyList" },
    };
    await expect(ensureCrds(cluster.client, [clash], { timeout: "10s" })).rejects.toThrow(
      /names not accepted \(KindConflict\)/,
    );
  });
});

describe("metadata-only watches", () => {
  it("caches owned children as PartialObjectMetadata and still maps their deletion to the owner", async () => {
    const mgr = newManager({ namespace: "default" });
    const seenChildren: unknown[] = [];
    mgr
      .controller(Widget)
      .owns(ConfigMap, { metadataOnly: true })
      .reconcile(async (target, ctx) => {
        if (isDeleted(target)) return undefined;
        const name = `${ctx.key.name}-meta`;
        const cached = ctx.cache(ConfigMap).get(`${ctx.key.namespace}/${name}`);
        if (cached) seenChildren.push(cached);
        else {
          const child = ctx.adopt<ConfigMapObject>({
            metadata: { name, namespace: ctx.key.namespace },
            data: { big: "x" },
          });
          await ctx.client
            .resource(ConfigMap, ctx.key.namespace)
            .create(child)
            .catch((err) => {
              if (!isAlreadyExists(err)) throw err;
            });
        }
        return undefined;
      });
    const run = mgr.start();
    try {
      const widgets = cluster.client.resource(Widget, "default");
      const configMaps = cluster.client.resource(ConfigMap, "default");
      await widgets.create({ metadata: { name: "meta" }, spec: { size: 1 } } as Widget);
      await waitUntil(async () => (await configMaps.get("meta-meta")).data?.big === "x", { what: "child created" });
      // The child's creation reconciles the owner, which now finds it in the metadata-only cache.
      await waitUntil(async () => seenChildren.length > 0, { what: "child seen in the cache" });
      expect(seenChildren[0]).toMatchObject({ kind: "PartialObjectMetadata", metadata: { name: "meta-meta" } });
      expect((seenChildren[0] as ConfigMapObject).data).toBeUndefined();
      // A deleted child is recreated: the metadata-only watch still maps it to its owner.
      const before = (await configMaps.get("meta-meta")).metadata?.uid;
      await configMaps.delete("meta-meta");
      await waitUntil(async () => (await configMaps.get("meta-meta")).metadata?.uid !== before, {
        what: "child recreated",
      });
    } finally {
      await mgr.stop();
      await run;
    }
  });
});
