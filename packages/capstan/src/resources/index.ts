/**
 * The resources layer's public surface: define custom resources from TypeBox schemas, get their
 * CRDs, use typed built-in kinds, and derive RBAC rules. `src/index.ts` re-exports it.
 */
export { BUILTIN_KINDS, type BuiltinKind } from "./builtins.ts";
export { type ToCrdOptions, toCrd } from "./crd.ts";
export { defineResource, isCustomResource, ResourceDefinitionError } from "./define-resource.ts";
export { Kube, type SchemaOptions } from "./kube-extensions.ts";
export type { KubeSchema, ValidationRule } from "./kube-schema.ts";
export { pluralize } from "./plural.ts";
export {
  checkVerb,
  deriveRules,
  InvalidVerbError,
  type KindRef,
  needs,
  type PermissionNeed,
  type PolicyRule,
  type RbacManifest,
  type RbacManifestOptions,
  rbacManifests,
  VERBS,
  type Verb,
} from "./rbac.ts";
export type {
  CustomObject,
  CustomResource,
  MakeableKind,
  MakeInput,
  MultiVersionOptions,
  ObjectOf,
  PrinterColumn,
  ResolvedVersion,
  ResourceNames,
  ScaleSubresource,
  Scope,
  SingleVersionOptions,
  SpecOf,
  StatusOf,
  VersionDefinition,
  VersionSchemas,
} from "./resource-types.ts";
export { SchemaTranslationError, translateSchema } from "./schema-translate.ts";
export {
  formatProblem,
  type StructuralCheckOptions,
  type StructuralProblem,
  structuralProblems,
} from "./structural.ts";
