/**
 * An in-memory event source for controller tests: a real Store plus synchronous event delivery,
 * like an informer that has synced, without list/watch.
 */
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { objectKey, Store } from "../../packages/capstan/src/runtime/cache.ts";
import type { EventSource } from "../../packages/capstan/src/runtime/controller.ts";
import type { InformerEventHandler } from "../../packages/capstan/src/runtime/informer.ts";

export class FakeSource<T extends KubeObject = KubeObject> implements EventSource<T> {
  private readonly impl = new Store<T>();
  readonly handlers = new Set<InformerEventHandler<T>>();

  get store(): Store<T> {
    return this.impl;
  }

  addEventHandler(handler: InformerEventHandler<T>): () => void {
    this.handlers.add(handler);
    for (const obj of this.impl.list()) handler.onAdd?.(obj);
    return () => this.handlers.delete(handler);
  }

  /** Stores `obj` and delivers an add or an update; returns the stored (frozen) object. */
  upsert(obj: T): T {
    const { stored, previous } = this.impl.upsert(structuredClone(obj));
    for (const h of this.handlers) {
      if (previous === undefined) h.onAdd?.(stored);
      else h.onUpdate?.(previous, stored);
    }
    return stored;
  }

  remove(obj: T): void {
    const gone = this.impl.delete(objectKey(obj));
    if (gone === undefined) throw new Error(`no ${objectKey(obj)}`);
    for (const h of this.handlers) h.onDelete?.(gone);
  }
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
