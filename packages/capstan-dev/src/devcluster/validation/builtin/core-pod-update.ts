/**
 * What a pod update may change, as kube-apiserver 1.32's ValidatePodUpdate decides: the updated pod
 * must be valid (its pod-specific annotations checked twice, as Go does), the number of containers
 * stays, images may change, activeDeadlineSeconds may be set or lowered, tolerations may be added,
 * scheduling gates removed (and, while gated, node selectors added), a negative grace period may
 * become 1; any other spec change is refused with "pod updates may not change fields other than ..."
 * and a diff (spec-diff.ts).
 *
 * Caveats: a gated pod's node affinity may not change here, where kube-apiserver lets it be narrowed.
 */
import { type FieldError, fieldPath, forbidden, invalid, required } from "../field-errors.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import { validateTolerations } from "./core-pod-scheduling.ts";
import { goStringMap, validatePodMetadataAndSpec, validatePodSpecificAnnotations } from "./core-pod-spec.ts";
import type { Json } from "./kind-validation.ts";
import { goCmpDiff, semanticEqual } from "./spec-diff.ts";
import { inclusiveRangeError, MAX_INT32 } from "./value-formats.ts";
import { num, objects, objOrEmpty, present, str } from "./zero-values.ts";

const APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/";
const MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";

