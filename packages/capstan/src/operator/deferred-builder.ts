/**
 * `op.controller(kind)`: the runtime builder's fluent API recorded while the operator is being
 * declared (it has no client yet) and replayed on the manager when the operator starts. Each step
 * stands for the runtime builder's method of the same name (controller-builder.ts).
 */
import type { KubeObject, ResourceKind } from "../client/types.ts";
import type { ReconcileFunction } from "../runtime/controller.ts";
import type { BuilderOptions, WatchOptions } from "../runtime/controller-builder.ts";
import type { Manager } from "../runtime/manager.ts";
import type { Predicate } from "../runtime/predicates.ts";
import type { ObjectRef } from "../runtime/reconcile.ts";

type Recorded =
  | { op: "owns"; kind: ResourceKind; options?: WatchOptions<KubeObject> }
  | {
      op: "watches";
      kind: ResourceKind;
      map: (obj: KubeObject) => readonly (ObjectRef | string)[];
      options?: WatchOptions<KubeObject>;
    }
  | { op: "withEventFilter"; predicates: Predicate<KubeObject>[] }
  | { op: "named"; name: string }
  | { op: "withOptions"; options: BuilderOptions };

/**
 * The runtime builder's fluent API (`owns`, `watches`, `withEventFilter`, `named`, `withOptions`,
 * `reconcile`), recorded and replayed on the manager when the operator starts.
 */
export class DeferredControllerBuilder<T extends KubeObject = KubeObject> {
  private readonly steps: Recorded[] = [];
  private fn: ReconcileFunction<T> | undefined;

  constructor(
    readonly kind: ResourceKind<T>,
    private readonly options: WatchOptions<T> | undefined,
  ) {}

  /** See the runtime's `ControllerBuilder.owns`. */
  owns<C extends KubeObject>(kind: ResourceKind<C>, options?: WatchOptions<C>): this {
    this.steps.push({ op: "owns", kind: kind as ResourceKind, options: options as WatchOptions<KubeObject> });
    return this;
  }

  /** See the runtime's `ControllerBuilder.watches`. */
  watches<W extends KubeObject>(
    kind: ResourceKind<W>,
    map: (obj: W) => readonly (ObjectRef | string)[],
    options?: WatchOptions<W>,
  ): this {
    this.steps.push({
      op: "watches",
      kind: kind as ResourceKind,
      map: map as (obj: KubeObject) => readonly (ObjectRef | string)[],
      options: options as WatchOptions<KubeObject>,
    });
    return this;
  }

  /** See the runtime's `ControllerBuilder.withEventFilter`. */
  withEventFilter(...predicates: Predicate<KubeObject>[]): this {
    this.steps.push({ op: "withEventFilter", predicates });
    return this;
  }

  /** See the runtime's `ControllerBuilder.named`. */
  named(name: string): this {
    this.steps.push({ op: "named", name });
    return this;
  }

  /** See the runtime's `ControllerBuilder.withOptions`. */
  withOptions(options: BuilderOptions): this {
    this.steps.push({ op: "withOptions", options });
    return this;
  }

  /** The reconcile function; the controller is built when the operator starts. */
  reconcile(fn: ReconcileFunction<T>): void {
    if (this.fn !== undefined) throw new Error("reconcile() was already called on this builder");
    this.fn = fn;
  }

  /** @internal Kinds this controller watches, split by role. */
  kinds(): { owns: ResourceKind[]; watches: ResourceKind[] } {
    const owns: ResourceKind[] = [];
    const watches: ResourceKind[] = [this.kind as ResourceKind];
    for (const s of this.steps) {
      if (s.op === "owns") owns.push(s.kind);
      if (s.op === "watches") watches.push(s.kind);
    }
    return { owns, watches };
  }

  /** @internal Builds the controller on `mgr`. */
  replay(mgr: Manager): void {
    if (this.fn === undefined) {
      throw new Error(`controller for ${this.kind.kind} was declared without reconcile(fn)`);
    }
    let b = mgr.controller(this.kind, this.options);
    for (const s of this.steps) {
      if (s.op === "owns") b = b.owns(s.kind, s.options);
      else if (s.op === "watches") b = b.watches(s.kind, s.map, s.options);
      else if (s.op === "withEventFilter") b = b.withEventFilter(...s.predicates);
      else if (s.op === "named") b = b.named(s.name);
      else b = b.withOptions(s.options);
    }
    b.reconcile(this.fn);
  }
}
