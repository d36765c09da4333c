/**
 * Kubernetes' OpenAPI v3 definitions -> TypeScript modules of TypeBox schemas that a CRD can embed.
 *
 * Expected flow: `generateModules(definitions, targets)` takes the `components.schemas` of the
 * API server's documents (merged: the same definition appears in every document that uses it) and
 * returns one module per target group-version. Each definition becomes an interface (its static
 * type) and a `Type.Unsafe<Interface>(schema)` constant of the same name, the schema being plain
 * JSON Schema that `translateSchema` turns into a structural CRD schema.
 *
 * Guarantees:
 * - No `$ref` in the output: a reference becomes the referenced constant (imported from the module
 *   that owns it), so the CRD generator inlines it, as CRDs require.
 * - A definition that refers to itself, directly or not, is cut where the cycle closes: that field
 *   becomes `type: object` with `x-kubernetes-preserve-unknown-fields` (what controller-gen emits
 *   for JSONSchemaProps), and its static type stays recursive.
 * - `x-kubernetes-list-type`, `-list-map-keys` and `-map-type` are kept; the markers a CRD does not
 *   accept (`x-kubernetes-patch-*`, `-unions`, `-group-version-kind`) are dropped. A list-map whose
 *   key may be absent (neither required nor defaulted; a CRD refuses that) becomes atomic.
 * - The known types get controller-gen's schemas: `Quantity` (int-or-string with the quantity
 *   pattern; static type string, as in kubernetes-types), `IntOrString`, `Time`/`MicroTime`
 *   (date-time strings), `RawExtension` (an object kept as is), and `ObjectMeta` as the five fields
 *   controller-gen's `generateEmbeddedObjectMeta` keeps (name, namespace, labels, annotations,
 *   finalizers): a CRD may not constrain `metadata` anywhere but at the root, and a bare
 *   `type: object` would prune a template's labels.
 * - Defaults: the OpenAPI carries Go's zero values as defaults (`{}`, `""`, `0`, `false`) on every
 *   field without `omitempty`; those are dropped (a CRD would write them into every object).
 *   Defaults that `+default` markers set (`protocol: TCP`) are kept, and so are zero defaults on
 *   list-map keys that are not required (`LocalObjectReference.name: ""`): the server refuses a
 *   list-map key that is neither required nor defaulted.
 * - Definitions not owned by any target (e.g. meta/v1 `Condition`) are emitted with the first
 *   module that needs them, and not re-exported by any entry module.
 *
 * Assumptions: the files' imports form no cycle (a cycle of definitions across owners would make
 * one); checked, and an error otherwise.
 */

import { posix } from "node:path";

/** One node of an OpenAPI v3 schema, as the API server publishes it. */
export type OpenApiSchema = Record<string, unknown>;

/** A group-version to generate. */
export interface Target {
  /** The module's path under the output folder, without extension: `core/v1`. */
  module: string;
  /** It owns every definition (but lists) whose name starts with this: `io.k8s.api.core.v1.`. */
  prefix?: string;
  /** Or exactly these definitions, by full name. */
  definitions?: readonly string[];
}

export interface GeneratedModule {
  /** Its path under the output folder, without extension: an entry (`core/v1`) or a part (`core/v1.parts/own`). */
  module: string;
  source: string;
  /** An entry's public names (empty for a part, whose names are internal). */
  exported: string[];
}

export const QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";
export const INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
export const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
const RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension";

/** The fields of ObjectMeta a nested `metadata` may have (controller-gen's embedded ObjectMeta). */
const EMBEDDED_META_FIELDS = ["name", "namespace", "labels", "annotations", "finalizers"];

/**
 * A Quantity's serialization, from the grammar in its description: a signed decimal number, then a
 * binary SI suffix (Ki...Ei), a decimal SI suffix (n, u, m, k, M...E: the parser also takes n and u)
 * or a decimal exponent.
 */
const NUMBER = String.raw`(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))`;
export const QUANTITY_PATTERN = String.raw`^(\+|-)?${NUMBER}(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?${NUMBER}))?$`;

