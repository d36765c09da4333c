/**
 * The custom-object admission path of kube-apiserver in two calls, for the server's write handlers.
 *
 * Expected flow (create, update, patch of a custom resource):
 * 1. `admitCustomObject(schema, obj)`: what decoding does to the body (apply defaults, prune unknown
 *    fields, drop non-nullable nulls); returns the pruned fields' paths for `fieldValidation`
 *    (Warn: `unknown field "spec.foo"` warnings, Strict: a 400/422 as the server chooses).
 * 2. metadata checks (object-meta.ts), then `validateCustomResource(schema, obj, options)`: schema
 *    validation, embedded resources, list-type uniqueness, then CEL rules through the extension point;
 *    in that order, as customResourceStrategy.Validate appends them.
 * For a /status write, call `validateCustomResource(statusSchema, obj.status, { fieldPrefix: "status" })`
 * as customResourceValidator.ValidateStatusUpdate does (schema checks only).
 *
 * Guarantees: pure apart from the documented mutation of step 1; never throws.
 */

import { validateEmbeddedResources } from "./embedded-meta.ts";
import type { FieldError } from "./field-errors.ts";
import { invalid } from "./field-errors.ts";
import { validateListSetsAndMaps } from "./list-types.ts";
import { applyDefaults } from "./schema-default.ts";
import { pruneUnknownFields } from "./schema-prune.ts";
import type { JSONSchemaProps } from "./schema-types.ts";
import {
  BLOCKING_ERROR_TYPES,
  type CustomObjectValidationOptions,
  RULES_SKIPPED_MESSAGE,
  validateCustomObject,
} from "./schema-validate.ts";

/** Defaults, prunes and drops non-nullable nulls in place; returns the removed unknown fields' paths. */
export function admitCustomObject(schema: JSONSchemaProps | undefined, obj: unknown): string[] {
  applyDefaults(schema, obj);
  return pruneUnknownFields(schema, obj);
}

/** Every error the real server's custom resource strategy reports for `obj` (metadata excepted). */
export function validateCustomResource(
  schema: JSONSchemaProps,
  obj: unknown,
  options: CustomObjectValidationOptions = {},
): FieldError[] {
  const { rules, ...schemaOptions } = options;
  const errs = validateCustomObject(schema, obj, schemaOptions);
  if (options.fieldPrefix !== undefined) return rules ? withRules(errs, schema, obj, options) : errs;
  errs.push(...validateEmbeddedResources(schema, obj));
  errs.push(...validateListSetsAndMaps(schema, obj));
  return rules ? withRules(errs, schema, obj, options) : errs;
}

function withRules(
  errs: FieldError[],
  schema: JSONSchemaProps,
  obj: unknown,
  options: CustomObjectValidationOptions,
): FieldError[] {
  if (errs.some((e) => BLOCKING_ERROR_TYPES.has(e.type))) errs.push(invalid("<nil>", null, RULES_SKIPPED_MESSAGE));
  else errs.push(...options.rules!(schema, obj, options.oldObj));
  return errs;
}
