/**
 * Capstan: Kubernetes operators in TypeScript.
 *
 * ```ts
 * import { Type, defineResource, operator } from "capstan";
 * import { ConfigMap } from "capstan/core";
 * ```
 *
 * This entry point is what an operator author uses: define a resource, write a controller or
 * Kopf-style handlers, talk to the API, tell its errors apart. The other entry points:
 * - `capstan/core`: typed built-in kinds (`ConfigMap`, `Pod`, `Deployment`, ...);
 * - `capstan/client`: the client's configuration, options, list/watch types and every error helper;
 * - `capstan/runtime`: the primitives controllers are built from (manager, informers, work queue,
 *   rate limiters, predicates, leader election, metrics, CRD registration);
 * - `capstan/resources`: CRD and RBAC generation, schema translation;
 * - `capstan-dev/testing` (the capstan-dev package): the embedded test cluster.
 * Everything not exported by an entry point is internal and may change.
 */

// TypeBox, so a resource is defined with one import.
export { type Static, Type } from "typebox";

// The API: client, objects, the errors a reconcile or handler checks most.
export {
  ApiError,
  isAlreadyExists,
  isApiError,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
} from "./client/errors.ts";
export { KubeClient, type ResourceClient } from "./client/resource-client.ts";
export type { KubeObject, ObjectMeta, ResourceKind } from "./client/types.ts";
// Admission handlers (`op.on.validate`, `op.on.mutate`) and the webhook server that serves them.
export type { AdmissionHandlerOptions, AdmissionWebhook } from "./operator/admission-handlers.ts";
// Conversion webhooks (`op.convert`) between the versions of a kind.
export type { ConversionWebhook } from "./operator/conversion-handlers.ts";
// Kopf-style handlers and the operator that runs them (and its controllers).
export { PermanentError, TemporaryError } from "./operator/errors.ts";
export { ABSENT, type Filters, PRESENT } from "./operator/filters.ts";
export type {
  ChangeContext,
  DaemonContext,
  DaemonOptions,
  EventContext,
  HandlerOptions,
  ObjectContext,
  ObjectPatch,
  TimerContext,
  TimerOptions,
} from "./operator/handlers.ts";
export { Operator, type OperatorOptions, operator } from "./operator/operator.ts";
export type { Defaulter, ValidationResult, Validator } from "./operator/typed-admission.ts";
// Status conditions (metav1.Condition): the schema and apimachinery's helpers.
export {
  Condition,
  type ConditionStatus,
  Conditions,
  type ConditionsUpdate,
  findCondition,
  isConditionFalse,
  isConditionTrue,
  type NewCondition,
  removeCondition,
  setCondition,
} from "./resources/conditions.ts";
export { type ToCrdOptions, toCrd } from "./resources/crd.ts";
// Resources: defined once, giving types, CRD and validation.
export { defineResource } from "./resources/define-resource.ts";
export { Kube } from "./resources/kube-extensions.ts";
export { needs } from "./resources/rbac.ts";
export type {
  CustomObject,
  CustomResource,
  ObjectOf,
  PrinterColumn,
  SpecOf,
  StatusOf,
} from "./resources/resource-types.ts";
// Level-triggered reconcilers.
export type { ReconcileContext, ReconcileFunction } from "./runtime/controller.ts";
export { type Duration, toMilliseconds } from "./runtime/duration.ts";
export {
  type DeletedObject,
  isDeleted,
  type ReconcileResult,
  type ReconcileTarget,
  TerminalError,
} from "./runtime/reconcile.ts";
// What the operator did, run by run (the dashboard's reconcile timeline).
export {
  type ClientWrite,
  observeReconciles,
  type ReconcileObserver,
  type ReconcileRun,
  type RunObject,
  type RunOutcome,
} from "./runtime/run-trace.ts";
// Sharding an operator over its replicas (operator().start({ sharding }), capstan run --sharded).
export type { ShardAdmissionConfig } from "./runtime/shard-admission.ts";
export type { ShardingConfig } from "./runtime/sharding.ts";
export {
  type AdmissionContext,
  AdmissionDenied,
  type MutatingHandler,
  type ValidatingHandler,
} from "./webhooks/admission.ts";
export type { SpokeConversion } from "./webhooks/conversion.ts";
export type { WebhookServerOptions } from "./webhooks/webhook-server.ts";
