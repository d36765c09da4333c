/**
 * Metadata-only responses (`Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`):
 * what controller-runtime's metadata informers and `kubectl get` with `--output=name` style clients
 * ask for to skip spec and status. kube-apiserver answers get/watch objects as PartialObjectMetadata
 * and lists as PartialObjectMetadataList, keeping the whole `metadata` (managedFields included).
 */

/** `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`, as the client asked. */
export type MetadataApiVersion = `meta.k8s.io/${"v1" | "v1beta1"}`;

/**
 * The last conversion: a watch event fans out to every metadata watcher with the same stored string,
 * so one entry spares re-parsing the object once per watcher.
 */
let last: { data: string; apiVersion: string; out: string } | undefined;

/** One stored object (serialized) as a serialized PartialObjectMetadata. */
export function partialObjectMetadata(data: string, apiVersion: MetadataApiVersion): string {
  if (last !== undefined && last.data === data && last.apiVersion === apiVersion) return last.out;
  const { metadata } = JSON.parse(data) as { metadata?: unknown };
  const out = `{"kind":"PartialObjectMetadata","apiVersion":"${apiVersion}","metadata":${JSON.stringify(metadata ?? {})}}`;
  last = { data, apiVersion, out };
  return out;
}

/** A list page as a serialized PartialObjectMetadataList. */
export function partialObjectMetadataList(
  listMeta: Record<string, unknown>,
  items: readonly string[],
  apiVersion: MetadataApiVersion,
): string {
  const converted = items.map((d) => partialObjectMetadata(d, apiVersion));
  return `{"kind":"PartialObjectMetadataList","apiVersion":"${apiVersion}","metadata":${JSON.stringify(listMeta)},"items":[${converted.join(",")}]}`;
}