/** updatablePodSpecFields, as 1.32 lists them (InPlacePodVerticalScaling being off). */
const UPDATABLE_FIELDS = [
  "`spec.containers[*].image`",
  "`spec.initContainers[*].image`",
  "`spec.activeDeadlineSeconds`",
  "`spec.tolerations` (only additions to existing tolerations)",
  "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/** ValidatePodSpecificAnnotationUpdates: AppArmor and mirror-pod annotations are fixed at create. */
function validateAnnotationUpdates(next: Json, old: Json, options: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const path = fieldPath("metadata", "annotations");
  const nextAnnotations = objOrEmpty(objOrEmpty(next["metadata"])["annotations"]);
  const oldAnnotations = objOrEmpty(objOrEmpty(old["metadata"])["annotations"]);
  for (const [key, value] of Object.entries(oldAnnotations)) {
    if (Object.hasOwn(nextAnnotations, key) && nextAnnotations[key] === value) continue;
    if (key.startsWith(APPARMOR_PREFIX))
      errs.push(forbidden(path.key(key), "may not remove or update AppArmor annotations"));
    if (key === MIRROR_POD_ANNOTATION)
      errs.push(forbidden(path.key(key), "may not remove or update mirror pod annotation"));
  }
  for (const key of Object.keys(nextAnnotations)) {
    if (Object.hasOwn(oldAnnotations, key)) continue;
    if (key.startsWith(APPARMOR_PREFIX)) errs.push(forbidden(path.key(key), "may not add AppArmor annotations"));
    if (key === MIRROR_POD_ANNOTATION) errs.push(forbidden(path.key(key), "may not add mirror pod annotation"));
  }
  errs.push(...validatePodSpecificAnnotations(nextAnnotations, objOrEmpty(next["spec"]), path, options));
  return errs;
}

/** ValidateContainerUpdates: the same number of containers, each with an image. Returns whether to stop. */
function validateContainerUpdates(next: unknown, old: unknown, key: string): { errs: FieldError[]; stop: boolean } {
  const path = fieldPath("spec", key);
  const nextContainers = objects(next);
  if (nextContainers.length !== objects(old).length) {
    return { errs: [forbidden(path, "pod updates may not add or remove containers")], stop: true };
  }
  const errs: FieldError[] = [];
  nextContainers.forEach((container, i) => {
    const image = str(container["image"]);
    if (image === "") errs.push(required(path.index(i).child("image")));
    if (image.trim() !== image) {
      errs.push(invalid(path.index(i).child("image"), image, "must not have leading or trailing whitespace"));
    }
  });
  return { errs, stop: false };
}

/** validateOnlyAddedTolerations: each stored toleration stays (its tolerationSeconds may change). */
function validateOnlyAddedTolerations(next: unknown, old: unknown): FieldError[] {
  const path = fieldPath("spec", "tolerations");
  const nextTolerations = objects(next);
  for (const toleration of objects(old)) {
    const kept = nextTolerations.some((candidate) =>
      semanticEqual({ ...toleration, tolerationSeconds: candidate["tolerationSeconds"] }, candidate),
    );
    if (!kept) return [forbidden(path, "existing toleration can not be modified except its tolerationSeconds")];
  }
  return validateTolerations(next, path);
}

/** validateOnlyDeletedSchedulingGates. */
function validateOnlyDeletedSchedulingGates(next: unknown, old: unknown): FieldError[] {
  const oldNames = new Set(objects(old).map((g) => str(g["name"])));
  const errs: FieldError[] = [];
  const added = new Map<string, number>();
  objects(next).forEach((gate, i) => {
    added.set(str(gate["name"]), i);
  });
  for (const [name, i] of added) {
    if (oldNames.has(name)) continue;
    errs.push(
      forbidden(
        fieldPath("spec", "schedulingGates").index(i).child("name"),
        `only deletion is allowed, but found new scheduling gate '${name}'`,
      ),
    );
  }
  return errs;
}

/** ValidatePodUpdate (without the ObjectMeta update rules, which the caller checks). */
export function validatePodUpdate(next: Json, old: Json, options: PodValidationOptions): FieldError[] {
  const specPath = fieldPath("spec");
  const nextSpec = objOrEmpty(next["spec"]);
  const oldSpec = objOrEmpty(old["spec"]);
  const errs = [...validatePodMetadataAndSpec(next, options), ...validateAnnotationUpdates(next, old, options)];

  for (const key of ["containers", "initContainers"]) {
    const result = validateContainerUpdates(nextSpec[key], oldSpec[key], key);
    errs.push(...result.errs);
    if (result.stop) return errs;
  }

  const deadlinePath = specPath.child("activeDeadlineSeconds");
  if (present(nextSpec["activeDeadlineSeconds"])) {
    const deadline = num(nextSpec["activeDeadlineSeconds"]);
    if (deadline < 0 || deadline > MAX_INT32) {
      errs.push(invalid(deadlinePath, deadline, inclusiveRangeError(0, MAX_INT32)));
      return errs;
    }
    if (present(oldSpec["activeDeadlineSeconds"]) && num(oldSpec["activeDeadlineSeconds"]) < deadline) {
      errs.push(invalid(deadlinePath, deadline, "must be less than or equal to previous value"));
      return errs;
    }
  } else if (present(oldSpec["activeDeadlineSeconds"])) {
    // Go passes the nil pointer, which field errors print as the string "null".
    errs.push(invalid(deadlinePath, "null", "must not update from a positive integer to nil value"));
  }

  errs.push(...validateOnlyAddedTolerations(nextSpec["tolerations"], oldSpec["tolerations"]));
  errs.push(...validateOnlyDeletedSchedulingGates(nextSpec["schedulingGates"], oldSpec["schedulingGates"]));
  if (semanticEqual(nextSpec, oldSpec)) return errs;

  // What may change is set back to the stored values; anything left different is refused.
  const munged: Json = structuredClone(nextSpec);
  for (const key of ["containers", "initContainers"]) {
    const oldContainers = objects(oldSpec[key]);
    objects(munged[key]).forEach((container, i) => {
      container["image"] = oldContainers[i]?.["image"];
    });
  }
  if (present(oldSpec["activeDeadlineSeconds"])) munged["activeDeadlineSeconds"] = oldSpec["activeDeadlineSeconds"];
  else delete munged["activeDeadlineSeconds"];
  munged["schedulingGates"] = oldSpec["schedulingGates"];
  munged["tolerations"] = oldSpec["tolerations"];
  const oldGrace = oldSpec["terminationGracePeriodSeconds"];
  if (present(oldGrace) && num(oldGrace) < 0 && munged["terminationGracePeriodSeconds"] === 1) {
    munged["terminationGracePeriodSeconds"] = oldGrace;
  }
  if (
    objects(oldSpec["schedulingGates"]).length > 0 &&
    !semanticEqual(munged["nodeSelector"], oldSpec["nodeSelector"])
  ) {
    // A gated pod may gain node selectors, but not lose or change one.
    const nextSelector = objOrEmpty(munged["nodeSelector"]);
    const changed = Object.entries(objOrEmpty(oldSpec["nodeSelector"])).some(
      ([k, v]) => !Object.hasOwn(nextSelector, k) || nextSelector[k] !== v,
    );
    if (changed) {
      errs.push(
        invalid(
          specPath.child("nodeSelector"),
          goStringMap(munged["nodeSelector"]),
          "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
        ),
      );
    }
    munged["nodeSelector"] = oldSpec["nodeSelector"];
  }
  if (!semanticEqual(munged, oldSpec)) {
    const message = `pod updates may not change fields other than ${UPDATABLE_FIELDS.join(",")}`;
    errs.push(forbidden(specPath, `${message}\n${goCmpDiff("core.PodSpec", oldSpec, munged)}`));
  }
  return errs;
}
