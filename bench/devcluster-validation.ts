/**
 * Cost of the devcluster's validation on the write path, in-process. Run:
 * `npx tsx bench/devcluster-validation.ts`. Prints ONE JSON line:
 * - admit_per_s: defaults + pruning of a ~1 KiB custom object (a fresh copy each time)
 * - validate_per_s: schema + embedded-resource + list-type validation of the same object
 * - validate_update_per_s: the same with the stored object (ratcheting on)
 * - crd_validate_ms: one full CRD create validation (structural rules, defaults) of that CRD
 */
import { performance } from "node:perf_hooks";
import { parse } from "yaml";
import { validateCustomResourceDefinition } from "../packages/capstan-dev/src/devcluster/validation/crd.ts";
import {
  admitCustomObject,
  validateCustomResource,
} from "../packages/capstan-dev/src/devcluster/validation/custom-resource.ts";
import type { JSONSchemaProps } from "../packages/capstan-dev/src/devcluster/validation/schema-types.ts";

/** Enough iterations that JIT warm-up is a small share, few enough to finish in a few seconds. */
const ITERATIONS = 20_000;
/** Warm-up iterations run before timing so the first compilation of the schema is not measured. */
const WARMUP = 2_000;

const schema = parse(`
type: object
properties:
  spec:
    type: object
    required: [image]
    properties:
      image: {type: string, pattern: '^[a-z0-9./:-]+$'}
      replicas: {type: integer, minimum: 0, maximum: 100, default: 1}
      currency: {type: string, enum: [CAD, USD, EUR]}
      resources:
        type: object
        properties:
          cpu: {x-kubernetes-int-or-string: true}
          memory: {x-kubernetes-int-or-string: true}
      env:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items: {type: object, required: [name], properties: {name: {type: string}, value: {type: string}}}
      labels: {type: object, additionalProperties: {type: string}}
  status:
    type: object
    properties:
      phase: {type: string}
      conditions:
        type: array
        items:
          type: object
          properties: {type: {type: string}, status: {type: string}, reason: {type: string}, message: {type: string}}
`) as JSONSchemaProps;

function object(i: number): Record<string, unknown> {
  return {
    apiVersion: "example.com/v1",
    kind: "App",
    metadata: { name: `app-${i}`, namespace: "default", labels: { app: "x" } },
    spec: {
      image: "registry.example.com/app:1.2.3",
      currency: "USD",
      resources: { cpu: "500m", memory: 1024 },
      env: Array.from({ length: 8 }, (_, j) => ({ name: `VAR_${j}`, value: "x".repeat(40) })),
      labels: { team: "a", tier: "backend", zone: "z1" },
      unknown: { dropped: true },
    },
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True", reason: "Ok", message: "all good" }] },
  };
}

function perSecond(fn: (i: number) => void): number {
  for (let i = 0; i < WARMUP; i++) fn(i);
  const start = performance.now();
  for (let i = 0; i < ITERATIONS; i++) fn(i);
  return Math.round((ITERATIONS / (performance.now() - start)) * 1000);
}

const admitted = object(0);
admitCustomObject(schema, admitted);
const admitPerS = perSecond((i) => admitCustomObject(schema, object(i)));
const validatePerS = perSecond(() => validateCustomResource(schema, admitted));
const stored = structuredClone(admitted);
const validateUpdatePerS = perSecond(() => validateCustomResource(schema, admitted, { oldObj: stored }));

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "apps.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "apps", singular: "app", kind: "App" },
    versions: [
      { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema }, subresources: { status: {} } },
    ],
  },
};
const CRD_RUNS = 200;
for (let i = 0; i < 20; i++) validateCustomResourceDefinition(structuredClone(crd));
const crdStart = performance.now();
for (let i = 0; i < CRD_RUNS; i++) validateCustomResourceDefinition(structuredClone(crd));
const crdMs = (performance.now() - crdStart) / CRD_RUNS;

console.log(
  JSON.stringify({
    admit_per_s: admitPerS,
    validate_per_s: validatePerS,
    validate_update_per_s: validateUpdatePerS,
    crd_validate_ms: Number(crdMs.toFixed(3)),
  }),
);
