/**
 * The OpenAPI v3 schema of a kind, self-contained (no `$ref`), for the page's generated forms.
 *
 * - A custom kind's schema is its CRD version's `openAPIV3Schema`, read from the CRD feed.
 * - A built-in kind's schema comes from the API server's `/openapi/v3`: the discovery index names
 *   the group-version's document, whose `components.schemas` entry tagged with the kind's
 *   `x-kubernetes-group-version-kind` is the object; its `$ref`s are inlined here.
 *
 * Guarantees: the result has no `$ref`; a type that refers to itself (JSONSchemaProps) is cut at
 * the second visit and becomes `x-kubernetes-preserve-unknown-fields` (edited as YAML), and the tree
 * is cut at {@link MAX_SCHEMA_DEPTH} levels the same way. Built-in documents are fetched once per
 * group-version and kept until the dashboard stops (built-in kinds do not change under it).
 */
import type { KubeClient } from "capstan";
import type { ClusterView } from "./cluster-view.ts";
import type { DashboardKind } from "./kinds.ts";

/** An OpenAPI v3 schema node, as loose as the documents are. */
export type Schema = Record<string, unknown>;

/**
 * Deeper than any form a person fills in (a Pod's container's probe's httpGet's headers are 8
 * levels): past it the page offers the YAML tab, and a runaway document cannot blow the stack.
 */
export const MAX_SCHEMA_DEPTH = 14;

interface OpenApiIndex {
  paths?: Record<string, { serverRelativeURL?: string }>;
}
interface OpenApiDocument {
  components?: { schemas?: Record<string, Schema> };
}

/** Looks up kinds' schemas; one per dashboard. */
export class KindSchemas {
  readonly #documents = new Map<string, Promise<OpenApiDocument>>();

  constructor(
    private readonly view: ClusterView,
    private readonly client: KubeClient,
  ) {}

  /** The schema of `kind`'s objects; rejects with the cluster's error when it cannot be read. */
  async schemaOf(kind: DashboardKind, signal: AbortSignal): Promise<Schema> {
    if (!kind.builtin) return this.#crdSchema(kind);
    const doc = await this.#document(kind, signal);
    const schemas = doc.components?.schemas ?? {};
    const name = Object.keys(schemas).find((n) => tagsKind(schemas[n] as Schema, kind));
    if (name === undefined) throw new Error(`the server's OpenAPI document has no schema for ${kind.kind}`);
    return inlineRefs(schemas[name] as Schema, schemas, [name], 0);
  }

  #crdSchema(kind: DashboardKind): Schema {
    for (const crd of this.view.crds.objects()) {
      const spec = crd.spec;
      if (spec?.group !== kind.group || spec.names?.kind !== kind.kind) continue;
      const version = spec.versions?.find((v) => v.name === kind.version) as
        | { schema?: { openAPIV3Schema?: Schema } }
        | undefined;
      return version?.schema?.openAPIV3Schema ?? { type: "object", "x-kubernetes-preserve-unknown-fields": true };
    }
    throw new Error(`no CustomResourceDefinition serves ${kind.kind}.${kind.group}`);
  }

  #document(kind: DashboardKind, signal: AbortSignal): Promise<OpenApiDocument> {
    const gv = kind.group === "" ? `api/${kind.version}` : `apis/${kind.group}/${kind.version}`;
    let doc = this.#documents.get(gv);
    if (doc === undefined) {
      doc = (async () => {
        const index = await this.client.request<OpenApiIndex>("GET", "/openapi/v3", { signal });
        const url = index.paths?.[gv]?.serverRelativeURL ?? `/openapi/v3/${gv}`;
        return this.client.request<OpenApiDocument>("GET", url, { signal });
      })();
      // A failure (server down, 403) is not kept: the next form tries again.
      doc.catch(() => this.#documents.delete(gv));
      this.#documents.set(gv, doc);
    }
    return doc;
  }
}

function tagsKind(schema: Schema, kind: DashboardKind): boolean {
  const gvks = schema["x-kubernetes-group-version-kind"];
  return (
    Array.isArray(gvks) &&
    gvks.some(
      (g: { group?: string; version?: string; kind?: string }) =>
        (g.group ?? "") === kind.group && g.version === kind.version && g.kind === kind.kind,
    )
  );
}

const REF_PREFIX = "#/components/schemas/";

/** `schema` with every `$ref` (also the `allOf: [{ $ref }]` wrapping kube uses) replaced by its target. */
function inlineRefs(schema: Schema, all: Record<string, Schema>, seen: string[], depth: number): Schema {
  if (depth > MAX_SCHEMA_DEPTH) return opaque(schema);
  let node = schema;
  const ref = refOf(node);
  if (ref !== undefined) {
    const target = all[ref];
    if (target === undefined || seen.includes(ref)) return opaque(node);
    const { $ref: _r, allOf: _a, ...rest } = node;
    return inlineRefs({ ...target, ...rest }, all, [...seen, ref], depth);
  }
  node = { ...node };
  const props = node.properties as Record<string, Schema> | undefined;
  if (props !== undefined) {
    node.properties = Object.fromEntries(
      Object.entries(props).map(([k, v]) => [k, inlineRefs(v, all, seen, depth + 1)]),
    );
  }
  if (isSchema(node.items)) node.items = inlineRefs(node.items, all, seen, depth + 1);
  if (isSchema(node.additionalProperties)) {
    node.additionalProperties = inlineRefs(node.additionalProperties, all, seen, depth + 1);
  }
  return node;
}

function refOf(node: Schema): string | undefined {
  const direct = typeof node.$ref === "string" ? node.$ref : undefined;
  const wrapped = Array.isArray(node.allOf) && node.allOf.length === 1 ? (node.allOf[0] as Schema).$ref : undefined;
  const ref = direct ?? (typeof wrapped === "string" ? wrapped : undefined);
  return ref?.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
}

/** A node the form does not descend into: edited in the YAML tab. */
function opaque(node: Schema): Schema {
  const description = typeof node.description === "string" ? { description: node.description } : {};
  return { ...description, "x-kubernetes-preserve-unknown-fields": true };
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
