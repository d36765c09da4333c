/**
 * CRD descriptions from TSDoc comments: what `capstan generate crds` reads from an operator's source
 * (fixtures/described: comments on direct, nested, referenced, imported and spread fields, arrays,
 * records, a multi-version kind) and how it writes them into the CRDs.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CustomResourceDefinition, JSONSchemaProps } from "kubernetes-types/apiextensions/v1.d.ts";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { commentText, loadTypeScript, readDescriptions } from "../../packages/capstan/src/cli/source-descriptions.ts";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import { describeCrd } from "../../packages/capstan/src/resources/crd-descriptions.ts";
import { Gadget } from "./fixtures/described/src/gadget.ts";
import { Gizmo } from "./fixtures/described/src/gizmo.ts";

const repo = new URL("../..", import.meta.url).pathname;
const project = join(repo, "test/cli/fixtures/described");
const entry = join(project, "src/operator.ts");
/** The typescript the fixture project resolves (the workspace's), loaded as `capstan generate` loads it. */
const ts = await loadTypeScript(entry);
if (ts === undefined) throw new Error("typescript is a devDependency of the workspace");

function described(crd: CustomResourceDefinition, version = 0): JSONSchemaProps {
  const schema = crd.spec.versions[version]?.schema?.openAPIV3Schema;
  if (schema === undefined) throw new Error("no schema");
  return schema;
}

