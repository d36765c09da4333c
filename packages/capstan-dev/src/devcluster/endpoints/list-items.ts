/**
 * The items of a list as kube-apiserver encodes them. A built-in kind's list is a typed Go list whose
 * items have an empty TypeMeta, so they carry no `kind` or `apiVersion`; a custom resource's list is
 * unstructured and its items keep both. (Watch events, Tables and PartialObjectMetadataLists set them.)
 */
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";

/** One serialized item (as the store presents it) ready to splice into the list's JSON. */
export function listItemJson(served: ServedResource, data: string): string {
  if (served.custom) return data;
  // Stored objects start with apiVersion and kind (rest/encoding.ts): cut them without parsing.
  const head = typeMetaHead(served);
  if (data.startsWith(head)) return `{${data.slice(head.length)}`;
  return JSON.stringify(listItemObject(served, JSON.parse(data) as JsonObject));
}

/** One decoded item, for lists built as objects (deletecollection's answer). */
export function listItemObject(served: ServedResource, obj: JsonObject): JsonObject {
  if (served.custom) return obj;
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = obj;
  return rest as JsonObject;
}

const heads = new WeakMap<ServedResource, string>();
function typeMetaHead(served: ServedResource): string {
  let head = heads.get(served);
  if (head === undefined) {
    head = `{"apiVersion":${JSON.stringify(groupVersion(served))},"kind":${JSON.stringify(served.kind)},`;
    heads.set(served, head);
  }
  return head;
}
