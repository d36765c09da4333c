/**
 * The embedded Kubernetes API server (devcluster). Start one with {@link startApiServer}; it serves
 * HTTPS with its own CA, answers real kubectl, and stops cleanly.
 */

export type {
  AccessRecorder,
  RecordedAccess,
  RecordedRequest,
  RecordedResourceRequest,
  RecordedUrlRequest,
} from "./auth/access-recorder.ts";
export type {
  FailureOptions,
  FaultCounts,
  FaultFilter,
  FaultInjector,
  FaultState,
  LatencySpec,
  RestartResult,
} from "./faults/fault-injector.ts";
export type { ClusterChange, ResourceRef } from "./in-process-api.ts";
export { InProcessApi } from "./in-process-api.ts";
export { ResourceRegistry } from "./registry/registry.ts";
export type { ServedResource } from "./registry/served-resource.ts";
export type {
  ApiServer,
  ApiServerOptions,
  NonResourceHandler,
  PluginContext,
  ServerInternals,
  ServerPlugin,
} from "./server.ts";
export { startApiServer } from "./server.ts";
export { discardDataDir } from "./storage/data-dir.ts";
export { DataDirInUseError } from "./storage/file-storage.ts";
