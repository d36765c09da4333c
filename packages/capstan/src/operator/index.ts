/**
 * The operator layer's public surface: `operator()`, Kopf-style handlers, timers, daemons,
 * errors that steer retries, and filters. `src/index.ts` re-exports it.
 */
export type { Diff, DiffEntry } from "./diff.ts";
export { PermanentError, TemporaryError } from "./errors.ts";
export { ABSENT, type Filters, type MetaFilterValue, PRESENT } from "./filters.ts";
export type {
  AdoptOptions,
  ChangeContext,
  DaemonContext,
  DaemonOptions,
  DeleteHandlerOptions,
  EssenceOf,
  EventContext,
  EventHandlerOptions,
  HandlerFn,
  HandlerOptions,
  MergePatchOf,
  ObjectContext,
  ObjectPatch,
  TimerContext,
  TimerOptions,
} from "./handlers.ts";
export type { OperatorNames } from "./naming.ts";
export {
  type ChangeRegistrar,
  DeferredControllerBuilder,
  type OnRegistry,
  Operator,
  type OperatorOptions,
  type OperatorRequirements,
  type OperatorStartOptions,
  type OwnsOptions,
  operator,
} from "./operator.ts";
export type { BookkeepingPoint, OperatorTestHooks } from "./processing.ts";
export type { ProgressRecord, Purpose } from "./progress.ts";
