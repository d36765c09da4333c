/**
 * Type information for server-side apply of custom resources, from their CRD's structural schema, as
 * apiextensions-apiserver builds it for structured-merge-diff (kube-openapi schemaconv):
 * - objects with `properties` are structs, closed unless `x-kubernetes-preserve-unknown-fields`;
 *   `additionalProperties` gives the type of other keys; `x-kubernetes-map-type: atomic` makes the
 *   object one owned value (default granular);
 * - arrays follow `x-kubernetes-list-type`: `atomic` (the default), `set`, or `map` keyed by
 *   `x-kubernetes-list-map-keys` (key defaults from the item schema's `default`);
 * - `x-kubernetes-preserve-unknown-fields` without properties is untyped (maps granular, lists atomic);
 * - `apiVersion`, `kind` and `metadata` (ObjectMeta) are always known at the root.
 */
import { setOwn } from "../machinery/own-properties.ts";
import { DEDUCED, type ListType, type MapType, OBJECT_META, SCALAR, type TypeNode } from "../patch/patch-meta.ts";

/** The subset of a CRD's JSONSchemaProps this conversion reads. */
export interface StructuralSchema {
  type?: string;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema | StructuralSchema[];
  default?: unknown;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: string;
}

function convert(schema: StructuralSchema | undefined): TypeNode {
  if (!schema || typeof schema !== "object") return DEDUCED;
  if (schema["x-kubernetes-int-or-string"]) return SCALAR;
  const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true;
  switch (schema.type) {
    case "object":
      return convertObject(schema, preserve);
    case "array":
      return convertArray(schema);
    case undefined:
      return preserve ? DEDUCED : SCALAR;
    default:
      return SCALAR;
  }
}

function convertObject(schema: StructuralSchema, preserve: boolean): MapType {
  const fields: Record<string, TypeNode> = {};
  // Property names are the CRD author's: `__proto__` is a field like any other.
  for (const [name, sub] of Object.entries(schema.properties ?? {})) setOwn(fields, name, convert(sub));
  if (schema["x-kubernetes-embedded-resource"]) {
    fields["apiVersion"] ??= SCALAR;
    fields["kind"] ??= SCALAR;
    fields["metadata"] = OBJECT_META;
  }
  const additional = schema.additionalProperties;
  let elementType: TypeNode | undefined;
  if (additional && typeof additional === "object") elementType = convert(additional);
  else if (additional === true || preserve) elementType = DEDUCED;
  const node: MapType = {
    kind: "map",
    fields,
    ...(elementType ? { elementType } : {}),
    ...(schema["x-kubernetes-map-type"] === "atomic" ? { atomic: true } : {}),
    ...(elementType ? {} : { closed: true }),
  };
  return node;
}

function convertArray(schema: StructuralSchema): ListType {
  const itemSchema = Array.isArray(schema.items) ? schema.items[0] : schema.items;
  const elementType = convert(itemSchema);
  const listType = schema["x-kubernetes-list-type"];
  if (listType === "map") {
    const keys = schema["x-kubernetes-list-map-keys"] ?? [];
    const keyDefaults: Record<string, unknown> = {};
    for (const k of keys) {
      const d = itemSchema?.properties?.[k]?.default;
      if (d !== undefined) setOwn(keyDefaults, k, d);
    }
    return {
      kind: "list",
      elementType,
      listType: "map",
      keys,
      ...(Object.keys(keyDefaults).length > 0 ? { keyDefaults } : {}),
    };
  }
  if (listType === "set") return { kind: "list", elementType, listType: "set" };
  return { kind: "list", elementType, listType: "atomic" };
}

/** The apply type tree of a custom resource version, from its `openAPIV3Schema` (undefined: untyped object). */
export function typeFromStructuralSchema(schema: StructuralSchema | undefined): TypeNode {
  const root = schema ? convert({ ...schema, type: schema.type ?? "object" }) : DEDUCED;
  if (root.kind !== "map") return root;
  return {
    ...root,
    fields: { ...root.fields, apiVersion: SCALAR, kind: SCALAR, metadata: OBJECT_META },
  };
}
