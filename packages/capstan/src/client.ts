/**
 * `capstan/client`: the Kubernetes client in full — configuration (kubeconfig, in-cluster), the
 * client's and each call's options, list, watch and metadata types, and every error and its `is*`
 * helper. The names an operator uses most (`KubeClient`, `ApiError`, `isNotFound`, ...) are also in
 * `capstan`.
 */
export {
  type ClientConfig,
  ConfigError,
  inClusterConfig,
  type LoadConfigOptions,
  loadClientConfig,
  type TlsConfig,
} from "./client/config.ts";
export { ConnectionError, type ConnectionFailure, isConnectionError } from "./client/connection-error.ts";
export { CredentialError, isCredentialError } from "./client/credential-error.ts";
export {
  type ClientCertificate,
  type Credentials,
  type HeaderRecord,
  StaticCredentials,
} from "./client/credentials.ts";
export { DecodeError, isDecodeError } from "./client/decode-error.ts";
export {
  ApiError,
  isAlreadyExists,
  isApiError,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isServerTimeout,
  isTooManyRequests,
  isUnauthorized,
} from "./client/errors.ts";
export { isRequestError, RequestError } from "./client/request-error.ts";
export {
  type ApplyOptions,
  type CallOptions,
  type DeleteOptions,
  KubeClient,
  type KubeClientOptions,
  type MetadataClient,
  type PartialObjectMetadata,
  type PatchOptions,
  type PatchType,
  type ResourceClient,
  type ResponseObserver,
  type WriteOptions,
} from "./client/resource-client.ts";
export { isNoKindMatch, NoKindMatchError } from "./client/rest-mapper.ts";
export { TransportError, type TransportErrorCode } from "./client/transport-error.ts";
export type {
  KubeObject,
  ListerWatcher,
  ListOptions,
  ObjectList,
  ObjectMeta,
  ResourceKind,
  Status,
  WatchEvent,
  WatchOptions,
} from "./client/types.ts";
export { isWatchError, WatchError } from "./client/watch-error.ts";
export type { ObservedWrite, WriteObserver, WriteResult } from "./client/write-observer.ts";
