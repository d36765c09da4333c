/**
 * The real kubectl against the devcluster: the custom-resource workflow of seed 003 (apply a CRD,
 * wait for it, apply good and bad objects, read them back with printer columns, change them every
 * way kubectl can, watch, wait, delete through a finalizer).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { fileFixture } from "../../support/file-fixture.ts";
import { exchangeRateCrd, http, kubectlMinor, spawnKubectl } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster());

async function manifest(name: string, ...docs: unknown[]): Promise<string> {
  const path = join(cluster.dir, name);
  await writeFile(path, docs.map((d) => stringify(d)).join("---\n"));
  return path;
}

/** The ExchangeRate CRD, with conditions in its status schema so `kubectl wait` has something to wait for. */
function crd(): Record<string, unknown> {
  const c = exchangeRateCrd() as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] };
  };
  c.spec.versions[0]!.schema.openAPIV3Schema.properties["status"] = {
    type: "object",
    properties: {
      rate: { type: "number" },
      conditions: {
        type: "array",
        items: {
          type: "object",
          properties: { type: { type: "string" }, status: { type: "string" } },
        },
      },
    },
  };
  return c;
}

const er = (name: string, currency: string) => ({
  apiVersion: "operators.example.com/v1",
  kind: "ExchangeRate",
  metadata: { name },
  spec: { currency },
});

const ER_PATH = "/apis/operators.example.com/v1/namespaces/default/exchangerates";

/** Splits kubectl's table output into rows of cells. */
function table(stdout: string): string[][] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s{2,}/));
}