/** Schemas and static types of the known types, which the OpenAPI describes with `oneOf` or not at all. */
const KNOWN: Record<string, { schema: string; type: string }> = {
  [QUANTITY]: {
    schema: `{ "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }], pattern: ${JSON.stringify(QUANTITY_PATTERN)} }`,
    type: "string",
  },
  [INT_OR_STRING]: {
    schema: `{ "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] }`,
    type: "number | string",
  },
  [TIME]: { schema: `{ type: "string", format: "date-time" }`, type: "string" },
  [MICRO_TIME]: { schema: `{ type: "string", format: "date-time" }`, type: "string" },
  [RAW_EXTENSION]: {
    schema: `{ type: "object", "x-kubernetes-preserve-unknown-fields": true }`,
    type: "Record<string, unknown>",
  },
};

/** Formats the CRD validator knows; others (e.g. `int-or-string`) are dropped. */
const KEPT_FORMATS = new Set(["int32", "int64", "float", "double", "byte", "date-time"]);

const KEPT_EXTENSIONS = ["x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type"];

export class SchemaGenerationError extends Error {
  override readonly name = "SchemaGenerationError";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function shortName(definition: string): string {
  return definition.slice(definition.lastIndexOf(".") + 1);
}

/** The definition a node refers to: `$ref`, or the `allOf: [{ $ref }]` the v3 documents use to add a description. */
function refOf(node: OpenApiSchema): string | undefined {
  const direct = node.$ref;
  if (typeof direct === "string") return direct.replace(/^#\/components\/schemas\//, "");
  const all = node.allOf;
  if (Array.isArray(all) && all.length === 1 && isRecord(all[0]) && typeof all[0].$ref === "string") {
    return all[0].$ref.replace(/^#\/components\/schemas\//, "");
  }
  return undefined;
}

/** Every definition a schema refers to, in the order met. */
function refsIn(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const item of node) refsIn(item, into);
  } else if (isRecord(node)) {
    const ref = refOf(node);
    if (ref !== undefined) into.push(ref);
    else for (const value of Object.values(node)) refsIn(value, into);
  }
  return into;
}

function isList(definition: OpenApiSchema, name: string): boolean {
  return name.endsWith("List") && isRecord(definition.properties) && "items" in definition.properties;
}

function isZero(value: unknown): boolean {
  return value === "" || value === 0 || value === false || (isRecord(value) && Object.keys(value).length === 0);
}

/** `Definition.property` pairs that are keys of some list-map: their defaults are kept. */
function listMapKeys(definitions: Record<string, OpenApiSchema>): Set<string> {
  const keys = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!isRecord(node)) return;
    const mapKeys = node["x-kubernetes-list-map-keys"];
    const items = node.items;
    if (Array.isArray(mapKeys) && isRecord(items)) {
      const ref = refOf(items);
      if (ref !== undefined) for (const key of mapKeys) keys.add(`${ref}.${key}`);
    }
    if (refOf(node) === undefined) for (const value of Object.values(node)) visit(value);
  };
  visit(definitions);
  return keys;
}

