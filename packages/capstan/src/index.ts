/**
 * Capstan: Kubernetes operators in TypeScript.
 *
 * ```ts
 * import { Type, defineResource, operator } from "capstan";
 * import { ConfigMap } from "capstan/core";
 * ```
 *
 * This module is the operator author's public API: define resources, write controllers and
 * handlers, talk to the API. `capstan/core` has the typed built-in kinds and `capstan-dev/testing`
 * the embedded test cluster. Everything not exported here is internal and may change.
 */

// TypeBox, so a resource is defined with one import.
export { type Static, Type } from "typebox";

// Client: configuration, typed API access, errors.
export { type ClientConfig, ConfigError, loadClientConfig } from "./client/config.ts";
export {
  ApiError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isServerTimeout,
  isTooManyRequests,
  isUnauthorized,
} from "./client/errors.ts";
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
// Operator: operator(), Kopf-style handlers, timers, daemons.
export * from "./operator/index.ts";
// Resources: defineResource, CRDs, RBAC.
export * from "./resources/index.ts";
// Runtime: controllers, manager and the primitives they are built from.
export {
  type CacheReader,
  CONTROLLER_OWNER_INDEX,
  type IndexFunc,
  NAMESPACE_INDEX,
  OWNER_INDEX,
  objectKey,
  Store,
  splitObjectKey,
} from "./runtime/cache.ts";
export {
  Controller,
  type ControllerOptions,
  type ReconcileContext,
  type ReconcileFunction,
} from "./runtime/controller.ts";
export { ControllerBuilder } from "./runtime/controller-builder.ts";
export { type CrdAction, type EnsureCrdsOptions, ensureCrds } from "./runtime/crd-registration.ts";
export { type Duration, toMilliseconds } from "./runtime/duration.ts";
export { ApiEventRecorder, EVENT_KIND, type EventRecorder, type EventType } from "./runtime/event-recorder.ts";
export {
  DeletedFinalStateUnknown,
  Informer,
  type InformerEventHandler,
  type InformerPhase,
} from "./runtime/informer.ts";
export { type LeaderElectionOptions, LeaderElector, type LeaseApi } from "./runtime/leader-election.ts";
export {
  LEASE_KIND,
  type LeaderElectionConfig,
  LeadershipLostError,
  Manager,
  type ManagerOptions,
  type ManagerState,
} from "./runtime/manager.ts";
export { RuntimeMetrics } from "./runtime/metrics.ts";
/** Predicate factories and combinators: `predicates.and(...)`, `predicates.not(...)`. */
export * as predicates from "./runtime/predicates.ts";
export {
  annotationsChanged,
  type EventPredicate,
  generationChanged,
  labelsChanged,
  matching,
  type Predicate,
  resourceVersionChanged,
} from "./runtime/predicates.ts";
export {
  defaultControllerRateLimiter,
  exponentialFailureRateLimiter,
  maxOf,
  type RateLimiter,
  tokenBucketRateLimiter,
} from "./runtime/rate-limiter.ts";
export {
  type DeletedObject,
  isDeleted,
  type ObjectRef,
  type ReconcileResult,
  type ReconcileTarget,
  TerminalError,
} from "./runtime/reconcile.ts";
export { clientListerWatchers, SharedInformerFactory } from "./runtime/shared-informers.ts";
export { WorkQueue, type WorkQueueMetrics } from "./runtime/workqueue.ts";
