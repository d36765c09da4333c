/**
 * PersistentVolumeClaims as kube-apiserver 1.32 validates them (core `ValidatePersistentVolumeClaim`,
 * `ValidatePersistentVolumeClaimSpec`, `ValidatePersistentVolumeClaimUpdate`, and the strategy of
 * pkg/registry/core/persistentvolumeclaim): access modes, the storage request, the storage class and
 * data sources on create; on update a spec that stays as created, except that a bound claim may grow
 * its storage request (RecoverVolumeExpansionFailure, on in 1.32, also lets it shrink back to just
 * above its status capacity) and an unbound claim may be bound to a volume once.
 *
 * The claim spec rules are shared with generic ephemeral volumes' claim templates (core-volumes.ts).
 */
import {
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
} from "../field-errors.ts";
import { withGoSharpV } from "../go-format.ts";
import { isDNS1123Subdomain, nameIsDNSLabel, nameIsDNSSubdomain } from "../names.ts";
import { validatePositiveQuantity, validateResourceQuantityValue } from "./core-resources.ts";
import type { Json, KindValidation } from "./kind-validation.ts";
import { validateLabelSelector } from "./label-selector.ts";
import { compareQuantities, parseQuantity, type Quantity } from "./quantity.ts";
import { goCmpDiff, semanticEqual } from "./spec-diff.ts";
import { obj, objOrEmpty, present, str, strings } from "./zero-values.ts";

/** PersistentVolumeClaimSpecValidationOptions. */
export interface ClaimSpecOptions {
  /** Skip the label-value syntax of the selector's values (the stored claim already had such values). */
  allowInvalidLabelValueInSelector?: boolean;
  /** Skip the API group's syntax in dataSource / dataSourceRef (the stored claim already had a group). */
  allowInvalidAPIGroupInDataSourceOrRef?: boolean;
}

/** supportedAccessModes, in sets.List (sorted) order. */
const ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];
const VOLUME_MODES = ["Block", "Filesystem"];
const STORAGE = "storage";
/** The beta annotation a claim named its storage class with before spec.storageClassName. */
const BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class";
const PVC_IMMUTABLE =
  "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";

