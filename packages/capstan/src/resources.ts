/**
 * `capstan/resources`: what `capstan generate` is made of, for tools of your own — CRDs from
 * resource definitions, RBAC rules and manifests from declared needs, TypeBox to Kubernetes schema
 * translation, and the types of a resource definition's options. Defining a resource only needs
 * `defineResource` from `capstan`.
 */
export { type ToCrdOptions, toCrd } from "./resources/crd.ts";
export { isCustomResource, ResourceDefinitionError } from "./resources/define-resource.ts";
export type { SchemaOptions } from "./resources/kube-extensions.ts";
export type { KubeSchema, ValidationRule } from "./resources/kube-schema.ts";
export {
  compareRbac,
  describeGrants,
  describeRequest,
  EVERYONE_RULES,
  type Grant,
  grantAllows,
  grantsOf,
  isUrlRequest,
  leastPrivilegeNeeds,
  OBSERVED_ACCESS_REPORT_KIND,
  type ObservedAccess,
  type ObservedAccessReport,
  type ObservedRequest,
  type ObservedResourceRequest,
  type ObservedRules,
  type ObservedUrlRequest,
  observedRules,
  type RbacComparison,
} from "./resources/observed-rbac.ts";
export {
  deriveRules,
  InvalidVerbError,
  type KindRef,
  metricsReaderRole,
  metricsReaderRoleName,
  type PermissionNeed,
  type PolicyRule,
  type RbacManifest,
  type RbacManifestOptions,
  rbacManifests,
  VERBS,
  type Verb,
} from "./resources/rbac.ts";
export type {
  CustomObject,
  MakeableKind,
  MakeInput,
  MultiVersionOptions,
  PrinterColumn,
  ResolvedVersion,
  ResourceNames,
  ScaleSubresource,
  Scope,
  SingleVersionOptions,
  VersionDefinition,
  VersionSchemas,
} from "./resources/resource-types.ts";
export { SchemaTranslationError, translateSchema } from "./resources/schema-translate.ts";
