/**
 * An operator that uses every feature whose requests `Operator.permissions()` derives RBAC for:
 * create, update, field and delete handlers (so a finalizer), a raw event handler, a timer, a
 * daemon, status results and `ctx.patch` (object and status), repeated Events, a child applied
 * through `api` with `adopt`, a declared controller that owns ConfigMaps (`ctx.apply`, `ctx.adopt`,
 * `ctx.patchStatus`, `ctx.event`), its two CRDs registered at start-up, and leader election when
 * started with it. `capstan generate rbac` loads the default export; tests run a fresh one from
 * {@link everyFeatureOperator}.
 */
import { Type } from "typebox";
import { type Operator, operator } from "../../../packages/capstan/src/operator/index.ts";
import { ConfigMap } from "../../../packages/capstan/src/resources/builtins.ts";
import { defineResource } from "../../../packages/capstan/src/resources/define-resource.ts";
import { needs } from "../../../packages/capstan/src/resources/rbac.ts";
import { isDeleted } from "../../../packages/capstan/src/runtime/reconcile.ts";

export const OPERATOR_NAME = "every-feature";

/** Handled by Kopf-style handlers, a timer and a daemon. */
export const Gizmo = defineResource({
  group: "rbac.capstan.test",
  version: "v1",
  kind: "Gizmo",
  scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({
    create: Type.Optional(Type.String()),
    size: Type.Optional(Type.Integer()),
    updatedTo: Type.Optional(Type.Integer()),
    ticks: Type.Optional(Type.Integer()),
  }),
});

/** Reconciled by a declared controller that owns ConfigMaps. */
export const Gear = defineResource({
  group: "rbac.capstan.test",
  version: "v1",
  kind: "Gear",
  scope: "Namespaced",
  spec: Type.Object({ teeth: Type.Integer() }),
  status: Type.Object({ applied: Type.Optional(Type.Boolean()) }),
});

/** What the handlers saw, for the test's assertions (the API shows the rest). */
export interface Seen {
  events: string[];
  deleted: string[];
  daemons: string[];
}

/** The operator; `seen` collects what only the process can observe. */
export function everyFeatureOperator(seen: Seen = { events: [], deleted: [], daemons: [] }): Operator {
  // The create handler applies a ConfigMap through `api` itself: registration cannot see that.
  const op = operator({ name: OPERATOR_NAME, permissions: [needs.apply(ConfigMap)] });

  op.on.create(Gizmo, { id: "create" }, async ({ spec, name, namespace, api, adopt, patch, event }) => {
    const child = ConfigMap.make({ metadata: { name: `${name}-from-handler` }, data: { size: String(spec.size) } });
    await api.resource(ConfigMap, namespace).apply(adopt(child), { fieldManager: OPERATOR_NAME, force: true });
    patch.metadata.labels.created = "yes";
    event("Normal", "Created", `created with size ${spec.size}`);
    return "done";
  });
  op.on.update(Gizmo, { id: "update" }, async ({ spec, patch }) => {
    patch.status.updatedTo = spec.size;
  });
  op.on.field(Gizmo, "spec.size", { id: "size" }, async ({ new: size }) => size);
  op.on.delete(Gizmo, { id: "cleanup" }, async ({ name }) => {
    seen.deleted.push(name);
  });
  op.on.event(Gizmo, async ({ type, name }) => {
    seen.events.push(`${type} ${name}`);
  });
  op.timer(Gizmo, { id: "tick", interval: "300ms" }, async ({ status, patch, event }) => {
    patch.status.ticks = (status?.ticks ?? 0) + 1;
    // The same Event every run: repeats are patches of the first one's count.
    event("Normal", "Tick", "tick");
  });
  op.daemon(Gizmo, { id: "watcher" }, async ({ name, signal, event }) => {
    seen.daemons.push(name);
    event("Normal", "Watching", "daemon started");
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  });

  op.controller(Gear)
    .owns(ConfigMap)
    .reconcile(async (gear, ctx) => {
      if (isDeleted(gear)) return; // its ConfigMap is garbage-collected with it
      const child = ConfigMap.make({ metadata: { name: `${gear.metadata.name}-gear` }, data: { teeth: "0" } });
      child.data = { teeth: String(gear.spec.teeth) };
      await ctx.apply(ConfigMap, ctx.adopt(child));
      await ctx.patchStatus({ applied: true });
      ctx.event("Normal", "Applied", "ConfigMap applied");
    });
  return op;
}

export default everyFeatureOperator();