/** A JSDoc comment, or nothing. */
function doc(description: unknown, indent: string): string {
  if (typeof description !== "string" || description.trim() === "") return "";
  const lines = description.replaceAll("*/", "*\\/").split("\n");
  return `${indent}/**\n${lines.map((l) => `${indent} *${l === "" ? "" : ` ${l}`}`).join("\n")}\n${indent} */\n`;
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/**
 * Generates the modules: for each target an entry module (`core/v1`) that re-exports its schemas,
 * and the files holding them (`core/v1.parts/...`). `header` is put at the top of each (what
 * generated it and how to regenerate).
 *
 * Why parts: a bundler splitting code between entry points (esbuild, as `npm run build` uses it)
 * puts a shared file in one chunk whole. Were core/v1 one file, an operator importing
 * networking/v1 would load all of core/v1 for the few definitions it needs. So definitions are
 * filed by the set of entry modules that reach them: every definition of a file is needed by each
 * module that loads it.
 * @param definitions the `components.schemas` of the documents, merged.
 */
export function generateModules(
  definitions: Record<string, OpenApiSchema>,
  targets: readonly Target[],
  header: string,
): GeneratedModule[] {
  const owner = new Map<string, string>();
  const owned = new Map<string, string[]>();
  for (const target of targets) {
    const prefix = target.prefix;
    const names =
      target.definitions !== undefined
        ? [...target.definitions]
        : Object.keys(definitions)
            .filter(
              (name) => prefix !== undefined && name.startsWith(prefix) && !name.slice(prefix.length).includes("."),
            )
            .filter((name) => !isList(definitions[name] as OpenApiSchema, name))
            .sort();
    for (const name of names) {
      if (definitions[name] === undefined) {
        throw new SchemaGenerationError(`${target.module}: no definition ${name} in the documents`);
      }
      const previous = owner.get(name);
      if (previous !== undefined) {
        throw new SchemaGenerationError(`${name} is owned by both ${previous} and ${target.module}`);
      }
      owner.set(name, target.module);
    }
    owned.set(target.module, names);
  }
  const definition = (name: string): OpenApiSchema => {
    const found = definitions[name];
    if (found === undefined) throw new SchemaGenerationError(`reference to ${name}, not in the documents`);
    return found;
  };
  // ObjectMeta is emitted as its embedded subset, which refers to nothing; known types are fixed.
  const refsOf = (name: string): string[] => (name in KNOWN || name === OBJECT_META ? [] : refsIn(definition(name)));

  const reachers = new Map<string, string[]>();
  for (const target of targets) {
    const seen = new Set<string>();
    const visit = (name: string): void => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const ref of refsOf(name)) visit(ref);
    };
    for (const name of owned.get(target.module) ?? []) visit(name);
    for (const name of seen) reachers.set(name, [...(reachers.get(name) ?? []), target.module]);
  }
  const fileOf = new Map<string, string>();
  for (const [name, modules] of reachers) {
    // A definition no target owns (meta/v1 Condition) lives with the first module that needs it, unexported there.
    const home = owner.get(name) ?? (modules[0] as string);
    const others = modules.filter((m) => m !== home).map((m) => m.replace("/", "-"));
    fileOf.set(name, `${home}.parts/${others.length === 0 ? "own" : `shared-with-${others.join("+")}`}`);
  }

  const keptDefaults = listMapKeys(definitions);
  const byFile = new Map<string, string[]>();
  for (const [name, file] of fileOf) byFile.set(file, [...(byFile.get(file) ?? []), name]);
  const parts = [...byFile.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, names]) => generatePart(file, names.sort(), definition, refsOf, fileOf, keptDefaults, header));
  checkNoImportCycle(parts);

  const entries = targets.map((target): GeneratedModule => {
    const names = owned.get(target.module) ?? [];
    const fromFile = new Map<string, string[]>();
    for (const name of names) {
      const file = fileOf.get(name) as string;
      fromFile.set(file, [...(fromFile.get(file) ?? []), shortName(name)]);
    }
    const lines = [...fromFile.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([file, short]) => `export { ${short.sort().join(", ")} } from "${relativePath(target.module, file)}";`);
    return {
      module: target.module,
      source: [header, ...lines, ""].join("\n"),
      exported: names.map(shortName),
    };
  });
  return [...entries, ...parts.map(({ module, source }) => ({ module, source, exported: [] }))];
}

interface PartOutput extends GeneratedModule {
  imports: Set<string>;
}

