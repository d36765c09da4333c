/**
 * The BenchItem operators the throughput and footprint benchmarks run (issue 14): per object one
 * owned ConfigMap, written by server-side apply, and `status.observedSize`. Plain JavaScript
 * modules importing `capstan` by package name, written into the benchmark's directory as a user's
 * project would hold them: `bench-item.js` (the kind), then `reconcile.js` or `handlers.js`.
 */
/** The kind, shared by the operators, the ceiling loop and the driver (which registers its CRD). */
export const BENCH_ITEM_MODULE = `import { defineResource, Type } from "capstan";

export const BenchItem = defineResource({
  group: "bench.capstan.dev", version: "v1", kind: "BenchItem", scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({ observedSize: Type.Optional(Type.Integer()) }),
});
`;

export const RECONCILE_MODULE = `import { isDeleted, operator } from "capstan";
import { ConfigMap } from "capstan/core";
import { BenchItem } from "./bench-item.js";

const op = operator({ name: "bench" });
op.controller(BenchItem)
  .owns(ConfigMap)
  .reconcile(async (item, ctx) => {
    if (isDeleted(item)) return;
    await ctx.apply(ConfigMap, ctx.adopt({ metadata: { name: ctx.key.name }, data: { size: String(item.spec.size) } }));
    if (item.status?.observedSize !== item.spec.size) await ctx.patchStatus({ observedSize: item.spec.size });
  });
export default op;
`;

export const HANDLERS_MODULE = `import { operator } from "capstan";
import { ConfigMap } from "capstan/core";
import { BenchItem } from "./bench-item.js";

const op = operator({ name: "bench" });
op.on.create(BenchItem, async function configure({ spec, adopt, api, patch }) {
  const configMap = adopt(ConfigMap.make({ data: { size: String(spec.size) } }));
  await api.resource(ConfigMap).apply(configMap, { fieldManager: "bench", force: true });
  patch.status.observedSize = spec.size;
});
export default op;
`;