describe("kubectl with custom resources", () => {
  it("applies a CRD and waits for it to be Established", async () => {
    const applied = await cluster.kubectl(["apply", "-f", await manifest("crd.yaml", crd())]);
    expect(applied.stderr).toBe("");
    expect(applied.stdout).toBe(
      "customresourcedefinition.apiextensions.k8s.io/exchangerates.operators.example.com created\n",
    );
    const waited = await cluster.kubectl([
      "wait",
      "--for=condition=Established",
      "crd/exchangerates.operators.example.com",
      "--timeout=10s",
    ]);
    expect(waited.stdout).toBe(
      "customresourcedefinition.apiextensions.k8s.io/exchangerates.operators.example.com condition met\n",
    );
    expect(waited.code).toBe(0);
  });

  it("lists the CRD's resource in api-resources with its short name", async () => {
    const res = await cluster.kubectl(["api-resources", "--api-group=operators.example.com"]);
    expect(res.code, res.stderr).toBe(0);
    expect(table(res.stdout)).toEqual([
      ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
      ["exchangerates", "er", "operators.example.com/v1", "true", "ExchangeRate"],
    ]);
  });

  it("applies a valid object and rejects an invalid one with the schema error", async () => {
    const ok = await cluster.kubectl(["apply", "-f", await manifest("usd.yaml", er("usd", "USD"))]);
    expect(ok.stdout).toBe("exchangerate.operators.example.com/usd created\n");
    const bad = await cluster.kubectl(["apply", "-f", await manifest("eur.yaml", er("eur", "EUR"))]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      'The ExchangeRate "eur" is invalid: spec.currency: Unsupported value: "EUR": supported values: "CAD", "USD"',
    );
    const again = await cluster.kubectl(["apply", "-f", join(cluster.dir, "usd.yaml")]);
    expect(again.stdout).toBe("exchangerate.operators.example.com/usd unchanged\n");
  });

  it("gets by short name with the CRD's printer columns", async () => {
    await http(cluster, "PATCH", `${ER_PATH}/usd/status`, { status: { rate: 1.37 } }, "application/merge-patch+json");
    const res = await cluster.kubectl(["get", "er"]);
    expect(res.code, res.stderr).toBe(0);
    const rows = table(res.stdout);
    expect(rows[0]).toEqual(["NAME", "CURRENCY", "RATE", "AGE"]);
    expect(rows[1]?.slice(0, 3)).toEqual(["usd", "USD", "1.37"]);
    expect(rows[1]?.[3]).toMatch(/^\d+s$/);
  });

  it("explains the custom resource from its published schema, the currency enum included", async () => {
    const res = await cluster.kubectl(["explain", "er.spec"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/KIND:\s+ExchangeRate\nVERSION:\s+v1\n/);
    expect(res.stdout).toMatch(/FIELDS:\n\s+currency\s+<string>\n/);
    if ((await kubectlMinor(cluster)) >= 30) {
      expect(res.stdout).toMatch(/FIELDS:\n\s+currency\s+<string>\n\s+enum: CAD, USD\n/);
    } else {
      // explain prints enums from kubectl 1.30 on (kubernetes/kubectl 60b309860); an older kubectl reads
      // the same document, so the enum is checked there, fetched by that kubectl.
      const raw = await cluster.kubectl(["get", "--raw", "/openapi/v3/apis/operators.example.com/v1"]);
      expect(raw.code, raw.stderr).toBe(0);
      const doc = JSON.parse(raw.stdout) as {
        components: { schemas: Record<string, { properties: { spec: { properties: Record<string, unknown> } } }> };
      };
      const spec = doc.components.schemas["com.example.operators.v1.ExchangeRate"]?.properties.spec;
      expect(spec?.properties["currency"]).toEqual({ type: "string", enum: ["CAD", "USD"] });
    }
  });

  it("includes custom objects of the `all` category in get all", async () => {
    const res = await cluster.kubectl(["get", "all", "-o", "name"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.split("\n")).toContain("exchangerate.operators.example.com/usd");
  });

  it("prints the stored object with get -o yaml", async () => {
    const res = await cluster.kubectl(["get", "exchangerate", "usd", "-o", "yaml"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^apiVersion: operators\.example\.com\/v1\nkind: ExchangeRate\nmetadata:\n/);
    expect(res.stdout).toContain("  name: usd\n  namespace: default\n");
    expect(res.stdout).toMatch(/ {2}uid: [0-9a-f-]{36}\n/);
    expect(res.stdout).toContain("spec:\n  currency: USD\nstatus:\n  rate: 1.37\n");
  });

  it("labels, and patches with --type=merge and --type=json", async () => {
    expect((await cluster.kubectl(["label", "er", "usd", "tier=gold"])).stdout).toBe(
      "exchangerate.operators.example.com/usd labeled\n",
    );
    const merge = await cluster.kubectl(["patch", "er", "usd", "--type=merge", "-p", '{"spec":{"currency":"CAD"}}']);
    expect(merge.stdout).toBe("exchangerate.operators.example.com/usd patched\n");
    const json = await cluster.kubectl([
      "patch",
      "er",
      "usd",
      "--type=json",
      "-p",
      '[{"op":"add","path":"/metadata/annotations/note","value":"json"}]',
    ]);
    expect(json.stdout).toBe("exchangerate.operators.example.com/usd patched\n");
    const obj = (await http(cluster, "GET", `${ER_PATH}/usd`)).body as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string>; generation: number };
      spec: { currency: string };
    };
    expect(obj.metadata.labels).toEqual({ tier: "gold" });
    expect(obj.metadata.annotations["note"]).toBe("json");
    expect(obj.spec.currency).toBe("CAD");
    expect(obj.metadata.generation).toBe(2);
    const selected = await cluster.kubectl(["get", "er", "-l", "tier=gold", "-o", "name"]);
    expect(selected.stdout).toBe("exchangerate.operators.example.com/usd\n");
  });

  it("edits through a KUBE_EDITOR script", async () => {
    const editor = join(cluster.dir, "editor.sh");
    await writeFile(editor, "#!/bin/sh\nsed -i 's/currency: CAD/currency: USD/' \"$1\"\n", { mode: 0o755 });
    const res = await cluster.kubectl(["edit", "er", "usd"], { env: { KUBE_EDITOR: editor } });
    expect(res.stderr).toBe("");
    expect(res.stdout).toBe("exchangerate.operators.example.com/usd edited\n");
    const obj = (await http(cluster, "GET", `${ER_PATH}/usd`)).body as { spec: { currency: string } };
    expect(obj.spec.currency).toBe("USD");
  });

  it("sees changes with get -w", async () => {
    const watch = spawnKubectl(cluster, ["get", "er", "usd", "-w"]);
    try {
      await waitUntil(() => watch.output().includes("usd"));
      await http(cluster, "PATCH", `${ER_PATH}/usd`, { spec: { currency: "CAD" } }, "application/merge-patch+json");
      await http(cluster, "PATCH", `${ER_PATH}/usd/status`, { status: { rate: 0.73 } }, "application/merge-patch+json");
      const out = await waitUntil(() => (watch.output().includes("0.73") ? watch.output() : undefined));
      const rows = table(out).map((r) => r.slice(0, 3));
      expect(rows[0]).toEqual(["NAME", "CURRENCY", "RATE"]);
      expect(rows).toContainEqual(["usd", "CAD", "1.37"]);
      expect(rows.at(-1)).toEqual(["usd", "CAD", "0.73"]);
    } finally {
      watch.kill();
      await watch.exited;
    }
  });

  it("waits for a condition on a custom object", async () => {
    const wait = spawnKubectl(cluster, ["wait", "--for=condition=Ready", "er/usd", "--timeout=10s"]);
    await new Promise((r) => setTimeout(r, 300));
    expect(wait.output()).toBe("");
    await http(
      cluster,
      "PATCH",
      `${ER_PATH}/usd/status`,
      { status: { conditions: [{ type: "Ready", status: "True" }] } },
      "application/merge-patch+json",
    );
    const done = await wait.exited;
    expect(done.stdout).toBe("exchangerate.operators.example.com/usd condition met\n");
    expect(done.code).toBe(0);
  });

  it("describes a custom object with its events, and lists events with kube-apiserver's columns", async () => {
    const obj = (await http(cluster, "GET", `${ER_PATH}/usd`)).body as { metadata: { uid: string } };
    const at = new Date(Date.now() - 15 * 60_000).toISOString().replace(/\.\d+Z$/, "Z");
    const event = await http(cluster, "POST", "/api/v1/namespaces/default/events", {
      metadata: { name: "usd.rate" },
      involvedObject: {
        apiVersion: "operators.example.com/v1",
        kind: "ExchangeRate",
        name: "usd",
        namespace: "default",
        uid: obj.metadata.uid,
      },
      reason: "RateFetched",
      message: "fetched 1.37",
      type: "Normal",
      source: { component: "exchangerate-operator" },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 2,
    });
    expect(event.status, event.text).toBe(201);
    const res = await cluster.kubectl(["describe", "er", "usd"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(
      /Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n.*\n\s+Normal\s+RateFetched\s+15m \(x2 over 15m\)\s+exchangerate-operator\s+fetched 1\.37\n/,
    );
    const events = table((await cluster.kubectl(["get", "events"])).stdout);
    expect(events[0]).toEqual(["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
    expect(events[1]).toEqual(["15m", "Normal", "RateFetched", "exchangerate/usd", "fetched 1.37"]);
    expect(res.stdout).toMatch(/^Name:\s+usd\nNamespace:\s+default\nLabels:\s+tier=gold\n/);
    expect(res.stdout).toMatch(/Kind:\s+ExchangeRate\n/);
    expect(res.stdout).toMatch(/Spec:\n\s+Currency:\s+CAD\n/);
  });

  it("serves a CRD update at once: a new printer column and short name", async () => {
    const updated = crd() as {
      spec: { names: { shortNames: string[] }; versions: { additionalPrinterColumns: Record<string, unknown>[] }[] };
    };
    updated.spec.names.shortNames = ["er", "rate"];
    updated.spec.versions[0]!.additionalPrinterColumns.splice(2, 0, {
      name: "Tier",
      type: "string",
      jsonPath: ".metadata.labels.tier",
    });
    const applied = await cluster.kubectl(["apply", "-f", await manifest("crd-v2.yaml", updated)]);
    expect(applied.stdout).toBe(
      "customresourcedefinition.apiextensions.k8s.io/exchangerates.operators.example.com configured\n",
    );
    const rows = table((await cluster.kubectl(["get", "rate", "usd"])).stdout);
    expect(rows[0]).toEqual(["NAME", "CURRENCY", "RATE", "TIER", "AGE"]);
    expect(rows[1]?.slice(0, 4)).toEqual(["usd", "CAD", "0.73", "gold"]);
  });

  it("blocks delete until the object's finalizer is removed", async () => {
    await http(
      cluster,
      "PATCH",
      `${ER_PATH}/usd`,
      { metadata: { finalizers: ["example.com/hold"] } },
      "application/merge-patch+json",
    );
    const del = spawnKubectl(cluster, ["delete", "er", "usd"]);
    await waitUntil(() => del.output().includes("deleted"));
    const marked = (await http(cluster, "GET", `${ER_PATH}/usd`)).body as { metadata: { deletionTimestamp?: string } };
    expect(marked.metadata.deletionTimestamp).toBeDefined();
    const early = await Promise.race([
      del.exited.then(() => "exited"),
      new Promise((r) => setTimeout(() => r("waiting"), 500)),
    ]);
    expect(early).toBe("waiting");
    await http(
      cluster,
      "PATCH",
      `${ER_PATH}/usd`,
      [{ op: "remove", path: "/metadata/finalizers" }],
      "application/json-patch+json",
    );
    const done = await del.exited;
    expect(done.code).toBe(0);
    expect((await http(cluster, "GET", `${ER_PATH}/usd`)).status).toBe(404);
  });

  it("deletes the CRD together with its objects", async () => {
    await cluster.kubectl(["apply", "-f", join(cluster.dir, "usd.yaml")]);
    const res = await cluster.kubectl(["delete", "crd", "exchangerates.operators.example.com"]);
    expect(res.stdout).toBe(
      'customresourcedefinition.apiextensions.k8s.io "exchangerates.operators.example.com" deleted\n',
    );
    expect(res.code).toBe(0);
    const after = await cluster.kubectl(["get", "er"]);
    expect(after.code).not.toBe(0);
    // Depending on its discovery cache, kubectl reports the unknown type or the server's 404.
    expect(after.stderr).toMatch(
      /the server doesn't have a resource type "er"|the server could not find the requested resource/,
    );
    expect((await http(cluster, "GET", ER_PATH)).status).toBe(404);
  });
});