function generatePart(
  file: string,
  names: string[],
  definition: (name: string) => OpenApiSchema,
  refsOf: (name: string) => string[],
  fileOf: Map<string, string>,
  keptDefaults: Set<string>,
  header: string,
): PartOutput {
  const imports = new Map<string, Set<string>>();
  const emitted = new Set<string>();
  const onStack = new Set<string>();
  const blocks: string[] = [];
  const localNames = new Map<string, string>();
  let usesDescribed = false;

  const isLocal = (name: string): boolean => fileOf.get(name) === file;
  const nameFor = (name: string): string => {
    const short = shortName(name);
    const taken = localNames.get(short);
    if (taken !== undefined && taken !== name) {
      throw new SchemaGenerationError(`${file}: two definitions named ${short} (${taken} and ${name})`);
    }
    localNames.set(short, name);
    const from = fileOf.get(name) as string;
    if (from !== file) {
      const imported = imports.get(from) ?? new Set<string>();
      imported.add(short);
      imports.set(from, imported);
    }
    return short;
  };

  const emit = (name: string): void => {
    if (emitted.has(name) || onStack.has(name)) return;
    onStack.add(name);
    for (const ref of refsOf(name)) if (isLocal(ref)) emit(ref);
    onStack.delete(name);
    blocks.push(definitionBlock(name));
    emitted.add(name);
  };

  const context: ExpressionContext = {
    ref(name, description) {
      const local = nameFor(name);
      // A definition of this file not emitted yet is on the stack: this reference closes a cycle.
      if (isLocal(name) && !emitted.has(name)) {
        return {
          schema: withDescription(`{ type: "object", "x-kubernetes-preserve-unknown-fields": true }`, description),
          type: local,
        };
      }
      if (description === undefined) return { schema: local, type: local };
      // A pure call, not a spread (\`{ ...X }\` may run getters, so a bundler keeps it).
      usesDescribed = true;
      return { schema: `/* @__PURE__ */ described(${local}, ${JSON.stringify(description)})`, type: local };
    },
    keepDefault(owner, property) {
      return keptDefaults.has(`${owner}.${property}`);
    },
    keysPresent(items, keys) {
      const node = definition(items);
      const required = Array.isArray(node.required) ? node.required : [];
      const properties = isRecord(node.properties) ? node.properties : {};
      return keys.every((key) => required.includes(key) || (isRecord(properties[key]) && "default" in properties[key]));
    },
  };

  function definitionBlock(name: string): string {
    const local = nameFor(name);
    const node = definition(name);
    const known = KNOWN[name];
    if (known !== undefined) {
      const description = node.description;
      return (
        doc(description, "") +
        `export type ${local} = ${known.type};\n` +
        doc(description, "") +
        `export const ${local}: TUnsafe<${local}> = /* @__PURE__ */ Type.Unsafe<${local}>(${known.schema});\n`
      );
    }
    const source = name === OBJECT_META ? embeddedObjectMeta(node) : node;
    const { schema, type } = expression(source, name, context, true);
    const typeDeclaration = type.startsWith("{")
      ? `export interface ${local} ${type}`
      : `export type ${local} = ${type};`;
    return (
      doc(node.description, "") +
      `${typeDeclaration}\n` +
      doc(node.description, "") +
      `export const ${local}: TUnsafe<${local}> = /* @__PURE__ */ Type.Unsafe<${local}>(${schema});\n`
    );
  }

  for (const name of names) emit(name);

  const importLines = [...imports.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([from, imported]) => `import { ${[...imported].sort().join(", ")} } from "${relativePath(file, from)}";`);
  const source = [
    header,
    `import { type TUnsafe, Type } from "typebox";`,
    ...(usesDescribed ? [`import { described } from "${relativePath(file, "described")}";`] : []),
    ...importLines,
    "",
    blocks.join("\n"),
  ].join("\n");
  return { module: file, source, exported: [], imports: new Set(imports.keys()) };
}

function embeddedObjectMeta(node: OpenApiSchema): OpenApiSchema {
  const properties = isRecord(node.properties) ? node.properties : {};
  const kept: Record<string, unknown> = {};
  for (const field of EMBEDDED_META_FIELDS) {
    if (properties[field] === undefined) throw new SchemaGenerationError(`ObjectMeta has no field ${field}`);
    kept[field] = properties[field];
  }
  return { ...node, properties: kept };
}

/** The import specifier of module `to` from module `from` (both relative to the output folder, no extension). */
function relativePath(from: string, to: string): string {
  const path = posix.relative(posix.dirname(from), to);
  return `${path.startsWith(".") ? path : `./${path}`}.ts`;
}

function checkNoImportCycle(modules: PartOutput[]): void {
  const byName = new Map(modules.map((m) => [m.module, m]));
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting") {
      throw new SchemaGenerationError(`the generated files import each other: ${[...path, name].join(" -> ")}`);
    }
    state.set(name, "visiting");
    for (const next of byName.get(name)?.imports ?? []) visit(next, [...path, name]);
    state.set(name, "done");
  };
  for (const m of modules) visit(m.module, []);
}

interface ExpressionContext {
  /** A reference to a definition, with the referring field's own description. */
  ref(name: string, description: string | undefined): { schema: string; type: string };
  keepDefault(owner: string, property: string): boolean;
  /** Whether every key of a list-map is required or defaulted in the items' definition. */
  keysPresent(items: string, keys: readonly string[]): boolean;
}

function withDescription(schema: string, description: unknown): string {
  if (typeof description !== "string") return schema;
  return `${schema.slice(0, -1).trimEnd()}, description: ${JSON.stringify(description)} }`;
}

/**
 * The schema (as source text) and static type of one node. `owner` is the definition the node
 * belongs to (for defaults on list-map keys); `top` says the node is the definition itself.
 */
