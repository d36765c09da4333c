import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchangeRateCrd } from "./support/cluster.ts";

let cluster: TestCluster;
let agent: Agent;
beforeAll(async () => {
  cluster = await startTestCluster();
  agent = new Agent({ connect: { ca: cluster.server.caPem } });
});
afterAll(async () => {
  await agent.close();
  await cluster.stop();
});

async function getSwagger(accept?: string): Promise<{ status: number; type: string; vary: string; body: Buffer }> {
  const res = await request(`${cluster.server.url}/openapi/v2`, {
    dispatcher: agent,
    headers: { authorization: `Bearer ${cluster.server.token}`, ...(accept ? { accept } : {}) },
  });
  return {
    status: res.statusCode,
    type: String(res.headers["content-type"]),
    vary: String(res.headers["vary"]),
    body: Buffer.from(await res.body.arrayBuffer()),
  };
}

/** A CRD whose schema has descriptions and a nullable field, beside the plain ExchangeRate one. */
function describedCrd(): Record<string, unknown> {
  const crd = exchangeRateCrd({ group: "described.example.com" }) as {
    spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] };
  };
  crd.spec.versions[0]!.schema.openAPIV3Schema = {
    type: "object",
    description: "An exchange rate to follow.",
    properties: {
      spec: {
        type: "object",
        description: "What to follow.",
        required: ["currency", "note"],
        properties: {
          currency: { type: "string", enum: ["CAD", "USD"], description: "The currency to quote against EUR." },
          note: { type: "string", nullable: true, description: "Free text, may be null." },
          extra: {
            type: "object",
            "x-kubernetes-preserve-unknown-fields": true,
            properties: { known: { type: "string" } },
          },
        },
      },
    },
  };
  return crd;
}

describe("swagger 2.0 at /openapi/v2", () => {
  it("lets kubectl report an object applied before its CRD as a missing kind, not a validation failure", async () => {
    const manifest = [
      "apiVersion: nowhere.example.com/v1",
      "kind: Gadget",
      "metadata:",
      "  name: g1",
      "  namespace: default",
      "",
    ].join("\n");
    const res = await cluster.kubectl(["apply", "-f", "-"], { stdin: manifest });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('resource mapping not found for name: "g1" namespace: "default" from "STDIN"');
    expect(res.stderr).toContain('no matches for kind "Gadget" in version "nowhere.example.com/v1"');
    expect(res.stderr).toContain("ensure CRDs are installed first");
    expect(res.stderr).not.toContain("error validating");
  });

  it("is read by kubectl explain --output=plaintext-openapiv2, CRD descriptions included", async () => {
    const crd = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(describedCrd()) });
    expect(crd.code, crd.stderr).toBe(0);
    // The v2 document follows the registry: retry until the new kind is in it.
    const explained = await waitUntil(async () => {
      const res = await cluster.kubectl([
        "explain",
        "exchangerates.described.example.com.spec",
        "--output=plaintext-openapiv2",
      ]);
      return res.code === 0 ? res.stdout : undefined;
    });
    expect(explained).toMatch(/KIND:\s+ExchangeRate/);
    expect(explained).toMatch(/RESOURCE:\s+spec <Object>/);
    expect(explained).toContain("What to follow.");
    expect(explained).toMatch(/currency\s+<string>/);
    expect(explained).toContain("The currency to quote against EUR.");
  });

  it("leaves client-side apply of built-in kinds to kubectl's compiled-in merge keys (no v2 paths)", async () => {
    const deployment = (image: string) =>
      JSON.stringify({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "merge-keys", namespace: "default" },
        spec: {
          selector: { matchLabels: { app: "merge-keys" } },
          template: {
            metadata: { labels: { app: "merge-keys" } },
            spec: {
              containers: [
                { name: "a", image },
                { name: "b", image: "busybox:1" },
              ],
            },
          },
        },
      });
    expect((await cluster.kubectl(["apply", "-f", "-"], { stdin: deployment("nginx:1") })).code).toBe(0);
    // Another writer adds an env var to container b, outside the applied configuration.
    const patched = await cluster.kubectl([
      "patch",
      "deployment",
      "merge-keys",
      "--type=strategic",
      "-p",
      JSON.stringify({
        spec: { template: { spec: { containers: [{ name: "b", env: [{ name: "X", value: "1" }] }] } } },
      }),
    ]);
    expect(patched.code, patched.stderr).toBe(0);
    const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: deployment("nginx:2") });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).not.toContain("warning");
    const got = await cluster.kubectl(["get", "deployment", "merge-keys", "-o", "json"]);
    const containers = (
      JSON.parse(got.stdout) as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } }
    ).spec.template.spec.containers;
    // Merged by name: a's image changed, b kept the other writer's env (a list replaced whole would drop it).
    expect(containers.map((c) => [c["name"], c["image"]])).toEqual([
      ["a", "nginx:2"],
      ["b", "busybox:1"],
    ]);
    expect(containers[1]?.["env"]).toEqual([{ name: "X", value: "1" }]);
  });

  it("serves JSON by default with definitions of built-in and custom kinds and only #/definitions/ references", async () => {
    const res = await getSwagger();
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/json");
    expect(res.vary).toBe("Accept");
    const text = res.body.toString("utf8");
    expect(text).not.toContain("#/components/schemas/");
    const doc = JSON.parse(text) as {
      swagger: string;
      definitions: Record<string, Record<string, unknown>>;
    };
    expect(doc.swagger).toBe("2.0");
    const pod = doc.definitions["io.k8s.api.core.v1.Pod"];
    expect(pod?.["x-kubernetes-group-version-kind"]).toEqual([{ group: "", version: "v1", kind: "Pod" }]);
    expect(pod).toBeDefined();
    expect((pod!["properties"] as Record<string, { $ref?: string }>)["metadata"]?.$ref).toBe(
      "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    );
    const er = doc.definitions["com.example.described.v1.ExchangeRate"];
    expect(er?.["x-kubernetes-group-version-kind"]).toEqual([
      { group: "described.example.com", version: "v1", kind: "ExchangeRate" },
    ]);
    expect(er).toBeDefined();
    const spec = (
      er!["properties"] as Record<string, { required: string[]; properties: Record<string, Record<string, unknown>> }>
    )["spec"];
    // swagger 2.0 has no nullable: the field keeps no type and is not required, so that null still validates.
    expect(spec?.properties["note"]).toEqual({ description: "Free text, may be null." });
    expect(spec?.required).toEqual(["currency"]);
    // A field keeping unknown fields lists none of its known ones (kubectl would reject the unknown ones).
    expect(spec?.properties["extra"]).toEqual({ type: "object", "x-kubernetes-preserve-unknown-fields": true });
    expect(spec?.properties["currency"]?.["enum"]).toEqual(["CAD", "USD"]);
  });

  it("serves the protobuf client-go asks for, under the type kube-openapi answers with", async () => {
    for (const accept of [
      "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
      "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
    ]) {
      const res = await getSwagger(accept);
      expect(res.status).toBe(200);
      expect(res.type).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
      // Document field 1 (swagger, length-delimited) = "2.0".
      expect([...res.body.subarray(0, 5)]).toEqual([0x0a, 3, 0x32, 0x2e, 0x30]);
      expect(res.body.includes(Buffer.from("io.k8s.api.core.v1.Pod"))).toBe(true);
    }
  });

  it("answers 406 to an Accept it cannot serve", async () => {
    const res = await getSwagger("text/html");
    expect(res.status).toBe(406);
  });
});
