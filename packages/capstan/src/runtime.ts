/**
 * `capstan/runtime`: the primitives controllers are built from, each usable alone — the manager
 * (leader election, health, metrics, shutdown), controllers and their builder, informers and their
 * caches and indexes, the work queue and its rate limiters, predicates, leader election, events, CRD
 * registration, the clock every delay follows and the idleness tests wait for — and the operator's
 * lower-level pieces (its controller builder, start options, requirements). An operator written
 * with `operator()` needs none of it; a controller-runtime style program (`new Manager(...)`)
 * starts here.
 */

// The operator's lower-level pieces.
export type { Diff, DiffEntry } from "./operator/diff.ts";
export type { MetaFilterValue } from "./operator/filters.ts";
export type {
  AdoptOptions,
  DeleteHandlerOptions,
  EssenceOf,
  EventHandlerOptions,
  HandlerFn,
  MergePatchOf,
  ObjectPatch,
} from "./operator/handlers.ts";
export type { OperatorNames } from "./operator/naming.ts";
export {
  type ChangeRegistrar,
  DeferredControllerBuilder,
  type OnRegistry,
  type OperatorRequirements,
  type OperatorStartOptions,
  type OwnsOptions,
} from "./operator/operator.ts";
export type { ProgressRecord, Purpose } from "./operator/progress.ts";
export {
  type CacheReader,
  CONTROLLER_OWNER_INDEX,
  type IndexFunc,
  NAMESPACE_INDEX,
  OWNER_INDEX,
  objectKey,
  Store,
  type StoreOptions,
  splitObjectKey,
  type TransformFunc,
} from "./runtime/cache.ts";
export { type Clock, systemClock } from "./runtime/clock.ts";
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
export { DEFAULT_VIRTUAL_NODES, HashRing, type ShardKey, shardKeyText } from "./runtime/hash-ring.ts";
export { type ActivityTracker, Idleness, NotIdleError, type WhenIdleOptions } from "./runtime/idleness.ts";
export {
  DeletedFinalStateUnknown,
  Informer,
  type InformerConnection,
  type InformerEventHandler,
  type InformerPhase,
  RECONNECT_BACKOFF,
} from "./runtime/informer.ts";
export {
  LEADER_ELECTION_DEFAULTS,
  type LeaderElectionOptions,
  type LeaderElectionTimings,
  LeaderElector,
  type LeaseApi,
  leaderElectionTimings,
} from "./runtime/leader-election.ts";
export {
  LEASE_KIND,
  type LeaderElectionConfig,
  LeadershipLostError,
  Manager,
  type ManagerOptions,
  type ManagerState,
} from "./runtime/manager.ts";
export { RuntimeMetrics } from "./runtime/metrics.ts";
export {
  type DelegatedAuthOptions,
  type MetricsFilter,
  type MetricsFilterContext,
  type MetricsFilterProvider,
  type ReviewedUser,
  withAuthenticationAndAuthorization,
} from "./runtime/metrics-auth.ts";
export type { MetricsEndpoint, MetricsServerOptions } from "./runtime/metrics-server.ts";
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
  type ReconcileOutcome,
  type ReconcileResult,
  type ReconcileTarget,
  TerminalError,
} from "./runtime/reconcile.ts";
export {
  type ClientWrite,
  MAX_WRITES_PER_RUN,
  observeReconciles,
  type ReconcileObserver,
  type ReconcileRun,
  type RunObject,
  type RunOutcome,
} from "./runtime/run-trace.ts";
export {
  type AdmittedObject,
  DEFAULT_SHARD_ADMISSION_TIMEOUT,
  ShardAdmission,
  type ShardAdmissionConfig,
  type ShardAdmissionOptions,
} from "./runtime/shard-admission.ts";
export {
  COORDINATOR_WORKERS,
  type CoordinatorObserver,
  type CoordinatorState,
  type RingKind,
  ShardCoordinator,
  type ShardCoordinatorOptions,
} from "./runtime/shard-coordinator.ts";
export { type KeyReleaser, ShardHandOver, type ShardHandOverOptions } from "./runtime/shard-handover.ts";
export {
  assignedMember,
  DRAIN_LABEL_PREFIX,
  isDraining,
  memberSelector,
  RING_LEASE_LABEL,
  SHARD_LABEL_PREFIX,
  type ShardLabels,
  shardLabels,
} from "./runtime/shard-labels.ts";
export {
  LiveMembers,
  memberLeaseName,
  type ShardLeaseTimings,
  type ShardMemberState,
  ShardMembership,
  type ShardMembershipOptions,
} from "./runtime/shard-membership.ts";
export { Sharding, type ShardingConfig, ShardMembershipLostError } from "./runtime/sharding.ts";
export { clientListerWatchers, SharedInformerFactory } from "./runtime/shared-informers.ts";
export {
  informerCheckName,
  WATCH_HEALTH_DEFAULTS,
  type WatchHealthOptions,
} from "./runtime/watch-health.ts";
export { WorkQueue, type WorkQueueMetrics } from "./runtime/workqueue.ts";
