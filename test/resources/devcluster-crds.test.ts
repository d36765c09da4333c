/**
 * The generated CRDs of the seed operators, applied to the embedded API server over HTTPS (and with
 * the real kubectl): accepted, Established, and validating objects as intended — valid ones stored
 * (with schema defaults applied), invalid ones refused with a 422 naming the field.
 */

import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import type { CustomResource } from "../../packages/capstan/src/resources/resource-types.ts";
import { http } from "../devcluster/kubectl/support/cluster.ts";
import { ExchangeRate, Guitar, ImmortalContainer, Machine, SEED_KINDS, Switch } from "./seed-kinds.ts";

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster();
  for (const kind of SEED_KINDS) {
    const created = await http(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", toCrd(kind));
    expect(created.status, created.text).toBe(201);
  }
  for (const kind of SEED_KINDS) {
    await waitUntil(async () => {
      const crd = (
        await http(cluster, "GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${kind.crdName}`)
      ).body as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
  }
});

afterAll(async () => {
  await cluster?.stop();
});

function collection(kind: CustomResource): string {
  return `/apis/${kind.group}/${kind.version}/namespaces/default/${kind.plural}`;
}

interface StatusBody {
  kind: string;
  code: number;
  reason: string;
  message: string;
  details?: { causes?: { field?: string; message?: string; reason?: string }[] };
}

async function create(kind: CustomResource, obj: unknown) {
  return http(cluster, "POST", collection(kind), obj);
}

describe("seed CRDs on the embedded API server", () => {
  it("serves every seed kind with its status subresource where it has a status", async () => {
    const discovery = (await http(cluster, "GET", `/apis/${ImmortalContainer.group}/${ImmortalContainer.version}`))
      .body as {
      resources: { name: string; namespaced: boolean }[];
    };
    expect(discovery.resources.map((r) => r.name).sort()).toEqual(["immortalcontainers", "immortalcontainers/status"]);
    const guitars = (await http(cluster, "GET", `/apis/${Guitar.group}/${Guitar.version}`)).body as {
      resources: { name: string; shortNames?: string[] }[];
    };
    expect(guitars.resources).toEqual([expect.objectContaining({ name: "guitars", shortNames: ["guit"] })]);
    const useless = (await http(cluster, "GET", `/apis/${Machine.group}/${Machine.version}`)).body as {
      resources: { name: string }[];
    };
    expect(useless.resources.map((r) => r.name).sort()).toEqual([
      "machines",
      "machines/status",
      "switches",
      "switches/status",
    ]);
  });

  it("accepts a valid ExchangeRate and refuses an unknown currency, naming spec.currency", async () => {
    const ok = await create(ExchangeRate, ExchangeRate.make({ metadata: { name: "usd" }, spec: { currency: "USD" } }));
    expect(ok.status, ok.text).toBe(201);

    const bad = await create(ExchangeRate, {
      ...ExchangeRate.make({ metadata: { name: "eur" }, spec: { currency: "USD" } }),
      spec: { currency: "EUR" },
    });
    expect(bad.status, bad.text).toBe(422);
    const status = bad.body as StatusBody;
    expect(status.reason).toBe("Invalid");
    expect(status.details?.causes).toContainEqual(expect.objectContaining({ field: "spec.currency" }));
    expect(status.message).toContain('spec.currency: Unsupported value: "EUR"');
  });

  it("requires spec when the spec schema has required fields", async () => {
    const bad = await create(ImmortalContainer, {
      apiVersion: ImmortalContainer.apiVersion,
      kind: "ImmortalContainer",
      metadata: { name: "nospec" },
    });
    expect(bad.status, bad.text).toBe(422);
    expect((bad.body as StatusBody).details?.causes).toContainEqual(expect.objectContaining({ field: "spec" }));
  });

  it("refuses an empty image, and takes status writes through the status subresource", async () => {
    const empty = await create(
      ImmortalContainer,
      ImmortalContainer.make({ metadata: { name: "empty" }, spec: { image: "" } }),
    );
    expect(empty.status, empty.text).toBe(422);
    expect((empty.body as StatusBody).details?.causes).toContainEqual(expect.objectContaining({ field: "spec.image" }));

    const created = await create(
      ImmortalContainer,
      ImmortalContainer.make({ metadata: { name: "web" }, spec: { image: "nginx:latest" } }),
    );
    expect(created.status, created.text).toBe(201);
    const stored = created.body as Record<string, unknown>;
    const path = `${collection(ImmortalContainer)}/web/status`;
    const good = await http(cluster, "PUT", path, {
      ...stored,
      status: { currentPod: "web-immortalpod", startTimes: 2 },
    });
    expect(good.status, good.text).toBe(200);
    expect((good.body as { status: unknown }).status).toEqual({ currentPod: "web-immortalpod", startTimes: 2 });
    // A main-resource write ignores status when the subresource is on.
    const main = await http(cluster, "PUT", `${collection(ImmortalContainer)}/web`, {
      ...(good.body as object),
      status: { startTimes: 9 },
    });
    expect(main.status, main.text).toBe(200);
    expect((main.body as { status: unknown }).status).toEqual({ currentPod: "web-immortalpod", startTimes: 2 });
  });

  it("applies schema defaults: spec defaults to {} and then to its fields' defaults", async () => {
    const created = await create(Machine, {
      apiVersion: Machine.apiVersion,
      kind: "Machine",
      metadata: { name: "m1" },
    });
    expect(created.status, created.text).toBe(201);
    expect((created.body as { spec: unknown }).spec).toEqual({ switchPosition: "down", switches: 1 });

    const guitar = await create(Guitar, Guitar.make({ metadata: { name: "strat" }, spec: { brand: "fender" } }));
    expect(guitar.status, guitar.text).toBe(201);
    expect((guitar.body as { spec: unknown }).spec).toEqual({ brand: "fender", review: false });
  });

  it("refuses values outside bounds and enums for Machine and Switch", async () => {
    const bad = await create(Machine, Machine.make({ metadata: { name: "m2" }, spec: { switches: 21 } }));
    expect(bad.status, bad.text).toBe(422);
    expect((bad.body as StatusBody).details?.causes).toContainEqual(
      expect.objectContaining({ field: "spec.switches" }),
    );
    const sw = await create(Switch, {
      ...Switch.make({ metadata: { name: "s1" }, spec: { position: "up" } }),
      spec: { position: "middle" },
    });
    expect(sw.status, sw.text).toBe(422);
    expect((sw.body as StatusBody).details?.causes).toContainEqual(expect.objectContaining({ field: "spec.position" }));
  });
});

describe("seed CRDs with the real kubectl", () => {
  it("applies a generated CRD as YAML, then accepts a good object and refuses a bad one with the field named", async () => {
    const crd = toCrd(ExchangeRate);
    crd.metadata = { name: `exchangerates.kubectl.example.com` };
    crd.spec.group = "kubectl.example.com";
    const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: stringify(crd) });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(
      "customresourcedefinition.apiextensions.k8s.io/exchangerates.kubectl.example.com created",
    );
    await waitUntil(async () => (await cluster.kubectl(["get", "er", "-A"])).code === 0);

    const good = await cluster.kubectl(["apply", "-f", "-"], {
      stdin: stringify({
        apiVersion: "kubectl.example.com/v1",
        kind: "ExchangeRate",
        metadata: { name: "cad", namespace: "default" },
        spec: { currency: "CAD" },
      }),
    });
    expect(good.code, good.stderr).toBe(0);
    const bad = await cluster.kubectl(["apply", "-f", "-"], {
      stdin: stringify({
        apiVersion: "kubectl.example.com/v1",
        kind: "ExchangeRate",
        metadata: { name: "eur", namespace: "default" },
        spec: { currency: "EUR" },
      }),
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.currency: Unsupported value: "EUR"');
  });
});