function expression(
  node: OpenApiSchema,
  owner: string,
  ctx: ExpressionContext,
  top = false,
  property?: { name: string; required: boolean },
): { schema: string; type: string } {
  const description = typeof node.description === "string" ? node.description : undefined;
  const ref = refOf(node);
  if (ref !== undefined) return ctx.ref(ref, description);
  const entries: string[] = [];
  let type: string;
  const nodeType = node.type;
  switch (nodeType) {
    case "string":
    case "integer":
    case "number":
    case "boolean": {
      entries.push(`type: ${JSON.stringify(nodeType)}`);
      if (typeof node.format === "string" && KEPT_FORMATS.has(node.format)) {
        entries.push(`format: ${JSON.stringify(node.format)}`);
      }
      if (Array.isArray(node.enum)) entries.push(`enum: ${JSON.stringify(node.enum)}`);
      type = Array.isArray(node.enum)
        ? node.enum.map((v) => JSON.stringify(v)).join(" | ")
        : nodeType === "integer"
          ? "number"
          : nodeType;
      break;
    }
    case "array": {
      if (!isRecord(node.items)) throw new SchemaGenerationError(`${owner}: an array without items`);
      const items = expression(node.items, owner, ctx);
      entries.push(`type: "array"`, `items: ${items.schema}`);
      type = `${items.type.includes(" ") || items.type.includes("|") ? `(${items.type})` : items.type}[]`;
      break;
    }
    case "object":
    case undefined: {
      entries.push(`type: "object"`);
      if (isRecord(node.properties)) {
        const required = Array.isArray(node.required) ? (node.required as string[]) : [];
        const props: string[] = [];
        const fields: string[] = [];
        for (const [name, child] of Object.entries(node.properties)) {
          if (!isRecord(child)) throw new SchemaGenerationError(`${owner}.${name}: not a schema`);
          const inner = expression(child, owner, ctx, false, { name, required: required.includes(name) });
          props.push(`${propertyKey(name)}: ${inner.schema}`);
          fields.push(
            `${doc(child.description, "  ")}  ${propertyKey(name)}${required.includes(name) ? "" : "?"}: ${inner.type};`,
          );
        }
        entries.push(`properties: { ${props.join(", ")} }`);
        if (required.length > 0) entries.push(`required: ${JSON.stringify(required)}`);
        type = fields.length === 0 ? "{}" : `{\n${fields.join("\n")}\n}`;
        if (!top) type = type.replaceAll("\n", "\n  ");
      } else if (isRecord(node.additionalProperties)) {
        const values = expression(node.additionalProperties, owner, ctx);
        entries.push(`additionalProperties: ${values.schema}`);
        type = `{ [key: string]: ${values.type} }`;
      } else {
        // No declared fields (FieldsV1, RawExtension): any content, kept as is rather than pruned.
        entries.push(`"x-kubernetes-preserve-unknown-fields": true`);
        type = "Record<string, unknown>";
      }
      break;
    }
    default:
      throw new SchemaGenerationError(`${owner}: type ${JSON.stringify(nodeType)} is not supported`);
  }
  const extensions: Record<string, unknown> = {};
  for (const key of KEPT_EXTENSIONS) if (node[key] !== undefined) extensions[key] = node[key];
  const mapKeys = extensions["x-kubernetes-list-map-keys"];
  const itemsRef = isRecord(node.items) ? refOf(node.items) : undefined;
  if (Array.isArray(mapKeys) && itemsRef !== undefined && !ctx.keysPresent(itemsRef, mapKeys as string[])) {
    // A CRD's list-map keys must be required or defaulted (ServiceAccount.secrets is keyed by an
    // optional ObjectReference.name): keep such a list whole rather than make the key required.
    extensions["x-kubernetes-list-type"] = "atomic";
    delete extensions["x-kubernetes-list-map-keys"];
  }
  for (const [key, value] of Object.entries(extensions))
    entries.push(`${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  if ("default" in node && property !== undefined) {
    // A required list-map key needs no default (Container.name); an optional one does (LocalObjectReference.name).
    if (!isZero(node.default) || (!property.required && ctx.keepDefault(owner, property.name))) {
      entries.push(`default: ${JSON.stringify(node.default)}`);
    }
  }
  if (description !== undefined) entries.push(`description: ${JSON.stringify(description)}`);
  return { schema: `{ ${entries.join(", ")} }`, type };
}
