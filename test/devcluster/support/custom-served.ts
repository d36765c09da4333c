/**
 * A custom kind as the devcluster serves a CRD's version, for tests that register one directly
 * (`server.registry.add(...)`) instead of through a CRD.
 */
import type { ServedResource } from "../../../packages/capstan-dev/src/devcluster/index.ts";

/**
 * Namespaced kind `kind` of `group` v1 (plural: the kind in lower case plus "s"), every verb, no
 * subresources, a schema that keeps unknown fields unless `overrides` says otherwise.
 */
export function customServed(group: string, kind: string, overrides: Partial<ServedResource> = {}): ServedResource {
  const singular = kind.toLowerCase();
  return {
    group,
    version: "v1",
    kind,
    listKind: `${kind}List`,
    plural: `${singular}s`,
    singular,
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    subresources: {},
    generation: "all-but-metadata-and-status",
    custom: true,
    schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    storageBucket: `${group}/${singular}s`,
    ...overrides,
  };
}
