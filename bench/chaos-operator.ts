/**
 * The operator bench/chaos.ts runs as a `capstan run` child process, so that it can be killed with
 * SIGKILL: plain JavaScript modules importing the built `capstan` by package name, written into the
 * benchmark's directory as a user's project would hold them.
 *
 * Per ChaosItem it keeps one child ConfigMap `<name>-child` (owner reference, `data.gen` =
 * `spec.gen`), a finalizer (`chaos.capstan.dev/cleanup`) that it removes only after deleting the
 * child, and `status.observedGen`. The child is created with a POST (not server-side apply), so a
 * child created twice is visible: each 201 is recorded.
 *
 * It records what it does in the marks file named by CHAOS_MARKS, one line per mark, written with a
 * synchronous `write(2)` on an O_APPEND descriptor so that a SIGKILL loses none that were written and
 * two processes never interleave within a line:
 * - `S <pid> <ms> <key> <depth>`: a reconcile of `<key>` starts; `<depth>` is how many reconciles of
 *   that key this process is running, this one included (a correct controller: always 1);
 * - `E <pid> <ms> <key> <ok|error>`: it ends;
 * - `C <pid> <ms> <key> <parent uid>`: it created the child (the POST answered 201).
 * `<ms>` is wall-clock time (Date.now()), comparable across processes on one machine.
 *
 * CHAOS_RETRY_AFTER (`requeue`, the default, or `wait`) sets the controller's `throttled` option.
 */

/** The kind, shared by the operator and the driver (which registers its CRD). */
export const CHAOS_ITEM_MODULE = `import { defineResource, Type } from "capstan";

export const ChaosItem = defineResource({
  group: "chaos.capstan.dev", version: "v1", kind: "ChaosItem", scope: "Namespaced",
  spec: Type.Object({ gen: Type.Integer() }),
  status: Type.Object({ observedGen: Type.Optional(Type.Integer()), child: Type.Optional(Type.String()) }),
});
`;

/** The finalizer the operator holds on every live ChaosItem. */
export const CHAOS_FINALIZER = "chaos.capstan.dev/cleanup";

export const CHAOS_OPERATOR_MODULE = `import { openSync, writeSync } from "node:fs";
import { isAlreadyExists, isDeleted, isNotFound, operator } from "capstan";
import { ConfigMap } from "capstan/core";
import { ChaosItem } from "./chaos-item.js";

const FINALIZER = ${JSON.stringify(CHAOS_FINALIZER)};
const marks = openSync(process.env.CHAOS_MARKS, "a");
const mark = (line) => writeSync(marks, line + "\\n");
const running = new Map();

async function reconcile(item, ctx) {
  if (isDeleted(item)) return;
  const { namespace, name } = ctx.key;
  const items = ctx.client.resource(ChaosItem, namespace);
  const configMaps = ctx.client.resource(ConfigMap, namespace);
  const childName = name + "-child";
  const child = ctx.cache(ConfigMap).get(namespace + "/" + childName);
  const finalizers = item.metadata.finalizers ?? [];
  const resourceVersion = item.metadata.resourceVersion;
  if (item.metadata.deletionTimestamp) {
    if (!finalizers.includes(FINALIZER)) return;
    try {
      await configMaps.delete(childName);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const rest = finalizers.filter((f) => f !== FINALIZER);
    await items.patch(name, { metadata: { finalizers: rest, resourceVersion } }, { type: "merge" });
    return;
  }
  if (!finalizers.includes(FINALIZER)) {
    const withFinalizer = [...finalizers, FINALIZER];
    item = await items.patch(name, { metadata: { finalizers: withFinalizer, resourceVersion } }, { type: "merge" });
  }
  const data = { gen: String(item.spec.gen) };
  if (child === undefined) {
    try {
      const body = ctx.adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: childName, namespace }, data });
      await configMaps.create(body);
      mark("C " + process.pid + " " + Date.now() + " " + namespace + "/" + name + " " + item.metadata.uid);
    } catch (err) {
      // The cache has not shown our child yet: its event will bring us back.
      if (!isAlreadyExists(err)) throw err;
      return;
    }
  } else if (child.data?.gen !== data.gen) {
    await configMaps.patch(childName, { data }, { type: "merge" });
  }
  if (item.status?.observedGen !== item.spec.gen) {
    await ctx.patchStatus({ observedGen: item.spec.gen, child: childName });
  }
}

const op = operator({ name: "chaos" });
op.controller(ChaosItem)
  .owns(ConfigMap)
  // CHAOS_RETRY_AFTER: what a reconcile's 429 with Retry-After does (runtime/throttling.ts).
  .withOptions({ throttled: process.env.CHAOS_RETRY_AFTER === "wait" ? "wait" : "requeue" })
  .reconcile(async (item, ctx) => {
    const key = ctx.key.namespace + "/" + ctx.key.name;
    const depth = (running.get(key) ?? 0) + 1;
    running.set(key, depth);
    mark("S " + process.pid + " " + Date.now() + " " + key + " " + depth);
    let outcome = "error";
    try {
      const result = await reconcile(item, ctx);
      outcome = "ok";
      return result;
    } finally {
      const left = running.get(key) - 1;
      if (left === 0) running.delete(key);
      else running.set(key, left);
      mark("E " + process.pid + " " + Date.now() + " " + key + " " + outcome);
    }
  });
export default op;
`;
