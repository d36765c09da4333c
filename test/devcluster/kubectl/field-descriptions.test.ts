/**
 * The real kubectl explains a CRD whose descriptions came from TSDoc comments (as `capstan generate
 * crds` writes them): the server publishes them in its OpenAPI documents, field by field.
 */
import { join } from "node:path";
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { loadTypeScript, readDescriptions } from "../../../packages/capstan/src/cli/source-descriptions.ts";
import { toCrd } from "../../../packages/capstan/src/resources/crd.ts";
import { describeCrd } from "../../../packages/capstan/src/resources/crd-descriptions.ts";
import { Gadget } from "../../cli/fixtures/described/src/gadget.ts";
import { fileFixture } from "../../support/file-fixture.ts";

const cluster = fileFixture(() => startTestCluster());
const entry = join(import.meta.dirname, "../../cli/fixtures/described/src/operator.ts");

/** `kubectl explain` of a path, once the new kind is in the published document. */
async function explain(path: string): Promise<string> {
  return waitUntil(async () => {
    const res = await cluster.kubectl(["explain", path]);
    return res.code === 0 ? res.stdout : undefined;
  });
}

describe("kubectl explain of a CRD described by TSDoc comments", () => {
  it("shows the kind's, the fields' and the nested fields' descriptions", async () => {
    const ts = await loadTypeScript(entry);
    if (ts === undefined) throw new Error("typescript is a devDependency of the workspace");
    const crd = describeCrd(toCrd(Gadget), readDescriptions(ts, entry));
    const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(crd) });
    expect(applied.code, applied.stderr).toBe(0);
    const kind = await explain("gadgets");
    expect(kind).toMatch(/DESCRIPTION:\n\s+A Gadget is kept on a shelf and priced in one currency\./);

    const currency = await explain("gadgets.spec.currency");
    expect(currency).toMatch(/FIELD:\s+currency <string>/);
    expect(currency).toMatch(/DESCRIPTION:\n\s+The currency whose rate is kept in the ConfigMap\./);

    const spec = await explain("gadgets.spec");
    expect(spec).toMatch(/DESCRIPTION:\n\s+What the gadget should be\./);
    // Each field's description beside it in the list, and none invented for an undocumented field.
    expect(spec).toMatch(/\n\s+parts\s+<\[\]Object> -required-\n\s+The parts, in assembly order\.\n/);
    expect(spec).toMatch(/\n\s+color\s+<string> -required-\n\s+<no description>\n/);

    const number = await explain("gadgets.spec.parts.number");
    expect(number).toMatch(/DESCRIPTION:\n\s+The part number, as printed on it\./);
    const owner = await explain("gadgets.spec.owner.name");
    expect(owner).toMatch(/DESCRIPTION:\n\s+The owner's login name\./);
  });
});
