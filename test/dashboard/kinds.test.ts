import { describe, expect, it } from "vitest";
import { type CustomResourceDefinition, kindFromCrd } from "../../packages/capstan-dev/src/dashboard/kinds.ts";

const crd = (over: Partial<CustomResourceDefinition> = {}): CustomResourceDefinition => ({
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    names: { kind: "Widget", plural: "widgets" },
    scope: "Cluster",
    versions: [
      { name: "v1alpha1", served: true, storage: false },
      {
        name: "v1",
        served: true,
        storage: true,
        additionalPrinterColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }],
      },
    ],
  },
  status: { conditions: [{ type: "Established", status: "True" }] },
  ...over,
});

describe("kinds from CRDs", () => {
  it("takes an established CRD's storage version, scope and printer columns", () => {
    expect(kindFromCrd(crd())).toMatchObject({
      id: "example.com/v1/widgets",
      group: "example.com",
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      namespaced: false,
      columns: [{ name: "Size", jsonPath: ".spec.size" }],
      builtin: false,
    });
  });

  it("leaves out a printer column of .metadata.creationTimestamp: the table has its own Age", () => {
    const withAge = crd();
    const v1 = withAge.spec?.versions?.[1];
    v1?.additionalPrinterColumns?.push({ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" });
    expect(kindFromCrd(withAge)?.columns.map((c) => c.name)).toEqual(["Size"]);
  });

  it("skips a CRD that is not established yet, or serves no version", () => {
    expect(kindFromCrd(crd({ status: { conditions: [{ type: "Established", status: "False" }] } }))).toBeUndefined();
    const unserved = crd();
    for (const v of unserved.spec?.versions ?? []) v.served = false;
    expect(kindFromCrd(unserved)).toBeUndefined();
  });
});
