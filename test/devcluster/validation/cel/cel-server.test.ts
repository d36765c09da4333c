/**
 * x-kubernetes-validations end to end: a CRD with CEL rules applied to the devcluster, objects
 * rejected over HTTP and through the real kubectl with the real server's messages, transition rules,
 * and a CRD whose rule does not compile refused at creation.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { http } from "../../kubectl/support/cluster.ts";

let cluster: TestCluster;

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS = "/apis/cel.example.com/v1/namespaces/default/widgets";

function widgetCrd(specSchema: Record<string, unknown>, name = "widgets", kind = "Widget"): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${name}.cel.example.com` },
    spec: {
      group: "cel.example.com",
      scope: "Namespaced",
      names: { plural: name, singular: name.slice(0, -1), kind, listKind: `${kind}List` },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", properties: { spec: specSchema } } },
        },
      ],
    },
  };
}

const SPEC_SCHEMA = {
  type: "object",
  "x-kubernetes-validations": [
    { rule: "self.replicas <= self.maxReplicas", message: "replicas must not exceed maxReplicas" },
    { rule: "self.name == oldSelf.name", message: "name is immutable" },
  ],
  properties: {
    name: { type: "string" },
    replicas: { type: "integer" },
    maxReplicas: { type: "integer" },
    ports: {
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
      items: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, port: { type: "integer" } },
        "x-kubernetes-validations": [
          {
            rule: "self.port >= 1024",
            messageExpression: "'port ' + string(self.port) + ' of ' + self.name + ' is privileged'",
          },
        ],
      },
    },
  },
};

const widget = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "cel.example.com/v1",
  kind: "Widget",
  metadata: { name },
  spec,
});

async function waitServed(path: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await http(cluster, "GET", path);
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${path} never served`);
}

beforeAll(async () => {
  cluster = await startTestCluster();
  const res = await http(cluster, "POST", CRDS, widgetCrd(SPEC_SCHEMA));
  expect(res.status, res.text).toBe(201);
  await waitServed(WIDGETS);
});
afterAll(async () => {
  await cluster.stop();
});

describe("x-kubernetes-validations over HTTP", () => {
  it("rejects an object breaking a rule with 422 and the rule's message at the rule's schema node", async () => {
    const res = await http(cluster, "POST", WIDGETS, widget("too-many", { name: "a", replicas: 5, maxReplicas: 3 }));
    expect(res.status).toBe(422);
    const body = res.body as { message: string; reason: string; details: { causes: unknown[] } };
    expect(body.reason).toBe("Invalid");
    expect(body.message).toBe(
      'Widget.cel.example.com "too-many" is invalid: spec: Invalid value: "object": replicas must not exceed maxReplicas',
    );
    expect(body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message: 'Invalid value: "object": replicas must not exceed maxReplicas',
        field: "spec",
      },
    ]);
  });

  it("accepts an object every rule holds for, the transition rule being skipped on create", async () => {
    const res = await http(cluster, "POST", WIDGETS, widget("ok", { name: "a", replicas: 1, maxReplicas: 3 }));
    expect(res.status, res.text).toBe(201);
  });

  it("enforces the immutability transition rule (self == oldSelf) on update only", async () => {
    const current = (await http(cluster, "GET", `${WIDGETS}/ok`)).body as { spec: Record<string, unknown> };
    const renamed = { ...current, spec: { ...current.spec, name: "b" } };
    const refused = await http(cluster, "PUT", `${WIDGETS}/ok`, renamed);
    expect(refused.status).toBe(422);
    expect((refused.body as { message: string }).message).toBe(
      'Widget.cel.example.com "ok" is invalid: spec: Invalid value: "object": name is immutable',
    );
    const scaled = await http(
      cluster,
      "PATCH",
      `${WIDGETS}/ok`,
      { spec: { replicas: 2 } },
      "application/merge-patch+json",
    );
    expect(scaled.status, scaled.text).toBe(200);
  });

  it("runs rules on list items with the item's path and the messageExpression's text", async () => {
    const res = await http(
      cluster,
      "POST",
      WIDGETS,
      widget("ports", {
        name: "a",
        replicas: 1,
        maxReplicas: 1,
        ports: [
          { name: "http", port: 8080 },
          { name: "ssh", port: 22 },
        ],
      }),
    );
    expect(res.status).toBe(422);
    expect((res.body as { message: string }).message).toBe(
      'Widget.cel.example.com "ports" is invalid: spec.ports[1]: Invalid value: "object": port 22 of ssh is privileged',
    );
  });

  it("refuses a CRD whose rule does not compile, with the compiler's message and position", async () => {
    const crd = widgetCrd(
      {
        type: "object",
        properties: { replicas: { type: "integer" } },
        "x-kubernetes-validations": [{ rule: "self.replicas > self.minReplicas" }],
      },
      "gadgets",
      "Gadget",
    );
    const res = await http(cluster, "POST", CRDS, crd);
    expect(res.status).toBe(422);
    expect((res.body as { message: string }).message).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "gadgets.cel.example.com" is invalid: ' +
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
        'apiextensions.ValidationRule{Rule:"self.replicas > self.minReplicas", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: ' +
        "compilation failed: ERROR: <input>:1:21: undefined field 'minReplicas'\n" +
        " | self.replicas > self.minReplicas\n" +
        " | ....................^",
    );
    expect((await http(cluster, "GET", `${CRDS}/gadgets.cel.example.com`)).status).toBe(404);
  });
});

describe("x-kubernetes-validations with the real kubectl", () => {
  it("kubectl apply reports the rule's message and leaves nothing behind", async () => {
    const path = join(cluster.dir, "bad-widget.yaml");
    await writeFile(path, stringify(widget("kubectl-bad", { name: "a", replicas: 9, maxReplicas: 3 })));
    const res = await cluster.kubectl(["apply", "-f", path]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'The Widget "kubectl-bad" is invalid: spec: Invalid value: "object": replicas must not exceed maxReplicas',
    );
    expect((await http(cluster, "GET", `${WIDGETS}/kubectl-bad`)).status).toBe(404);
  });
});

describe("x-kubernetes-validations across CRD updates", () => {
  async function crdWithRules(rules: unknown[]): Promise<Record<string, unknown>> {
    const current = (await http(cluster, "GET", `${CRDS}/widgets.cel.example.com`)).body as {
      spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: Record<string, unknown> } } } }[] };
    };
    current.spec.versions[0]!.schema.openAPIV3Schema.properties.spec["x-kubernetes-validations"] = rules;
    return current;
  }

  it("refuses a CRD update whose new rule does not compile, keeping the old rules", async () => {
    const res = await http(
      cluster,
      "PUT",
      `${CRDS}/widgets.cel.example.com`,
      await crdWithRules([{ rule: "self.replicas >" }]),
    );
    expect(res.status).toBe(422);
    expect((res.body as { message: string }).message).toContain(
      "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: ",
    );
    expect((res.body as { message: string }).message).toContain(": compilation failed: ERROR: <input>:1:");
  });

  it("enforces the new rules once the CRD is updated (programs are not kept from the old schema)", async () => {
    const rules = [{ rule: "self.replicas != 7", message: "seven is not allowed" }];
    const updated = await http(cluster, "PUT", `${CRDS}/widgets.cel.example.com`, await crdWithRules(rules));
    expect(updated.status, updated.text).toBe(200);
    let last = "";
    for (let i = 0; i < 200; i++) {
      const res = await http(
        cluster,
        "POST",
        `${WIDGETS}?dryRun=All`,
        widget("seven", { name: "a", replicas: 7, maxReplicas: 3 }),
      );
      last = (res.body as { message?: string }).message ?? "";
      if (res.status === 422) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(last).toBe('Widget.cel.example.com "seven" is invalid: spec: Invalid value: "object": seven is not allowed');
    // The old rule (replicas <= maxReplicas) is gone with the old schema.
    const ok = await http(cluster, "POST", WIDGETS, widget("eight", { name: "a", replicas: 8, maxReplicas: 3 }));
    expect(ok.status, ok.text).toBe(201);
  });
});