/** validateDataSource / validateDataSourceRef: name and kind required, PersistentVolumeClaim in the core group. */
function validateDataSource(ref: Json, path: FieldPath, isRef: boolean, options: ClaimSpecOptions): FieldError[] {
  const errs: FieldError[] = [];
  const kind = str(ref["kind"]);
  if (str(ref["name"]) === "") errs.push(required(path.child("name")));
  if (kind === "") errs.push(required(path.child("kind")));
  const apiGroup = str(ref["apiGroup"]);
  if (apiGroup === "" && kind !== "PersistentVolumeClaim") {
    errs.push(invalid(path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  }
  if (apiGroup !== "" && !options.allowInvalidAPIGroupInDataSourceOrRef) {
    for (const msg of isDNS1123Subdomain(apiGroup)) errs.push(invalid(path.child("apiGroup"), apiGroup, msg));
  }
  const namespace = str(ref["namespace"]);
  if (isRef && namespace !== "") {
    for (const msg of nameIsDNSLabel(namespace, false)) errs.push(invalid(path.child("namespace"), namespace, msg));
  }
  return errs;
}

/** ValidatePersistentVolumeClaimSpec. */
export function validateClaimSpec(spec: Json, path: FieldPath, options: ClaimSpecOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  const modes = strings(spec["accessModes"]);
  if (modes.length === 0) errs.push(required(path.child("accessModes"), "at least 1 access mode is required"));
  if (present(spec["selector"])) {
    errs.push(
      ...validateLabelSelector(spec["selector"], path.child("selector"), {
        allowInvalidLabelValueInSelector: options.allowInvalidLabelValueInSelector,
      }),
    );
  }
  let readWriteOncePod = false;
  let otherMode = false;
  for (const mode of modes) {
    if (!ACCESS_MODES.includes(mode)) errs.push(notSupported(path.child("accessModes"), mode, ACCESS_MODES));
    if (mode === "ReadWriteOncePod") readWriteOncePod = true;
    else if (ACCESS_MODES.includes(mode)) otherMode = true;
  }
  if (readWriteOncePod && otherMode) {
    errs.push(forbidden(path.child("accessModes"), "may not use ReadWriteOncePod with other access modes"));
  }
  const requests = objOrEmpty(objOrEmpty(spec["resources"])["requests"]);
  // Go keys the error on `resources`, not on `resources.requests`.
  const storagePath = path.child("resources").key(STORAGE);
  const storage = Object.hasOwn(requests, STORAGE) ? parseQuantity(requests[STORAGE]) : undefined;
  if (!Object.hasOwn(requests, STORAGE)) errs.push(required(storagePath));
  else if (storage !== undefined) {
    const positive = validatePositiveQuantity(storage, storagePath);
    errs.push(...(positive.length > 0 ? positive : validateResourceQuantityValue(STORAGE, storage, storagePath)));
  }
  const storageClassName = str(spec["storageClassName"]);
  if (storageClassName !== "") {
    for (const msg of nameIsDNSSubdomain(storageClassName, false)) {
      errs.push(invalid(path.child("storageClassName"), storageClassName, msg));
    }
  }
  if (present(spec["volumeMode"]) && !VOLUME_MODES.includes(str(spec["volumeMode"]))) {
    errs.push(notSupported(path.child("volumeMode"), str(spec["volumeMode"]), VOLUME_MODES));
  }
  const dataSource = obj(spec["dataSource"]);
  const dataSourceRef = obj(spec["dataSourceRef"]);
  if (dataSource) errs.push(...validateDataSource(dataSource, path.child("dataSource"), false, options));
  if (dataSourceRef) errs.push(...validateDataSource(dataSourceRef, path.child("dataSourceRef"), true, options));
  if (dataSourceRef && str(dataSourceRef["namespace"]) !== "") {
    if (dataSource) {
      errs.push(invalid(path, pathBadValue(), "may not be specified when dataSourceRef.namespace is specified"));
    }
  } else if (dataSource && dataSourceRef && !sameDataSource(dataSource, dataSourceRef)) {
    errs.push(invalid(path, pathBadValue(), "must match dataSourceRef"));
  }
  return errs;
}

/**
 * Go passes the `*field.Path` of `dataSource` as the bad value of the two consistency errors; field
 * errors print the Path it points to with %#v (its parent's address differs on every run: made up here).
 */
function pathBadValue(): object {
  return withGoSharpV({}, `field.Path{name:"dataSource", index:"", parent:(*field.Path)(0xc000000000)}`);
}

function sameDataSource(a: Json, b: Json): boolean {
  return a["apiGroup"] === b["apiGroup"] && str(a["kind"]) === str(b["kind"]) && str(a["name"]) === str(b["name"]);
}

function storageRequest(claim: Json): Quantity {
  const requests = objOrEmpty(objOrEmpty(objOrEmpty(claim["spec"])["resources"])["requests"]);
  return parseQuantity(requests[STORAGE]) ?? ZERO;
}

const ZERO: Quantity = parseQuantity("0")!;

/** ValidationOptionsForPersistentVolumeClaim: what a stored claim keeps that a new one may not have. */
function claimOptions(old: Json | undefined): ClaimSpecOptions {
  if (old === undefined) return {};
  const spec = objOrEmpty(old["spec"]);
  return {
    allowInvalidAPIGroupInDataSourceOrRef:
      present(objOrEmpty(spec["dataSource"])["apiGroup"]) || present(objOrEmpty(spec["dataSourceRef"])["apiGroup"]),
    allowInvalidLabelValueInSelector: validateLabelSelector(spec["selector"], fieldPath("spec")).length > 0,
  };
}

/**
 * ValidatePersistentVolumeClaimUpdate's own checks (after the spec's): the beta storage-class
 * annotation may not change, the spec may not change except as a binding or a bound claim's resize
 * allow, a storage request may not drop to the status capacity, the volume mode is immutable.
 */
function validateClaimUpdate(next: Json, old: Json): FieldError[] {
  const errs: FieldError[] = [];
  const nextSpec: Json = structuredClone(objOrEmpty(next["spec"]));
  const oldSpec: Json = structuredClone(objOrEmpty(old["spec"]));
  if (str(oldSpec["volumeName"]) === "") oldSpec["volumeName"] = nextSpec["volumeName"];

  const oldAnnotations = objOrEmpty(objOrEmpty(old["metadata"])["annotations"]);
  const nextAnnotations = objOrEmpty(objOrEmpty(next["metadata"])["annotations"]);
  const oldHasAnnotation = Object.hasOwn(oldAnnotations, BETA_STORAGE_CLASS_ANNOTATION);
  const oldAnnotation = str(oldAnnotations[BETA_STORAGE_CLASS_ANNOTATION]);
  const nextAnnotation = str(nextAnnotations[BETA_STORAGE_CLASS_ANNOTATION]);
  const oldClass = oldSpec["storageClassName"];
  const nextClass = nextSpec["storageClassName"];
  const upgradeFromAnnotation =
    oldHasAnnotation &&
    !present(oldClass) &&
    present(nextClass) &&
    str(nextClass) === oldAnnotation &&
    (!Object.hasOwn(nextAnnotations, BETA_STORAGE_CLASS_ANNOTATION) || nextAnnotation === oldAnnotation);
  if (upgradeFromAnnotation) {
    delete nextSpec["storageClassName"];
  } else {
    if (nextAnnotation !== oldAnnotation) {
      errs.push(
        invalid(
          fieldPath("metadata").child("annotations", BETA_STORAGE_CLASS_ANNOTATION),
          nextAnnotation,
          "field is immutable",
        ),
      );
    }
    // A claim without a class may get one (the default class, set retroactively), matching its annotation if any.
    if (present(nextClass) && !present(oldClass) && (!oldHasAnnotation || str(nextClass) === oldAnnotation)) {
      delete nextSpec["storageClassName"];
    }
  }
  // The strategy keeps the stored status on a spec write: a bound claim may change its storage request.
  const bound = str(objOrEmpty(old["status"])["phase"]) === "Bound";
  const nextResources = objOrEmpty(nextSpec["resources"]);
  if (bound && present(nextResources["requests"])) {
    const requests = objOrEmpty(nextResources["requests"]);
    const oldStorage = objOrEmpty(objOrEmpty(oldSpec["resources"])["requests"])[STORAGE];
    if (oldStorage === undefined) delete requests[STORAGE];
    else requests[STORAGE] = oldStorage;
  }
  if (!semanticEqual(nextSpec, oldSpec)) {
    errs.push(
      forbidden(
        fieldPath("spec"),
        `${PVC_IMMUTABLE}\n${goCmpDiff("core.PersistentVolumeClaimSpec", oldSpec, nextSpec)}`,
      ),
    );
  }
  const nextSize = storageRequest(next);
  const oldSize = storageRequest(old);
  const statusSize = parseQuantity(objOrEmpty(objOrEmpty(old["status"])["capacity"])[STORAGE]) ?? ZERO;
  // RecoverVolumeExpansionFailure (beta, on in 1.32): a request may shrink, but not to the capacity.
  if (compareQuantities(nextSize, oldSize) < 0 && compareQuantities(nextSize, statusSize) <= 0) {
    errs.push(
      forbidden(fieldPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"),
    );
  }
  const nextMode = objOrEmpty(next["spec"])["volumeMode"];
  const oldMode = objOrEmpty(old["spec"])["volumeMode"];
  if (str(nextMode) !== str(oldMode) || present(nextMode) !== present(oldMode)) {
    // Go prints the *PersistentVolumeMode it compares: a nil one as the string "null", else the mode.
    errs.push(invalid("volumeMode", present(nextMode) ? str(nextMode) : "null", "field is immutable"));
  }
  return errs;
}

/** The kind: `persistentvolumeclaims`. */
export const persistentVolumeClaimValidation: KindValidation = {
  create(claim) {
    return validateClaimSpec(objOrEmpty(claim["spec"]), fieldPath("spec"), claimOptions(undefined));
  },
  update(next, old) {
    // The strategy validates the claim, then ValidatePersistentVolumeClaimUpdate validates it again
    // before its own checks: kube-apiserver reports each spec error twice (its message once).
    const spec = validateClaimSpec(objOrEmpty(next["spec"]), fieldPath("spec"), claimOptions(old));
    return [...spec, ...spec, ...validateClaimUpdate(next, old)];
  },
};
