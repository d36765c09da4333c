/**
 * Custom objects against their CRD's structural schema, as apiextensions-apiserver treats them: schema
 * defaults applied, unknown fields pruned, then validation whose errors make a 422 Invalid.
 */
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { evaluateCelRules } from "../validation/cel/evaluate.ts";
import { validateScaleSpec, validateScaleStatus } from "../validation/custom-resource.ts";
import { validateEmbeddedResources } from "../validation/embedded-meta.ts";
import { type FieldError, invalid } from "../validation/field-errors.ts";
import { validateListSetsAndMaps } from "../validation/list-types.ts";
import { applyDefaults } from "../validation/schema-default.ts";
import { pruneUnknownFields } from "../validation/schema-prune.ts";
import type { JSONSchemaProps } from "../validation/schema-types.ts";
import {
  BLOCKING_ERROR_TYPES,
  hasValidationRules,
  RULES_SKIPPED_MESSAGE,
  type ValidationRulesEvaluator,
  validateCustomObject,
} from "../validation/schema-validate.ts";
import type { ObjectMutator, ObjectValidator } from "./types.ts";

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
 * The custom resource strategy's validation (registry/customresource/strategy.go Validate and
 * ValidateUpdate), in its order: the schema (ratcheted on update), the scale subresource's replicas
 * paths, embedded resources, list-type uniqueness (on update only when the stored object had no such
 * error), then the x-kubernetes-validations rules (CEL, by default validation/cel/) unless a blocking
 * error came first. Rules are wired only for schemas that have some: the real server has no CEL
 * validator otherwise, so no "some validation rules were not checked" message either.
 */
export function customObjectValidator(rules: ValidationRulesEvaluator = evaluateCelRules): ObjectValidator {
  return (served: ServedResource, obj: JsonObject, old: JsonObject | undefined): FieldError[] => {
    const schema = schemaOf(served);
    if (!schema) return [];
    const scale = served.subresources.scale;
    const errs = validateCustomObject(schema, obj, { oldObj: old });
    errs.push(...validateScaleSpec(obj, scale), ...validateScaleStatus(obj, scale));
    errs.push(...validateEmbeddedResources(schema, obj));
    if (old === undefined || validateListSetsAndMaps(schema, old).length === 0) {
      errs.push(...validateListSetsAndMaps(schema, obj));
    }
    return withRuleErrors(schema, obj, old, errs, rules);
  };
}

/**
 * `errs` followed by the x-kubernetes-validations rules' errors, or by the "rules were not checked"
 * message when a blocking error came first. The CEL validator exists only for schemas with rules: no
 * message for a schema without any.
 */
export function withRuleErrors(
  schema: JSONSchemaProps,
  obj: JsonObject,
  old: JsonObject | undefined,
  errs: FieldError[],
  rules: ValidationRulesEvaluator,
): FieldError[] {
  if (!hasRules(schema)) return errs;
  if (errs.some((e) => BLOCKING_ERROR_TYPES.has(e.type))) errs.push(invalid("<nil>", null, RULES_SKIPPED_MESSAGE));
  else errs.push(...rules(schema, obj, old));
  return errs;
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
