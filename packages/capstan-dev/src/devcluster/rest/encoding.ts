/**
 * How the store encodes objects: key order as the real server prints them (apiVersion, kind, metadata in
 * ObjectMeta's field order), and a stored object presented in the version a client asked for.
 */
import { OBJECT_META_FIELDS } from "../machinery/object-meta-fields.ts";
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";

/**
 * The serialized object as `served`'s version shows it. Versions of one resource share storage; with
 * no conversion webhook (CRD conversion strategy None) only apiVersion differs.
 */
export function present(served: ServedResource, data: string): string {
  // Versions converted by a webhook are shown in the storage version here; the store's asynchronous
  // reads convert them (rest/webhook-converted.ts).
  if (served.webhookConversion) return present(served.webhookConversion.storage, data);
  if (served.conversion) return serialize(served.conversion.fromStorage(JSON.parse(data) as JsonObject));
  const apiVersion = groupVersion(served);
  if (data.startsWith(presentedHead(apiVersion))) return data;
  const obj = JSON.parse(data) as JsonObject;
  return serialize({ ...obj, apiVersion });
}

/** `{"apiVersion":"<v>",` per apiVersion, built once: every read and write response checks it. */
const presentedHeads = new Map<string, string>();
function presentedHead(apiVersion: string): string {
  let head = presentedHeads.get(apiVersion);
  if (head === undefined) {
    head = `{"apiVersion":${JSON.stringify(apiVersion)},`;
    presentedHeads.set(apiVersion, head);
  }
  return head;
}

/** apiVersion, kind, metadata first, metadata keys in ObjectMeta's field order: the JSON the real server prints. */
export function normalize(obj: JsonObject): JsonObject {
  const { apiVersion, kind, metadata, ...rest } = obj;
  const meta: Record<string, unknown> = {};
  const source = (metadata ?? {}) as Record<string, unknown>;
  for (const key of OBJECT_META_FIELDS) if (source[key] !== undefined) meta[key] = source[key];
  for (const key of Object.keys(source)) if (!(key in meta) && source[key] !== undefined) meta[key] = source[key];
  return { apiVersion, kind, metadata: meta, ...rest };
}

export function serialize(obj: JsonObject): string {
  return JSON.stringify(normalize(obj));
}
