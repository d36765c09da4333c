/**
 * Builds the context objects handlers receive, the patch they collect, and `adopt`.
 */
import type { ObjectMeta } from "kubernetes-types/meta/v1.d.ts";
import type { Logger } from "pino";
import type { KubeClient } from "../client/kube-client.ts";
import { apiVersionOf, type KubeObject, type ResourceKind } from "../client/types.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import { isPlainObject } from "./essence.ts";
import type { AdoptOptions, ObjectContext, ObjectPatch, SpecOfObject, StatusOfObject } from "./handlers.ts";

/** What every context is built from. */
export interface ContextSources {
  kind: ResourceKind;
  client: KubeClient;
  logger: Logger;
  recorder: EventRecorder;
  signal: AbortSignal;
  /** The operator's clock, for `ctx.now()`. */
  clock: Clock;
}

/** The common part of every handler context, for `obj` (or for whatever `current()` returns). */
export function objectContext<T extends KubeObject>(
  src: ContextSources,
  current: () => T,
): ObjectContext<T> & { readonly obj: T } {
  return {
    get obj() {
      return current();
    },
    get spec() {
      return (current() as { spec?: unknown }).spec as SpecOfObject<T>;
    },
    get status() {
      return (current() as { status?: unknown }).status as Partial<StatusOfObject<T>> | undefined;
    },
    get meta(): ObjectMeta {
      return current().metadata ?? {};
    },
    get name() {
      return current().metadata?.name ?? "";
    },
    get namespace() {
      return current().metadata?.namespace || undefined;
    },
    logger: src.logger,
    api: src.client,
    signal: src.signal,
    adopt: <C extends KubeObject>(child: C, options?: AdoptOptions) => adopt(src.kind, current(), child, options),
    event: (type, reason, message) => src.recorder.event(current(), type, reason, message),
    now: () => new Date(src.clock.now()),
  };
}

/** A logger bound to the object's namespace/name (one pino child per object, as DESIGN.md asks). */
export function objectLogger(base: Logger, obj: KubeObject, extra: Record<string, unknown> = {}): Logger {
  const namespace = obj.metadata?.namespace;
  return base.child({ ...(namespace ? { namespace } : {}), name: obj.metadata?.name, ...extra });
}

/** An empty patch for a handler to fill. */
export function newObjectPatch<T extends KubeObject>(): ObjectPatch<T> {
  return { metadata: { labels: {}, annotations: {} }, spec: {}, status: {} } as unknown as ObjectPatch<T>;
}

/** The merge patches a collected patch amounts to: the object's (metadata, spec) and its status's. */
export function splitObjectPatch(patch: ObjectPatch<KubeObject>): {
  metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
} {
  const metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } = {};
  if (Object.keys(patch.metadata.labels).length > 0) metadata.labels = { ...patch.metadata.labels };
  if (Object.keys(patch.metadata.annotations).length > 0) metadata.annotations = { ...patch.metadata.annotations };
  const spec = patch.spec as unknown;
  const status = patch.status as unknown;
  return {
    metadata,
    ...(isPlainObject(spec) && Object.keys(spec).length > 0 ? { spec } : {}),
    ...(isPlainObject(status) && Object.keys(status).length > 0 ? { status } : {}),
  };
}

/** Applies a JSON merge patch (RFC 7386) to a JSON value, returning a new value. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

/** See {@link ObjectContext.adopt}. */
export function adopt<C extends KubeObject>(
  kind: ResourceKind,
  owner: KubeObject,
  child: C,
  options: AdoptOptions = {},
): C {
  const meta = owner.metadata;
  if (meta?.uid === undefined || meta.name === undefined) {
    throw new Error("adopt: the owner has no uid or name (was it read from the API server?)");
  }
  const refs = child.metadata?.ownerReferences ?? [];
  const other = refs.find((r) => r.controller === true && r.uid !== meta.uid);
  if (other !== undefined) {
    throw new Error(
      `adopt: ${child.kind ?? "child"} ${child.metadata?.name ?? ""} is already controlled by ${other.kind} ${other.name}`,
    );
  }
  const ownerRef = {
    apiVersion: owner.apiVersion ?? apiVersionOf(kind),
    kind: owner.kind ?? kind.kind,
    name: meta.name,
    uid: meta.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  const childMeta: ObjectMeta = { ...child.metadata };
  if (kind.namespaced && childMeta.namespace === undefined && meta.namespace !== undefined) {
    childMeta.namespace = meta.namespace;
  }
  if (childMeta.name === undefined && childMeta.generateName === undefined) {
    if (options.naming === "generate") childMeta.generateName = `${meta.name}-`;
    else childMeta.name = meta.name;
  }
  childMeta.ownerReferences = [...refs.filter((r) => r.uid !== meta.uid), ownerRef];
  return { ...child, metadata: childMeta };
}
