/**
 * The types of a resource definition, shared by `defineResource`, `toCrd` and the built-in kinds.
 * Plain data only.
 */
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import type { Static, TSchema } from "typebox";
import type { KubeObject, ObjectMeta, ResourceKind } from "../client/types.ts";
import type { ValidationRule } from "./kube-schema.ts";

export type { ObjectOf } from "../client/types.ts";

/** Whether objects live in a namespace. */
export type Scope = "Namespaced" | "Cluster";

/** An extra column of `kubectl get` (a CRD `additionalPrinterColumns` entry). */
export interface PrinterColumn {
  name: string;
  type: "integer" | "number" | "string" | "boolean" | "date";
  /** A simple JSON path starting with `.`, e.g. `.status.rate`. */
  jsonPath: string;
  description?: string;
  format?: "int32" | "int64" | "float" | "double" | "byte" | "date" | "date-time" | "password";
  /** 0 shows in the standard view; higher only with `-o wide`. */
  priority?: number;
}

/** The schemas and per-version extras of one served version. */
export interface VersionSchemas<S extends TSchema, St extends TSchema | undefined> {
  /** Schema of `.spec` (a `Type.Object`). */
  spec: S;
  /** Schema of `.status`; when present the CRD gets the `status` subresource. */
  status?: St;
  printerColumns?: PrinterColumn[];
  /** JSON paths (`.spec.color`) usable in field selectors; string, boolean or integer fields only. */
  selectableFields?: string[];
  /** CEL rules on the whole object (root `x-kubernetes-validations`), e.g. `{ rule: "self.spec.min <= self.spec.max" }`. */
  validations?: ValidationRule[];
  /** The `scale` subresource (for `kubectl scale` and autoscalers). */
  scale?: ScaleSubresource;
}

/** Where the `scale` subresource finds replicas: `.spec.replicas`, `.status.replicas`, `.status.selector`. */
export interface ScaleSubresource {
  /** A dot path under `.spec`, e.g. `.spec.replicas` (an integer field). */
  specReplicasPath: string;
  /** A dot path under `.status`, e.g. `.status.replicas` (an integer field). */
  statusReplicasPath: string;
  /** A dot path under `.spec` or `.status` holding the label selector as a string. */
  labelSelectorPath?: string;
}

/** One version of a multi-version definition. */
export interface VersionDefinition<S extends TSchema = TSchema, St extends TSchema | undefined = TSchema | undefined>
  extends VersionSchemas<S, St> {
  name: string;
  /** Default true. */
  served?: boolean;
  /** Exactly one version is the storage version; by default the first. */
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
}

/** Names and scope, common to both forms of {@link defineResource}. */
export interface ResourceNames {
  /** API group, a DNS subdomain with at least one dot, e.g. `operators.example.com`. */
  group: string;
  /** CamelCase kind, e.g. `ExchangeRate`. */
  kind: string;
  /** Default: {@link pluralize} of the kind (`exchangerates`). */
  plural?: string;
  /** Default: the lower-cased kind. */
  singular?: string;
  /** Default: `<kind>List`. */
  listKind?: string;
  scope: Scope;
  shortNames?: string[];
  categories?: string[];
}

/** One version: `version` plus its schemas at the top level. */
export interface SingleVersionOptions<S extends TSchema, St extends TSchema | undefined>
  extends ResourceNames,
    VersionSchemas<S, St> {
  version: string;
}

/**
 * Several versions. `versions[0]` is the version your code reads and writes: it gives the
 * TypeScript type and the version the client uses. It is also the storage version unless another
 * entry says `storage: true`.
 */
export interface MultiVersionOptions<S extends TSchema, St extends TSchema | undefined> extends ResourceNames {
  versions: readonly [VersionDefinition<S, St>, ...VersionDefinition[]];
}

type Flatten<T> = { [K in keyof T]: T[K] };

