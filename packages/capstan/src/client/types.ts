/**
 * The shapes every layer agrees on: Kubernetes objects as plain JSON, the description of a kind
 * that the client needs to reach it, and the list/watch contract that informers consume.
 * Plain data only: no classes, no behaviour.
 */
import type { ListMeta, ObjectMeta, Status } from "kubernetes-types/meta/v1.d.ts";

export type { ListMeta, ObjectMeta, Status };

/** Any Kubernetes object, built-in or custom: plain JSON with apiVersion, kind and metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/**
 * What the client needs to know to reach a kind over REST. `defineResource` kinds and the
 * built-in kinds of `capstan/core` both satisfy it; so does any plain object literal.
 *
 * `T` is a phantom type parameter: it only carries the object type through the typed client.
 */
export interface ResourceKind<T extends KubeObject = KubeObject> {
  /** API group, `""` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in URLs, e.g. `configmaps`. */
  readonly plural: string;
  readonly namespaced: boolean;
  /** Never set at run time; lets `T` flow from a kind value to the objects of that kind. */
  readonly __object?: T;
}

/** The object type a kind stands for. */
export type ObjectOf<K> = K extends ResourceKind<infer T> ? T : never;

/** `group/version`, or just `version` for the core group. */
export function apiVersionOf(kind: Pick<ResourceKind, "group" | "version">): string {
  return kind.group === "" ? kind.version : `${kind.group}/${kind.version}`;
}

/** Options of a list call (one page). Every field maps one-to-one to the query parameter of the same name. */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  signal?: AbortSignal;
}

/** Options of a watch call. `resourceVersion` is where the watch starts (exclusive). */
export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  /** Ends the watch: the event iterator then finishes without throwing. */
  signal?: AbortSignal;
}

/** A page of a list response. */
export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/**
 * One watch event as the client yields it. ERROR events never reach the consumer: the watch
 * iterator throws an `ApiError` carrying their Status instead (code 410 for an expired version).
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T }
  | { type: "BOOKMARK"; object: KubeObject & { metadata: ObjectMeta & { resourceVersion: string } } };

/**
 * The list-and-watch contract an informer consumes. The typed resource client implements it;
 * tests can implement it with a fake.
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  list(options: ListOptions): Promise<ObjectList<T>>;
  /** Resolves once the server accepted the watch (so HTTP errors surface here), then yields events. */
  watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
}
