/**
 * Field descriptions that live outside the TypeBox schemas (the TSDoc comments of an operator's
 * source, read by `capstan generate`), and how they are written into a kind's CRD.
 *
 * Guarantees:
 * - A description already in the CRD (TypeBox's `description` option, or one Capstan writes itself,
 *   like `status.capstan`'s) is never replaced: the explicit option wins over a comment.
 * - Only `description` keys are added, and only where the schema has the field they describe
 *   (`properties`, `items`, `additionalProperties`), never inside `anyOf`/`allOf`, where a
 *   structural schema may not have one: the CRD stays structural.
 */
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import type { KubeSchema } from "./kube-schema.ts";

/** Descriptions for one schema node and the nodes under it, in the shape of the schema. */
export interface SchemaDescriptions {
  description?: string;
  properties?: Record<string, SchemaDescriptions>;
  items?: SchemaDescriptions;
  additionalProperties?: SchemaDescriptions;
}

/** The descriptions of one kind, found by its group and kind. */
export interface KindDescriptions {
  /** The kind's group; unknown when the source does not spell it as a literal. */
  group?: string;
  kind: string;
  /**
   * Per version name, the root object schema's descriptions (its own: the kind's; `spec`, `status`
   * under `properties`). `"*"` stands for every version not named.
   */
  versions: Record<string, SchemaDescriptions>;
}

/**
 * A copy of `crd` with the descriptions of its kind (the first of `descriptions` with its group and
 * kind) added where the CRD has none; `crd` itself when there are none for it.
 */
export function describeCrd(
  crd: CustomResourceDefinition,
  descriptions: readonly KindDescriptions[],
): CustomResourceDefinition {
  const found = descriptions.find(
    (d) => d.kind === crd.spec.names.kind && (d.group === undefined || d.group === crd.spec.group),
  );
  if (found === undefined) return crd;
  const copy = structuredClone(crd);
  for (const version of copy.spec.versions) {
    const tree = found.versions[version.name] ?? found.versions["*"];
    const schema = version.schema?.openAPIV3Schema as KubeSchema | undefined;
    if (tree !== undefined && schema !== undefined) fill(schema, tree);
  }
  return copy;
}

function fill(schema: KubeSchema, tree: SchemaDescriptions): void {
  if (tree.description !== undefined && tree.description !== "" && schema.description === undefined) {
    setDescription(schema, tree.description);
  }
  for (const [name, sub] of Object.entries(tree.properties ?? {})) {
    const property = schema.properties?.[name];
    if (property !== undefined) fill(property, sub);
  }
  if (tree.items !== undefined && isSchema(schema.items)) fill(schema.items, tree.items);
  if (tree.additionalProperties !== undefined && isSchema(schema.additionalProperties)) {
    fill(schema.additionalProperties, tree.additionalProperties);
  }
}

/** Puts `description` after `type`, where the translator writes an explicit one, so a reader finds both alike. */
function setDescription(schema: KubeSchema, description: string): void {
  const entries = Object.entries(schema);
  const at = entries.findIndex(([key]) => key === "type") + 1;
  entries.splice(at, 0, ["description", description]);
  for (const key of Object.keys(schema)) delete (schema as Record<string, unknown>)[key];
  Object.assign(schema, Object.fromEntries(entries));
}

function isSchema(value: unknown): value is KubeSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
