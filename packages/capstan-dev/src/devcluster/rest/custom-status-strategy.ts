/**
 * The `/status` strategy of custom resources, as apiextensions-apiserver's
 * `pkg/registry/customresource/status_strategy.go` and `customResourceValidator.ValidateStatusUpdate` give it.
 *
 * ## Expected flow
 * The object store handles a `/status` write (update, any patch type, apply) in three steps:
 * 1. the body, as a whole, is decoded like any write: schema defaults applied, unknown fields pruned
 *    (and reported per `fieldValidation`) — the store's mutators, before anything else;
 * 2. the new object is the stored one with only `status` taken from the body (PrepareForUpdate): spec
 *    and metadata changes sent to `/status` are ignored, not refused;
 * 3. this validator checks the result: `status` against the schema's `status` property (field paths
 *    under `status.`), the scale subresource's status paths, list-type uniqueness over the whole object
 *    (ratcheted: reported only when the stored object had none), then the CEL rules of the whole schema
 *    with the stored object as `oldSelf`, unless an earlier error blocks them. As in Kubernetes 1.32,
 *    neither the schema nor the rules are ratcheted here (status ratcheting came in 1.33): a stored
 *    spec that breaks a rule added since makes `/status` writes fail too.
 *
 * ## Guarantees
 * - Errors come back as field errors; the store answers them with one 422 Invalid Status.
 * - Never throws; kinds without a CRD schema get no errors.
 *
 * ## Caveats
 * - `ValidateTypeMeta` and the metadata update checks are not repeated: the object checked here carries
 *   the stored apiVersion, kind and metadata, which passed them when written.
 */
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { evaluateCelRulesWithoutRatcheting } from "../validation/cel/evaluate.ts";
import { validateScaleStatus } from "../validation/custom-resource.ts";
import type { FieldError } from "../validation/field-errors.ts";
import { validateListSetsAndMaps } from "../validation/list-types.ts";
import type { JSONSchemaProps } from "../validation/schema-types.ts";
import { type ValidationRulesEvaluator, validateCustomObject } from "../validation/schema-validate.ts";
import { withRuleErrors } from "./custom-objects.ts";
import type { ObjectValidator } from "./types.ts";

/**
 * The validator of `/status` writes of custom resources: `obj` is the object about to be stored (the
 * stored one with the new status), `old` the stored one.
 */
export function customObjectStatusValidator(
  rules: ValidationRulesEvaluator = evaluateCelRulesWithoutRatcheting,
): ObjectValidator {
  return (served: ServedResource, obj: JsonObject, old: JsonObject | undefined): FieldError[] => {
    if (!served.custom || served.schema === undefined || old === undefined) return [];
    const schema = served.schema as JSONSchemaProps;
    const errs: FieldError[] = [];
    const statusSchema = schema.properties?.["status"];
    // The real validator checks status only when the object has one (a removed status is not an error).
    if (statusSchema !== undefined && Object.hasOwn(obj, "status")) {
      errs.push(...validateCustomObject(statusSchema, obj["status"], { fieldPrefix: "status" }));
    }
    errs.push(...validateScaleStatus(obj, served.subresources.scale));
    const listErrs = validateListSetsAndMaps(schema, obj);
    if (listErrs.length > 0 && validateListSetsAndMaps(schema, old).length === 0) errs.push(...listErrs);
    return withRuleErrors(schema, obj, old, errs, rules);
  };
}
