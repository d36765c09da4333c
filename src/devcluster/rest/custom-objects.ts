/**
 * Custom objects against their CRD's structural schema, as apiextensions-apiserver treats them: schema
 * defaults applied, unknown fields pruned, then validation whose errors make a 422 Invalid.
 */
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { evaluateCelRules } from "../validation/cel/evaluate.ts";
import type { FieldError } from "../validation/field-errors.ts";
import { applyDefaults } from "../validation/schema-default.ts";
import { pruneUnknownFields } from "../validation/schema-prune.ts";
import type { JSONSchemaProps } from "../validation/schema-types.ts";
import {
  hasValidationRules,
  type ValidationRulesEvaluator,
  validateCustomObject,
} from "../validation/schema-validate.ts";
import type { ObjectMutator, ObjectValidator } from "./object-store.ts";

function schemaOf(served: ServedResource): JSONSchemaProps | undefined {
  return served.custom && served.schema !== undefined ? (served.schema as JSONSchemaProps) : undefined;
}

/** Defaults, then prunes (the order of the CRD handler's decoding). */
export const customObjectMutator: ObjectMutator = (served: ServedResource, obj: JsonObject) => {
  const schema = schemaOf(served);
  if (!schema) return undefined;
  applyDefaults(schema, obj);
  return pruneUnknownFields(schema, obj);
};

/**
 * Schema validation of custom objects, then their x-kubernetes-validations rules (CEL, by default
 * validation/cel/). Rules are wired only for schemas that have some: the real server has no CEL
 * validator otherwise, so no "some validation rules were not checked" message either.
 */
export function customObjectValidator(rules: ValidationRulesEvaluator = evaluateCelRules): ObjectValidator {
  return (served: ServedResource, obj: JsonObject, old: JsonObject | undefined): FieldError[] => {
    const schema = schemaOf(served);
    if (!schema) return [];
    return validateCustomObject(schema, obj, { oldObj: old, rules: hasRules(schema) ? rules : undefined });
  };
}

/** hasValidationRules, once per schema object (a served CRD version keeps its schema object). */
const withRules = new WeakMap<JSONSchemaProps, boolean>();
function hasRules(schema: JSONSchemaProps): boolean {
  let has = withRules.get(schema);
  if (has === undefined) {
    has = hasValidationRules(schema);
    withRules.set(schema, has);
  }
  return has;
}
