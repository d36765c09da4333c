/**
 * Escape hatches for the Kubernetes schema extensions TypeBox has no builder for. Each one is a
 * plain TypeBox schema (`Type.Unsafe`) with the right static type, so it composes with `Type.*`.
 *
 * ```ts
 * spec: Type.Object({
 *   port: Kube.IntOrString(),                       // 8080 or "http"
 *   template: Kube.EmbeddedResource(),              // a whole Kubernetes object
 *   extra: Kube.PreserveUnknownFields(),            // any JSON, kept as is
 *   ports: Type.Array(Port, Kube.listMap(["name"])),
 *   replicas: Type.Integer(Kube.validations({ rule: "self >= 0", message: "must not be negative" })),
 * })
 * ```
 */
import { type TUnsafe, Type } from "typebox";
import type { KubeObject } from "../client/types.ts";
import type { ValidationRule } from "./kube-schema.ts";

/** Extra keywords for the schema itself (description, default, validations...). */
export type SchemaOptions = Record<string, unknown>;

export const Kube = {
  /** `x-kubernetes-int-or-string`: an integer or a string (ports, `maxUnavailable`, quantities). */
  IntOrString(options: SchemaOptions = {}): TUnsafe<number | string> {
    return Type.Unsafe<number | string>({ ...options, "x-kubernetes-int-or-string": true });
  },

  /** `x-kubernetes-preserve-unknown-fields` with no type: any JSON value, never pruned. */
  PreserveUnknownFields<T = unknown>(options: SchemaOptions = {}): TUnsafe<T> {
    return Type.Unsafe<T>({ ...options, "x-kubernetes-preserve-unknown-fields": true });
  },

  /**
   * `x-kubernetes-embedded-resource`: a complete Kubernetes object (apiVersion, kind, metadata
   * validated as such), with its other fields kept as they are.
   */
  EmbeddedResource<T extends KubeObject = KubeObject & Record<string, unknown>>(
    options: SchemaOptions = {},
  ): TUnsafe<T> {
    return Type.Unsafe<T>({
      ...options,
      type: "object",
      "x-kubernetes-embedded-resource": true,
      "x-kubernetes-preserve-unknown-fields": true,
    });
  },

  /** Options fragment: CEL rules on this field (`x-kubernetes-validations`). */
  validations(...rules: ValidationRule[]): { "x-kubernetes-validations": ValidationRule[] } {
    return { "x-kubernetes-validations": rules };
  },

  /** Options fragment: an array merged by these item keys in server-side apply and strategic merge. */
  listMap(keys: [string, ...string[]]): { "x-kubernetes-list-type": "map"; "x-kubernetes-list-map-keys": string[] } {
    return { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys };
  },

  /** Options fragment: an array of unique scalars (what JSON Schema's `uniqueItems` would be; CRDs forbid that). */
  listSet(): { "x-kubernetes-list-type": "set" } {
    return { "x-kubernetes-list-type": "set" };
  },

  /** Options fragment: an array replaced as a whole on apply. */
  listAtomic(): { "x-kubernetes-list-type": "atomic" } {
    return { "x-kubernetes-list-type": "atomic" };
  },

  /** Options fragment: an object replaced as a whole on apply. */
  mapAtomic(): { "x-kubernetes-map-type": "atomic" } {
    return { "x-kubernetes-map-type": "atomic" };
  },
} as const;
