/**
 * Pruning of fields a structural schema does not know, as kube-apiserver does when it decodes a
 * custom object (apiextensions-apiserver `pkg/apiserver/schema/pruning/algorithm.go`,
 * `defaulting/prunenulls.go`, and the metadata round trip of customresource_handler.go).
 *
 * Expected flow (decode of a create/update body): `applyDefaults` (schema-default.ts) first, then
 * `pruneUnknownFields`, then validation. The real server defaults during decoding and prunes after.
 *
 * Guarantees: mutates `obj` in place; returns the removed fields' paths, sorted, in the server's
 * unknown-field form (`spec.foo`, `spec.items[0].bar`, `metadata.foo`) for `fieldValidation`
 * warnings/errors (`unknown field "spec.foo"`).
 * - `x-kubernetes-preserve-unknown-fields` keeps unknown fields at that node but still prunes inside
 *   the properties it does specify.
 * - The root and every `x-kubernetes-embedded-resource` keep `apiVersion`, `kind` and `metadata`;
 *   `metadata` itself keeps only ObjectMeta's fields.
 * - Non-nullable nulls without a default are removed (PruneNonNullableNullsWithoutDefaults).
 */

import { OBJECT_META_FIELDS } from "../machinery/object-meta-fields.ts";
import { sanitizeSchema } from "./schema-sanitize.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

const META_FIELDS = new Set(["apiVersion", "kind", "metadata"]);

/** The JSON fields of metav1.ObjectMeta; anything else in `metadata` is dropped when decoding. */
const OBJECT_META_FIELD_SET = new Set(OBJECT_META_FIELDS);

type Json = Record<string, unknown>;

