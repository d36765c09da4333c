/**
 * The client's old module path, kept so that existing imports work: `KubeClient` now lives in
 * kube-client.ts, the typed resource client in typed-resource-client.ts and the call options in
 * options.ts. Import from those; this module only re-exports them.
 */
export {
  KubeClient,
  type KubeClientOptions,
  type ResponseObserver,
} from "./kube-client.ts";
export type {
  ApplyOptions,
  CallOptions,
  DeleteOptions,
  PatchOptions,
  PatchType,
  RequestOptions,
  WriteOptions,
} from "./options.ts";
export type {
  MetadataClient,
  PartialObjectMetadata,
  ResourceClient,
} from "./typed-resource-client.ts";