/** The object type of a custom resource with spec schema `S` and status schema `St`. */
export type CustomObject<S extends TSchema, St extends TSchema | undefined> = Flatten<
  {
    apiVersion: string;
    kind: string;
    metadata: ObjectMeta;
    spec: Static<S>;
  } & (St extends TSchema ? { status?: Static<St> } : unknown)
>;

/** What `make` takes: the object without `apiVersion`/`kind`, which it fills in. */
export type MakeInput<T> = Omit<T, "apiVersion" | "kind">;

/** A kind that can build its own objects; both `defineResource` kinds and the built-in kinds are. */
export interface MakeableKind<T extends KubeObject> extends ResourceKind<T> {
  /** `group/version`, or `version` for the core group. */
  readonly apiVersion: string;
  readonly singular: string;
  readonly listKind: string;
  /** Builds a typed object with `apiVersion` and `kind` filled in. */
  make(input: MakeInput<T>): T;
}

/** A version as the definition resolved it. */
export interface ResolvedVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly deprecated: boolean;
  readonly deprecationWarning?: string;
  readonly spec: TSchema;
  readonly status?: TSchema;
  readonly printerColumns: readonly PrinterColumn[];
  readonly selectableFields: readonly string[];
  readonly validations: readonly ValidationRule[];
  readonly scale?: ScaleSubresource;
}

/** What {@link defineResource} returns. */
export interface CustomResource<S extends TSchema = TSchema, St extends TSchema | undefined = TSchema | undefined>
  extends MakeableKind<CustomObject<S, St>> {
  readonly scope: Scope;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** `<plural>.<group>`, the CRD's name. */
  readonly crdName: string;
  /** All versions, the typed one (`version`) first. */
  readonly versions: readonly ResolvedVersion[];
  readonly storageVersion: string;
  /** Schema of `.spec` of the typed version. */
  readonly specSchema: S;
  /** Schema of `.status` of the typed version, if any. */
  readonly statusSchema: St;
  /** @internal the CRD built (and checked) at definition time; use `toCrd`. */
  readonly crd: CustomResourceDefinition;
}

/** `.spec`'s type of a kind: `SpecOf<typeof ExchangeRate>`. */
export type SpecOf<K> = K extends ResourceKind<infer T> ? (T extends { spec?: infer S } ? S : never) : never;
/** `.status`'s type of a kind (without `undefined`). */
export type StatusOf<K> =
  K extends ResourceKind<infer T> ? (T extends { status?: infer S } ? NonNullable<S> : never) : never;

/** Depth budget of {@link NeverField}: enough for spec -> objects -> lists of objects -> fields. */
type Depth = [never, 0, 1, 2, 3, 4, 5];

/**
 * The path of the first field whose static type is `never`, or `never` if there is none. TypeBox
 * gives `never` for `Type.Union(values.map((v) => Type.Literal(v)))` (an array, not a tuple, of
 * literals), which would make every object of the kind impossible to build.
 */
export type NeverField<T, P extends string, D extends number = 6> = [D] extends [never]
  ? never
  : 0 extends 1 & T
    ? never // any
    : [T] extends [never]
      ? P
      : T extends readonly (infer E)[]
        ? NeverField<E, `${P}[*]`, Depth[D]>
        : T extends object
          ? { [K in keyof T & string]-?: NeverField<Exclude<T[K], undefined>, `${P}.${K}`, Depth[D]> }[keyof T & string]
          : never;

/**
 * `unknown` when the schemas give usable types; otherwise an object type whose only (missing)
 * property spells out the problem, so the compiler error names the field.
 */
export type CheckStaticTypes<S extends TSchema, St extends TSchema | undefined> = [
  NeverField<Static<S>, "spec"> | (St extends TSchema ? NeverField<Static<St>, "status"> : never),
] extends [never]
  ? unknown
  : {
      "error: this field's TypeScript type is never; Type.Union(values.map(Type.Literal)) loses the literals, use Type.Enum(values) or list the literals":
        | NeverField<Static<S>, "spec">
        | (St extends TSchema ? NeverField<Static<St>, "status"> : never);
    };