function isMap(x: unknown): x is Json {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/** The structural view of additionalProperties: a schema, or present-without-schema (a boolean). */
function additional(s: JSONSchemaProps): { schema: JSONSchemaProps | undefined } | undefined {
  const ap = s.additionalProperties;
  if (ap === undefined || ap === null) return undefined;
  return { schema: typeof ap === "boolean" ? undefined : ap };
}

function itemsOf(s: JSONSchemaProps | undefined): JSONSchemaProps | undefined {
  const items = s?.items;
  return items && !Array.isArray(items) ? items : undefined;
}

class Pruner {
  readonly unknown: string[] = [];
  /** Unknown fields of the root metadata and of embedded resources' metadata, reported apart as Go does. */
  readonly rootMetaUnknown: string[] = [];
  readonly embeddedMetaUnknown: string[] = [];

  /** `objectMetaRoundTrip`: also drop non-ObjectMeta fields of kept metadata (the decode path does; Prune alone does not). */
  constructor(private readonly objectMetaRoundTrip: boolean) {}

  private join(parent: string, key: string): string {
    return parent === "" ? key : `${parent}.${key}`;
  }

  prune(x: unknown, s: JSONSchemaProps | undefined, embedded: boolean, path: string): void {
    if (s?.["x-kubernetes-preserve-unknown-fields"]) {
      this.skipPrune(x, s, embedded, path);
      return;
    }
    if (isMap(x)) {
      if (s === undefined) {
        for (const k of Object.keys(x)) {
          this.unknown.push(this.join(path, k));
          delete x[k];
        }
        return;
      }
      const isEmbedded = embedded || s["x-kubernetes-embedded-resource"] === true;
      const ap = additional(s);
      for (const k of Object.keys(x)) {
        if (isEmbedded && META_FIELDS.has(k)) {
          if (k === "metadata") this.pruneMetadata(x[k], this.join(path, k));
          continue;
        }
        const prop = s.properties?.[k];
        if (prop) this.prune(x[k], prop, false, this.join(path, k));
        else if (ap) this.prune(x[k], ap.schema, false, this.join(path, k));
        else {
          if (!META_FIELDS.has(k) || path !== "") this.unknown.push(this.join(path, k));
          delete x[k];
        }
      }
    } else if (Array.isArray(x)) {
      const items = s === undefined ? undefined : itemsOf(s);
      for (let i = 0; i < x.length; i++) this.prune(x[i], items, false, `${path}[${i}]`);
    }
  }

  private skipPrune(x: unknown, s: JSONSchemaProps, embedded: boolean, path: string): void {
    if (isMap(x)) {
      const ap = additional(s);
      for (const k of Object.keys(x)) {
        if ((embedded || s["x-kubernetes-embedded-resource"]) && META_FIELDS.has(k)) {
          if (k === "metadata") this.pruneMetadata(x[k], this.join(path, k));
          continue;
        }
        const prop = s.properties?.[k];
        if (prop) this.prune(x[k], prop, false, this.join(path, k));
        else if (ap) this.prune(x[k], ap.schema, false, this.join(path, k));
      }
    } else if (Array.isArray(x)) {
      const items = itemsOf(s);
      if (items) for (let i = 0; i < x.length; i++) this.skipPrune(x[i], items, false, `${path}[${i}]`);
    }
  }

  /** The ObjectMeta round trip: fields ObjectMeta does not have are dropped. */
  private pruneMetadata(meta: unknown, path: string): void {
    if (!this.objectMetaRoundTrip || !isMap(meta)) return;
    for (const k of Object.keys(meta)) {
      if (!OBJECT_META_FIELD_SET.has(k)) {
        (path === "metadata" ? this.rootMetaUnknown : this.embeddedMetaUnknown).push(this.join(path, k));
        delete meta[k];
      }
    }
  }
}

function isNonNullableNonDefaultableNull(x: unknown, s: JSONSchemaProps | undefined): boolean {
  return x === null && s !== undefined && s.nullable !== true && (s.default === undefined || s.default === null);
}

/** PruneNonNullableNullsWithoutDefaults: drops `null` map values whose schema is neither nullable nor defaulted. */
export function pruneNonNullableNulls(x: unknown, s: JSONSchemaProps | undefined): void {
  pruneNulls(x, s === undefined ? undefined : sanitizeSchema(s));
}

function pruneNulls(x: unknown, s: JSONSchemaProps | undefined): void {
  if (isMap(x)) {
    for (const k of Object.keys(x)) {
      const child = s === undefined ? undefined : (s.properties?.[k] ?? additional(s)?.schema);
      if (isNonNullableNonDefaultableNull(x[k], child)) delete x[k];
      else pruneNulls(x[k], child);
    }
  } else if (Array.isArray(x)) {
    const items = itemsOf(s);
    for (const v of x) pruneNulls(v, items);
  }
}

/**
 * Removes, in place, every field of the custom object `obj` its schema does not specify, then the
 * non-nullable nulls without defaults. Returns the removed unknown fields' paths in the order the
 * server lists them: the root metadata's, then the pruned ones sorted, then embedded metadata's.
 */
export function pruneUnknownFields(schema: JSONSchemaProps | undefined, obj: unknown): string[] {
  const pruner = new Pruner(true);
  const s = sanitizeSchema(schema ?? {});
  // The resource root is always treated as an embedded resource (PruneWithOptions isResourceRoot).
  pruner.prune(obj, s, true, "");
  pruneNulls(obj, s);
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [
    ...pruner.rootMetaUnknown.sort(byName),
    ...pruner.unknown.sort(byName),
    ...pruner.embeddedMetaUnknown.sort(byName),
  ];
}

/**
 * Go's pruning.Prune alone: removes unknown fields of `value` in place, keeping apiVersion/kind/metadata
 * when `isResourceRoot` (used to check that CRD defaults carry no unknown fields).
 */
export function pruneSchemaValue(schema: JSONSchemaProps, value: unknown, isResourceRoot: boolean): void {
  new Pruner(false).prune(value, sanitizeSchema(schema), isResourceRoot, "");
}
