import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { exchangeRateCrd, http } from "../kubectl/support/cluster.ts";

const cluster = fileFixture(() => startTestCluster());

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
type Crd = {
  metadata: { name: string; finalizers?: string[]; deletionTimestamp?: string };
  spec: Record<string, unknown>;
  status?: { conditions?: Condition[]; acceptedNames?: Record<string, unknown>; storedVersions?: string[] };
};

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const condition = (crd: Crd, type: string) => crd.status?.conditions?.find((c) => c.type === type);

async function establishedCrd(name: string): Promise<Crd> {
  return waitUntil(async () => {
    const crd = (await http(cluster, "GET", `${CRDS}/${name}`)).body as Crd;
    return condition(crd, "Established")?.status === "True" ? crd : undefined;
  });
}

describe("CRD lifecycle", () => {
  it("accepts names, serves every served version, and reports Established with acceptedNames and storedVersions", async () => {
    const crd = exchangeRateCrd({ group: "a.example.com" }) as { spec: { versions: Record<string, unknown>[] } };
    crd.spec.versions.push({
      ...crd.spec.versions[0],
      name: "v1beta1",
      storage: false,
      subresources: {
        status: {},
        scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
      },
    });
    crd.spec.versions.push({ ...crd.spec.versions[0], name: "v1alpha1", storage: false, served: false });
    const created = await http(cluster, "POST", CRDS, crd);
    expect(created.status, created.text).toBe(201);

    const established = await establishedCrd("exchangerates.a.example.com");
    expect(condition(established, "NamesAccepted")).toMatchObject({
      status: "True",
      reason: "NoConflicts",
      message: "no conflicts found",
    });
    expect(condition(established, "Established")).toMatchObject({
      reason: "InitialNamesAccepted",
      message: "the initial names have been accepted",
    });
    expect(established.status?.acceptedNames).toEqual({
      plural: "exchangerates",
      singular: "exchangerate",
      shortNames: ["er"],
      kind: "ExchangeRate",
      listKind: "ExchangeRateList",
      categories: ["all"],
    });
    expect(established.status?.storedVersions).toEqual(["v1"]);

    const v1 = (await http(cluster, "GET", "/apis/a.example.com/v1")).body as {
      resources: { name: string; shortNames?: string[]; categories?: string[]; namespaced: boolean }[];
    };
    expect(v1.resources.map((r) => r.name).sort()).toEqual(["exchangerates", "exchangerates/status"]);
    const main = v1.resources.find((r) => r.name === "exchangerates");
    expect(main).toMatchObject({ namespaced: true, shortNames: ["er"], categories: ["all"] });
    const beta = (await http(cluster, "GET", "/apis/a.example.com/v1beta1")).body as { resources: { name: string }[] };
    expect(beta.resources.map((r) => r.name).sort()).toEqual([
      "exchangerates",
      "exchangerates/scale",
      "exchangerates/status",
    ]);
    expect((await http(cluster, "GET", "/apis/a.example.com/v1alpha1")).status).toBe(404);

    const obj = await http(cluster, "POST", "/apis/a.example.com/v1beta1/namespaces/default/exchangerates", {
      apiVersion: "a.example.com/v1beta1",
      kind: "ExchangeRate",
      metadata: { name: "usd" },
      spec: { currency: "USD" },
    });
    expect(obj.status, obj.text).toBe(201);
    // Versions share storage: the object is readable through the other served version.
    const viaV1 = await http(cluster, "GET", "/apis/a.example.com/v1/namespaces/default/exchangerates/usd");
    expect((viaV1.body as { apiVersion: string }).apiVersion).toBe("a.example.com/v1");
  });

  it("publishes NamesAccepted with Established False/Installing before Established True, as watchers of a real server see", async () => {
    const seen: (string | undefined)[] = [];
    const stop = cluster.server.internals.api.watch(
      { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" },
      "",
      { fieldSelector: "metadata.name=exchangerates.e.example.com" },
      (type, obj) => {
        const established = condition(obj as unknown as Crd, "Established");
        seen.push(`${type} ${established ? `${established.status}/${established.reason}` : "-"}`);
      },
    );
    try {
      expect((await http(cluster, "POST", CRDS, exchangeRateCrd({ group: "e.example.com" }))).status).toBe(201);
      await establishedCrd("exchangerates.e.example.com");
      await waitUntil(() => seen.length >= 3);
      expect(seen).toEqual(["ADDED -", "MODIFIED False/Installing", "MODIFIED True/InitialNamesAccepted"]);
    } finally {
      stop();
    }
  });

  it("rejects invalid CRDs with the apiserver's 422 (name, structural schema, immutable scope)", async () => {
    const thing = (name: string, schema: unknown) => ({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name },
      spec: {
        group: "d.example.com",
        scope: "Namespaced",
        names: { plural: "things", kind: "Thing" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      },
    });
    const misnamed = await http(cluster, "POST", CRDS, thing("wrong.d.example.com", { type: "object" }));
    expect(misnamed.status).toBe(422);
    expect((misnamed.body as { message: string }).message).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "wrong.d.example.com" is invalid: metadata.name: Invalid value: "wrong.d.example.com": must be spec.names.plural+"."+spec.group',
    );
    const nonStructural = await http(
      cluster,
      "POST",
      CRDS,
      thing("things.d.example.com", {
        type: "object",
        properties: { spec: { properties: { x: { type: "string" } } } },
      }),
    );
    expect(nonStructural.status).toBe(422);
    expect(nonStructural.body).toMatchObject({
      reason: "Invalid",
      details: {
        causes: [
          {
            reason: "FieldValueRequired",
            field: "spec.validation.openAPIV3Schema.properties[spec].type",
            message: "Required value: must not be empty for specified object fields",
          },
        ],
      },
    });

    expect((await http(cluster, "POST", CRDS, thing("things.d.example.com", { type: "object" }))).status).toBe(201);
    const defaulted = (await establishedCrd("things.d.example.com")) as unknown as {
      spec: { names: Record<string, string> };
    };
    expect(defaulted.spec.names).toMatchObject({ singular: "thing", listKind: "ThingList" });
    const rescoped = await http(
      cluster,
      "PATCH",
      `${CRDS}/things.d.example.com`,
      { spec: { scope: "Cluster" } },
      "application/merge-patch+json",
    );
    expect(rescoped.status).toBe(422);
    expect((rescoped.body as { message: string }).message).toContain(
      'spec.scope: Invalid value: "Cluster": field is immutable',
    );
  });

  it("refuses names another CRD of the group already uses (NamesAccepted False) and does not serve them", async () => {
    expect((await http(cluster, "POST", CRDS, exchangeRateCrd({ group: "b.example.com" }))).status).toBe(201);
    await establishedCrd("exchangerates.b.example.com");
    const rival = exchangeRateCrd({ group: "b.example.com" }) as {
      metadata: { name: string };
      spec: { names: Record<string, unknown> };
    };
    rival.metadata.name = "rates.b.example.com";
    rival.spec.names = { plural: "rates", singular: "rate", kind: "Rate", shortNames: ["er"] };
    expect((await http(cluster, "POST", CRDS, rival)).status).toBe(201);
    const refused = await waitUntil(async () => {
      const crd = (await http(cluster, "GET", `${CRDS}/rates.b.example.com`)).body as Crd;
      return condition(crd, "NamesAccepted") ? crd : undefined;
    });
    expect(condition(refused, "NamesAccepted")).toMatchObject({
      status: "False",
      reason: "ShortNamesConflict",
      message: '"er" is already in use',
    });
    expect(condition(refused, "Established")).toMatchObject({
      status: "False",
      reason: "NotAccepted",
      message: "not all names are accepted",
    });
    expect((await http(cluster, "GET", "/apis/b.example.com/v1/namespaces/default/rates")).status).toBe(404);
  });

  it("on deletion marks the CRD Terminating, deletes its instances (waiting for their finalizers), then stops serving", async () => {
    expect((await http(cluster, "POST", CRDS, exchangeRateCrd({ group: "c.example.com" }))).status).toBe(201);
    await establishedCrd("exchangerates.c.example.com");
    const base = "/apis/c.example.com/v1/namespaces/default/exchangerates";
    for (const [name, finalizers] of [
      ["free", undefined],
      ["held", ["example.com/hold"]],
    ] as const) {
      const res = await http(cluster, "POST", base, {
        apiVersion: "c.example.com/v1",
        kind: "ExchangeRate",
        metadata: { name, finalizers },
        spec: { currency: "CAD" },
      });
      expect(res.status, res.text).toBe(201);
    }

    const del = await http(cluster, "DELETE", `${CRDS}/exchangerates.c.example.com`);
    expect(del.status, del.text).toBe(200);
    const marked = del.body as Crd;
    expect(marked.metadata.deletionTimestamp).toBeDefined();
    expect(marked.metadata.finalizers).toContain("customresourcecleanup.apiextensions.k8s.io");

    const inProgress = await waitUntil(async () => {
      const crd = (await http(cluster, "GET", `${CRDS}/exchangerates.c.example.com`)).body as Crd;
      return condition(crd, "Terminating")?.reason === "InstanceDeletionInProgress" &&
        (await http(cluster, "GET", `${base}/free`)).status === 404
        ? crd
        : undefined;
    });
    expect(condition(inProgress, "Terminating")).toMatchObject({
      status: "True",
      message: "CustomResource deletion is in progress",
    });
    // The held instance keeps the CRD (and its serving) alive, but no new instance may be created.
    const held = (await http(cluster, "GET", `${base}/held`)).body as Crd;
    expect(held.metadata.deletionTimestamp).toBeDefined();
    const late = await http(cluster, "POST", base, {
      apiVersion: "c.example.com/v1",
      kind: "ExchangeRate",
      metadata: { name: "late" },
      spec: { currency: "CAD" },
    });
    expect(late.status).toBe(405);
    expect(late.body).toMatchObject({
      reason: "MethodNotAllowed",
      message: "create not allowed while custom resource definition is terminating",
      details: { group: "c.example.com", kind: "exchangerates" },
    });

    const release = await http(
      cluster,
      "PATCH",
      `${base}/held`,
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    expect(release.status, release.text).toBe(200);
    await waitUntil(async () => (await http(cluster, "GET", `${CRDS}/exchangerates.c.example.com`)).status === 404);
    await waitUntil(async () => (await http(cluster, "GET", "/apis/c.example.com/v1")).status === 404);
    expect((await http(cluster, "GET", base)).status).toBe(404);

    // A CRD of the same name starts empty.
    expect((await http(cluster, "POST", CRDS, exchangeRateCrd({ group: "c.example.com" }))).status).toBe(201);
    await establishedCrd("exchangerates.c.example.com");
    const list = (await http(cluster, "GET", base)).body as { items: unknown[] };
    expect(list.items).toEqual([]);
  });
});
