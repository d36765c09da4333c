/**
 * The core kinds that are pods or hold a pod template, as kube-apiserver 1.32 validates them
 * (pkg/registry/core/{pod,podtemplate,replicationcontroller}/strategy.go and pkg/apis/core/validation):
 * Pod (create, and what an update may change: core-pod-update.ts), PodTemplate, ReplicationController;
 * with PersistentVolumeClaims (core-pvc.ts) they make the `podValidation` table of the core group.
 *
 * It also exports the pod-template rules the workload kinds of other groups use:
 * `validatePodTemplateSpec` with the options `podTemplateValidationOptions` derives from the stored
 * template. The rules themselves live in core-pod-spec.ts and the modules it names.
 */
import { type FieldError, fieldPath, forbidden, invalid, notSupported, required } from "../field-errors.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import {
  DEFAULTED_EMPTY_SPEC,
  goStringMap,
  podTemplateValidationOptions,
  podValidationOptions,
  validateAppArmorAnnotationsAndFields,
  validatePodMetadataAndSpec,
  validatePodTemplateSpec,
  validateSeccompAnnotationsAndFields,
} from "./core-pod-spec.ts";
import { validatePodUpdate } from "./core-pod-update.ts";
import { persistentVolumeClaimValidation } from "./core-pvc.ts";
import type { GroupValidation, Json } from "./kind-validation.ts";
import { selectsLabels } from "./label-selector.ts";
import { num, obj, objects, objOrEmpty, present, str } from "./zero-values.ts";

export type { PodValidationOptions } from "./core-pod-options.ts";
export { podTemplateValidationOptions, validatePodSpec, validatePodTemplateSpec } from "./core-pod-spec.ts";

/** ValidatePodCreate (without the ObjectMeta). */
function validatePodCreate(pod: Json): FieldError[] {
  const meta = objOrEmpty(pod["metadata"]);
  const spec = objOrEmpty(pod["spec"]);
  const specPath = fieldPath("spec");
  const errs = validatePodMetadataAndSpec(pod, podValidationOptions(undefined));
  if (objects(spec["ephemeralContainers"]).length > 0) {
    errs.push(forbidden(specPath.child("ephemeralContainers"), "cannot be set on create"));
  }
  if (str(spec["nodeName"]) !== "" && objects(spec["schedulingGates"]).length > 0) {
    errs.push(forbidden(specPath.child("nodeName"), "cannot be set until all schedulingGates have been cleared"));
  }
  errs.push(...validateSeccompAnnotationsAndFields(meta, spec, specPath));
  errs.push(...validateAppArmorAnnotationsAndFields(meta, spec, specPath));
  return errs;
}

/** ValidateReplicationControllerSpec. */
function validateReplicationControllerSpec(spec: Json, options: PodValidationOptions): FieldError[] {
  const path = fieldPath("spec");
  const errs: FieldError[] = [];
  const minReadySeconds = num(spec["minReadySeconds"]);
  if (minReadySeconds < 0)
    errs.push(invalid(path.child("minReadySeconds"), minReadySeconds, "must be greater than or equal to 0"));
  const selector = obj(spec["selector"]) ?? {};
  const emptySelector = Object.keys(selector).length === 0;
  if (emptySelector) errs.push(required(path.child("selector")));
  const replicas = num(spec["replicas"]);
  if (replicas < 0) errs.push(invalid(path.child("replicas"), replicas, "must be greater than or equal to 0"));
  const templatePath = path.child("template");
  const template = obj(spec["template"]);
  if (template === undefined) {
    errs.push(required(templatePath));
    return errs;
  }
  const labels = objOrEmpty(template["metadata"])["labels"];
  if (!emptySelector && !selectsLabels({ matchLabels: selector }, labels)) {
    errs.push(
      invalid(
        templatePath.child("metadata", "labels"),
        goStringMap(labels),
        "`selector` does not match template `labels`",
      ),
    );
  }
  errs.push(...validatePodTemplateSpec(template, templatePath, options));
  const templateSpec = obj(template["spec"]) ?? DEFAULTED_EMPTY_SPEC;
  const restartPolicy = str(templateSpec["restartPolicy"]);
  if (restartPolicy !== "Always")
    errs.push(notSupported(templatePath.child("spec", "restartPolicy"), restartPolicy, ["Always"]));
  if (present(templateSpec["activeDeadlineSeconds"])) {
    errs.push(
      forbidden(
        templatePath.child("spec", "activeDeadlineSeconds"),
        "activeDeadlineSeconds in ReplicationController is not Supported",
      ),
    );
  }
  return errs;
}

/** The core group's pod-ish kinds. */
export const podValidation: GroupValidation = {
  pods: {
    create: validatePodCreate,
    update: (next, old) => validatePodUpdate(next, old, podValidationOptions(old)),
  },
  podtemplates: {
    create: (template) =>
      validatePodTemplateSpec(
        template["template"],
        fieldPath("template"),
        podTemplateValidationOptions(template["template"], undefined),
      ),
    update: (next, old) =>
      validatePodTemplateSpec(
        next["template"],
        fieldPath("template"),
        podTemplateValidationOptions(next["template"], old["template"]),
      ),
  },
  replicationcontrollers: {
    create: (rc) => {
      const spec = objOrEmpty(rc["spec"]);
      return validateReplicationControllerSpec(spec, podTemplateValidationOptions(spec["template"], undefined));
    },
    update: (next, old) => {
      // The strategy validates the controller, then ValidateReplicationControllerUpdate validates its
      // spec again: kube-apiserver reports each spec error twice (its message once).
      const spec = objOrEmpty(next["spec"]);
      const errs = validateReplicationControllerSpec(
        spec,
        podTemplateValidationOptions(spec["template"], objOrEmpty(old["spec"])["template"]),
      );
      return [...errs, ...errs];
    },
  },
  persistentvolumeclaims: persistentVolumeClaimValidation,
};