describe("descriptions from TSDoc comments", () => {
  const descriptions = readDescriptions(ts, entry);
  const gadget = described(describeCrd(toCrd(Gadget), descriptions));
  const spec = gadget.properties?.spec as JSONSchemaProps;
  const field = (name: string) => spec.properties?.[name] as JSONSchemaProps;

  it("finds the kinds defined in the files the operator imports", () => {
    expect(descriptions.map((d) => `${d.group}/${d.kind}`)).toEqual([
      "gadgets.capstan.test/Gadget",
      "gadgets.capstan.test/Gizmo",
    ]);
  });

  it("describes a field from the comment on it", () => {
    expect(field("currency").description).toBe("The currency whose rate is kept in the ConfigMap.");
  });

  it("describes the kind from the comment on its defineResource, and spec from the comment on the option", () => {
    expect(gadget.description).toBe("A Gadget is kept on a shelf and priced in one currency.");
    expect(spec.description).toBe("What the gadget should be.");
  });

  it("keeps an explicit description option over the comment", () => {
    expect(field("size").description).toBe("The size, in centimetres.");
  });

  it("leaves a field without a TSDoc comment undescribed (a // comment is not documentation)", () => {
    expect(field("color")).toEqual({ type: "string" });
    expect(field("owner").properties?.team).toEqual({ type: "string" });
  });

  it("follows a const schema: its comment and its nested fields' comments", () => {
    expect(field("location").description).toBe("Where a gadget is kept.");
    expect(field("location").properties?.building?.description).toBe("The building.");
    expect(field("location").properties?.shelf?.description).toBe("The shelf, counted from the floor.");
  });

  it("prefers the comment on the field over the one on the const it uses", () => {
    expect(field("overflow").description).toBe("Where it goes when the main shelf is full.");
    expect(field("overflow").properties?.building?.description).toBe("The building.");
  });

  it("follows a const imported from another file, renamed and re-exported", () => {
    expect(field("owner").description).toBe("Who answers for the gadget.");
    expect(field("owner").properties?.name?.description).toBe("The owner's login name.");
  });

  it("describes an array and its items (a namespace import's const)", () => {
    const parts = field("parts");
    expect(parts.description).toBe("The parts, in assembly order.");
    const items = parts.items as JSONSchemaProps;
    expect(items.description).toBe("One part of a gadget.");
    expect(items.properties?.number?.description).toBe("The part number, as printed on it.");
  });

  it("describes a record's values and the fields spread into an object", () => {
    const values = field("labels").additionalProperties as JSONSchemaProps;
    expect(field("labels").description).toBe("Labels to print on the box, by language.");
    expect(values.properties?.text?.description).toBe("The label's text.");
    expect(field("note").description).toBe("A note anyone may leave.");
  });

  it("keeps the text and @remarks, turns @deprecated into a paragraph, drops other tags and what follows ---", () => {
    const status = gadget.properties?.status as JSONSchemaProps;
    expect(status.properties?.shelved?.description).toBe(
      "Whether the gadget is on its shelf.\n\nChecked every minute.\n\nDeprecated: Read the conditions instead.",
    );
    expect((field("parts").items as JSONSchemaProps).properties?.count?.description).toBe("How many of it.");
  });

  it("describes each version of a multi-version kind from its own schema", () => {
    const gizmo = describeCrd(toCrd(Gizmo), descriptions);
    const volume = (i: number) =>
      (described(gizmo, i).properties?.spec as JSONSchemaProps | undefined)?.properties?.volume;
    expect(gizmo.spec.versions.map((v) => v.name)).toEqual(["v1", "v1beta1"]);
    expect(volume(0)?.description).toBe("How loud it is, in decibels.");
    expect(volume(1)?.description).toBe("How loud it was, from 0 to 11.");
  });

  it("changes nothing of a CRD without descriptions for its kind, and keeps it structural", () => {
    const plain = toCrd(Gadget);
    expect(describeCrd(plain, [])).toBe(plain);
    // Only description keys were added: removing them gives the plain CRD back.
    const strip = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(strip)
        : typeof value === "object" && value !== null
          ? Object.fromEntries(
              Object.entries(value)
                .filter(([k, v]) => k !== "description" || typeof v !== "string")
                .map(([k, v]) => [k, strip(v)]),
            )
          : value;
    expect(strip(describeCrd(plain, descriptions))).toEqual(strip(plain));
  });

  it("ends on cycles in the source: a const spreading itself, modules re-exporting each other", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-descriptions-"));
    try {
      await writeFile(
        join(dir, "a.ts"),
        [
          'export * from "./b.ts";',
          'export * from "./c.ts";',
          'import { defineResource, Type } from "capstan";',
          'import { Loop } from "./b.ts";',
          "const self = { ...self, /** Kept. */ x: Type.String() };",
          "export const K = defineResource({",
          '  group: "cycles.capstan.test", version: "v1", kind: "K", scope: "Cluster",',
          "  spec: Type.Object({ ...self, loop: Loop }),",
          "});",
        ].join("\n"),
      );
      await writeFile(join(dir, "b.ts"), 'export * from "./a.ts";\nexport * from "./c.ts";\n');
      await writeFile(join(dir, "c.ts"), 'export * from "./a.ts";\nexport * from "./b.ts";\n');
      expect(readDescriptions(ts, join(dir, "a.ts"))).toEqual([
        {
          group: "cycles.capstan.test",
          kind: "K",
          versions: { v1: { properties: { spec: { properties: { x: { description: "Kept." } } } } } },
        },
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("takes a comment on the property's own line, not one trailing the property before it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-descriptions-"));
    try {
      await writeFile(
        join(dir, "op.ts"),
        'import { defineResource, Type } from "capstan";\n' +
          'export const K = defineResource({ group: "a.capstan.test", version: "v1", kind: "K", scope: "Cluster",\n' +
          "  spec: Type.Object({ /** Inline. */ a: Type.String(), /** Also inline. */ b: Type.String(),\n" +
          "    c: Type.String(), /** Trailing c: not d's. */\n" +
          "    d: Type.String() }) });\n",
      );
      const [kind] = readDescriptions(ts, join(dir, "op.ts"));
      expect(kind?.versions.v1?.properties?.spec?.properties).toEqual({
        a: { description: "Inline." },
        b: { description: "Also inline." },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("skips a kind whose name is computed, rather than guess", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-descriptions-"));
    try {
      await writeFile(
        join(dir, "op.ts"),
        'import { defineResource, Type } from "capstan";\n' +
          'const name = ["Th", "ing"].join("");\n' +
          'export const K = defineResource({ group: "a.capstan.test", version: "v1", kind: name, scope: "Cluster",\n' +
          "  spec: Type.Object({ /** Lost. */ x: Type.String() }) });\n",
      );
      expect(readDescriptions(ts, join(dir, "op.ts"))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("loads the project's own typescript", async () => {
    const manifest = createRequire(entry).resolve("typescript/package.json");
    expect(ts.version).toBe((JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version);
  });
});

describe("commentText", () => {
  it("reads a one-line comment", () => {
    expect(commentText("/** The size. */")).toBe("The size.");
  });

  it("keeps paragraphs and code blocks, drops @example with its code and TODO lines", () => {
    const text = commentText(
      [
        "/**",
        " * First line",
        " * continues.",
        " *",
        " * TODO: say more.",
        " * ```",
        " * --- kept in a code block",
        " * ```",
        " * @example",
        " * ```ts",
        " * const x = 1;",
        " * ```",
        " * @see https://example.com",
        " */",
      ].join("\n"),
    );
    expect(text).toBe("First line\ncontinues.\n\n```\n--- kept in a code block\n```");
  });

  it("renders inline links as their text", () => {
    expect(commentText("/** See {@link Gadget}, {@link Gadget.spec | the spec} and {@linkcode Foo bar}. */")).toBe(
      "See Gadget, the spec and bar.",
    );
  });

  it("gives nothing for a comment that is only tags", () => {
    expect(commentText("/** @internal */")).toBeUndefined();
  });
});

describe("capstan generate crds", () => {
  it("writes the descriptions of the project's TSDoc comments into the CRDs it prints", async () => {
    const bin = join(repo, "packages/capstan/bin/capstan.js");
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [bin, "generate", "crds", "src/operator.ts"],
        { cwd: project, timeout: 30_000 },
        (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }),
      );
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    const crds = parseAllDocuments(result.stdout).map((d) => d.toJS() as CustomResourceDefinition);
    expect(crds.map((c) => c.metadata?.name)).toEqual(["gadgets.gadgets.capstan.test", "gizmos.gadgets.capstan.test"]);
    const [gadget, gizmo] = crds as [CustomResourceDefinition, CustomResourceDefinition];
    expect(gadget).toEqual(describeCrd(toCrd(Gadget), readDescriptions(ts, entry)));
    expect(described(gadget).description).toBe("A Gadget is kept on a shelf and priced in one currency.");
    expect(result.stdout).toContain("description: The currency whose rate is kept in the ConfigMap.\n");
    expect((described(gizmo).properties?.spec as JSONSchemaProps | undefined)?.properties?.volume?.description).toBe(
      "How loud it is, in decibels.",
    );
  });
});
