/**
 * ObjectMeta validation as kube-apiserver performs it (Kubernetes 1.32,
 * apimachinery `pkg/api/validation/objectmeta.go`, `pkg/apis/meta/v1/validation`, and the
 * apiserver's `pkg/registry/rest/{create,update}.go` for what an update resets rather than rejects).
 *
 * Expected flow (create): the server fills generateName into name, then calls
 * `validateObjectMeta(meta, { namespaced, nameRule })` with the kind's name rule; if that passes, the
 * real server checks once more with the path-segment rule (always passes after the stricter ones).
 *
 * Expected flow (update): `prepareObjectMetaForUpdate(new, old)` first (generation, uid,
 * creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds carried over as BeforeUpdate does),
 * then `validateObjectMetaUpdateCommon(new, old, namespaced)` which is BeforeUpdate's
 * validateCommonFields, then the kind's own update checks.
 *
 * Guarantees: pure; never throws on malformed metadata (wrong JSON types are reported, not crashed on).
 * Caveats: Go iterates label/annotation maps in random order; we report in the object's key order.
 */
import type { ObjectMeta } from "kubernetes-types/meta/v1.d.ts";
import { type FieldError, type FieldPath, fieldPath, forbidden, invalid, required, tooLong } from "./field-errors.ts";
import { goQuote } from "./go-format.ts";
import { goPrinted, goSharpPointer, goSharpSlice, goSharpStrings, goSharpStruct } from "./go-sharp-v.ts";
import {
  byteLength,
  isQualifiedName,
  isValidLabelValue,
  type NameValidator,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  nameIsPathSegment,
} from "./names.ts";

/** Which rule an object's name follows. Custom resources use dns1123subdomain; namespaces dns1123label. */
export type NameRule = "dns1123subdomain" | "dns1123label" | "pathSegment";

export interface ObjectMetaOptions {
  /** The kind is namespaced: namespace required (DNS label); cluster-scoped: namespace forbidden. */
  namespaced: boolean;
  /** Defaults to dns1123subdomain. */
  nameRule?: NameRule;
  /** A kind-specific name check used instead of `nameRule` (CRDs: also `<plural>.<group>`). */
  nameValidator?: NameValidator;
}

/** 256 KiB: TotalAnnotationSizeLimitB, the sum of the byte lengths of all annotation keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;
/** FieldManagerMaxLength in meta/v1 validation. */
const FIELD_MANAGER_MAX_LENGTH = 128;
/** MaxSubresourceNameLength in meta/v1 validation. */
const MAX_SUBRESOURCE_NAME_LENGTH = 256;
const FIELD_IMMUTABLE = "field is immutable";
const FINALIZER_ORPHAN = "orphan";
const FINALIZER_FOREGROUND = "foregroundDeletion";

const NAME_RULES: Record<NameRule, NameValidator> = {
  dns1123subdomain: nameIsDNSSubdomain,
  dns1123label: nameIsDNSLabel,
  pathSegment: nameIsPathSegment,
};

type Meta = ObjectMeta & Record<string, unknown>;

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function stringMap(v: unknown): Array<[string, string]> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return [];
  return Object.entries(v as Record<string, unknown>).map(([k, val]) => [k, str(val)]);
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(str) : [];
}

/** ValidateLabels: keys are qualified names, values label values. */
export function validateLabels(labels: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of stringMap(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(invalid(path, k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(invalid(path, v, msg));
  }
  return errs;
}

/** ValidateAnnotations: keys are qualified names (checked lower-cased), total size at most 256 KiB. */
export function validateAnnotations(annotations: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of stringMap(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, msg));
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return errs;
}

/** Splits an apiVersion as schema.ParseGroupVersion does; undefined when it has more than one slash. */
function parseGroupVersion(apiVersion: string): { group: string; version: string } | undefined {
  if (apiVersion === "" || apiVersion === "/") return { group: "", version: "" };
  const parts = apiVersion.split("/");
  if (parts.length === 1) return { group: "", version: apiVersion };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return undefined;
}

/** A metav1.OwnerReference as 1.32's `%#v` prints it (a set *bool shows an address, made up here). */
function ownerRefText(ref: Record<string, unknown>): string {
  return goSharpStruct("v1.OwnerReference", [
    ["APIVersion", goQuote(str(ref["apiVersion"]))],
    ["Kind", goQuote(str(ref["kind"]))],
    ["Name", goQuote(str(ref["name"]))],
    ["UID", goQuote(str(ref["uid"]))],
    ["Controller", goSharpPointer("bool", typeof ref["controller"] !== "boolean")],
    ["BlockOwnerDeletion", goSharpPointer("bool", typeof ref["blockOwnerDeletion"] !== "boolean")],
  ]);
}

function ownerRefValue(ref: Record<string, unknown>): object {
  return goPrinted(ownerRefText(ref));
}

/** A []metav1.OwnerReference as `%#v` prints it. */
function ownerRefsValue(refs: unknown[]): object {
  const texts = refs.map((r) =>
    ownerRefText(r !== null && typeof r === "object" ? (r as Record<string, unknown>) : {}),
  );
  return goPrinted(goSharpSlice("[]v1.OwnerReference", texts));
}

/** ValidateOwnerReferences: apiVersion (with a version), kind, name, uid; no Event owners; one controller. */
export function validateOwnerReferences(refs: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(refs)) return [];
  const errs: FieldError[] = [];
  let firstController = "";
  for (const raw of refs) {
    const ref = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
    const apiVersion = str(ref["apiVersion"]);
    const kind = str(ref["kind"]);
    const name = str(ref["name"]);
    const uid = str(ref["uid"]);
    // FromAPIVersionAndKind drops the version when the apiVersion does not parse.
    const gv = parseGroupVersion(apiVersion) ?? { group: "", version: "" };
    if (gv.version === "") errs.push(invalid(path.child("apiVersion"), apiVersion, "version must not be empty"));
    if (kind === "") errs.push(invalid(path.child("kind"), kind, "kind must not be empty"));
    if (name === "") errs.push(invalid(path.child("name"), name, "name must not be empty"));
    if (uid === "") errs.push(invalid(path.child("uid"), uid, "uid must not be empty"));
    if (gv.group === "" && gv.version === "v1" && kind === "Event") {
      errs.push(invalid(path, ownerRefValue(ref), "/v1, Kind=Event is disallowed from being an owner"));
    }
    if (ref["controller"] === true) {
      const current = `${kind}/${name}`;
      if (firstController !== "") {
        errs.push(
          invalid(
            path,
            ownerRefsValue(refs),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

/** ValidateFinalizers: each a qualified name; orphan and foregroundDeletion not both. */
export function validateFinalizers(finalizers: unknown, path: FieldPath): FieldError[] {
  const list = stringList(finalizers);
  const errs: FieldError[] = [];
  for (const f of list) for (const msg of isQualifiedName(f)) errs.push(invalid(path, f, msg));
  if (list.includes(FINALIZER_ORPHAN) && list.includes(FINALIZER_FOREGROUND)) {
    errs.push(
      invalid(
        path,
        goPrinted(goSharpStrings(list)),
        `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`,
      ),
    );
  }
  return errs;
}

function isPrintable(ch: string): boolean {
  // unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch);
}

/** ValidateManagedFields: operation Apply|Update, fieldsType FieldsV1, manager printable and short. */
export function validateManagedFields(entries: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(entries)) return [];
  const errs: FieldError[] = [];
  entries.forEach((raw, i) => {
    const e = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
    const p = path.index(i);
    const operation = str(e["operation"]);
    if (operation !== "Apply" && operation !== "Update") {
      errs.push(invalid(p.child("operation"), operation, "must be `Apply` or `Update`"));
    }
    const fieldsType = str(e["fieldsType"]);
    if (fieldsType !== "" && fieldsType !== "FieldsV1") {
      errs.push(invalid(p.child("fieldsType"), fieldsType, "must be `FieldsV1`"));
    }
    const manager = str(e["manager"]);
    if (byteLength(manager) > FIELD_MANAGER_MAX_LENGTH)
      errs.push(tooLong(p.child("manager"), FIELD_MANAGER_MAX_LENGTH));
    let bytePos = 0;
    for (const ch of manager) {
      if (!isPrintable(ch)) {
        const cp = ch.codePointAt(0)!;
        const u = "U+" + cp.toString(16).toUpperCase().padStart(4, "0");
        errs.push(invalid(p.child("manager"), manager, `invalid character ${u} (at position ${bytePos})`));
      }
      bytePos += byteLength(ch);
    }
    if (byteLength(str(e["subresource"])) > MAX_SUBRESOURCE_NAME_LENGTH) {
      errs.push(tooLong(p.child("subresource"), MAX_SUBRESOURCE_NAME_LENGTH));
    }
  });
  return errs;
}

/** The checks every object's metadata gets after its name (validateObjectMetaAccessorWithOptsCommon). */
function validateMetaCommon(meta: Meta, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = str(meta.namespace);
  if (namespaced) {
    if (namespace === "") errs.push(required(path.child("namespace")));
    else
      for (const msg of nameIsDNSLabel(namespace, false)) errs.push(invalid(path.child("namespace"), namespace, msg));
  } else if (namespace !== "") {
    errs.push(forbidden(path.child("namespace"), "not allowed on this type"));
  }
  if (typeof meta.generation === "number" && meta.generation < 0) {
    errs.push(invalid(path.child("generation"), meta.generation, "must be greater than or equal to 0"));
  }
  errs.push(...validateLabels(meta.labels, path.child("labels")));
  errs.push(...validateAnnotations(meta.annotations, path.child("annotations")));
  errs.push(...validateOwnerReferences(meta.ownerReferences, path.child("ownerReferences")));
  errs.push(...validateFinalizers(meta.finalizers, path.child("finalizers")));
  errs.push(...validateManagedFields(meta.managedFields, path.child("managedFields")));
  return errs;
}

function validateMetaWith(meta: Meta, namespaced: boolean, nameFn: NameValidator, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = str(meta.generateName);
  if (generateName !== "") {
    for (const msg of nameFn(generateName, true)) errs.push(invalid(path.child("generateName"), generateName, msg));
  }
  const name = str(meta.name);
  if (name === "") errs.push(required(path.child("name"), "name or generateName is required"));
  else for (const msg of nameFn(name, false)) errs.push(invalid(path.child("name"), name, msg));
  errs.push(...validateMetaCommon(meta, namespaced, path));
  return errs;
}

function asMeta(meta: unknown): Meta {
  return (meta !== null && typeof meta === "object" ? meta : {}) as Meta;
}

/** ValidateObjectMetaAccessor: the metadata of an object being created (paths under `metadata`). */
export function validateObjectMeta(meta: ObjectMeta | undefined, options: ObjectMetaOptions): FieldError[] {
  return validateMetaWith(
    asMeta(meta),
    options.namespaced,
    options.nameValidator ?? NAME_RULES[options.nameRule ?? "dns1123subdomain"],
    fieldPath("metadata"),
  );
}

function sameValue(a: unknown, b: unknown): boolean {
  // Semantic.DeepEqual on these scalar fields: absent and empty are the same Go zero value.
  const norm = (v: unknown) => (v === undefined || v === "" ? null : v);
  return norm(a) === norm(b);
}

/** ValidateImmutableField: `shown` is the new value as Go holds it (a nil pointer as null). */
function immutable(path: FieldPath, newVal: unknown, oldVal: unknown, shown: unknown): FieldError[] {
  return sameValue(newVal, oldVal) ? [] : [invalid(path, shown, FIELD_IMMUTABLE)];
}

/**
 * A metav1.Time as a field error prints it: time.Time's String() (a fmt.Stringer), in the server's
 * local zone, which is UTC in a cluster (`2026-02-01 00:00:00 +0000 UTC`); undefined when unset.
 */
function goTime(v: unknown): object | undefined {
  if (typeof v !== "string" || v === "") return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  const fraction = /T\d\d:\d\d:\d\d\.(\d+)/.exec(v)?.[1]?.replace(/0+$/, "") ?? "";
  return goPrinted(`${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? "." + fraction : ""} +0000 UTC`);
}

/** The zero metav1.Time as a field error prints it. */
const GO_ZERO_TIME = "0001-01-01 00:00:00 +0000 UTC";

/**
 * ValidateObjectMetaAccessorUpdate: what an update may not do to metadata. Call after
 * `prepareObjectMetaForUpdate`, which carries over the fields the server resets rather than rejects.
 */
export function validateObjectMetaUpdate(
  newMeta: ObjectMeta | undefined,
  oldMeta: ObjectMeta | undefined,
): FieldError[] {
  const n = asMeta(newMeta);
  const o = asMeta(oldMeta);
  const path = fieldPath("metadata");
  const errs: FieldError[] = [];
  if (o.deletionTimestamp) {
    const oldSet = new Set(stringList(o.finalizers));
    const extra = [...new Set(stringList(n.finalizers))].filter((f) => !oldSet.has(f)).sort();
    if (extra.length > 0) {
      // Go prints the sorted extras with %#v: []string{"a", "b"}.
      const goSlice = goSharpStrings(extra);
      errs.push(
        forbidden(
          path.child("finalizers"),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goSlice}`,
        ),
      );
    }
  }
  if (str(n.resourceVersion) === "") {
    errs.push(invalid(path.child("resourceVersion"), str(n.resourceVersion), "must be specified for an update"));
  }
  const newGen = typeof n.generation === "number" ? n.generation : 0;
  const oldGen = typeof o.generation === "number" ? o.generation : 0;
  if (newGen < oldGen) errs.push(invalid(path.child("generation"), newGen, "must not be decremented"));
  errs.push(...immutable(path.child("name"), str(n.name), str(o.name), str(n.name)));
  errs.push(...immutable(path.child("namespace"), str(n.namespace), str(o.namespace), str(n.namespace)));
  errs.push(...immutable(path.child("uid"), str(n.uid), str(o.uid), str(n.uid)));
  errs.push(
    ...immutable(
      path.child("creationTimestamp"),
      n.creationTimestamp,
      o.creationTimestamp,
      goTime(n.creationTimestamp) ?? goPrinted(GO_ZERO_TIME),
    ),
  );
  errs.push(
    ...immutable(
      path.child("deletionTimestamp"),
      n.deletionTimestamp,
      o.deletionTimestamp,
      goTime(n.deletionTimestamp),
    ),
  );
  errs.push(
    ...immutable(
      path.child("deletionGracePeriodSeconds"),
      n.deletionGracePeriodSeconds,
      o.deletionGracePeriodSeconds,
      n.deletionGracePeriodSeconds,
    ),
  );
  errs.push(...validateLabels(n.labels, path.child("labels")));
  errs.push(...validateAnnotations(n.annotations, path.child("annotations")));
  errs.push(...validateOwnerReferences(n.ownerReferences, path.child("ownerReferences")));
  errs.push(...validateManagedFields(n.managedFields, path.child("managedFields")));
  return errs;
}

/**
 * BeforeUpdate's validateCommonFields: the object's metadata checked with the path-segment rule, then
 * the update rules. The real server appends the kind's own ValidateUpdate errors after these.
 */
export function validateObjectMetaUpdateCommon(
  newMeta: ObjectMeta | undefined,
  oldMeta: ObjectMeta | undefined,
  namespaced: boolean,
): FieldError[] {
  return [
    ...validateMetaWith(asMeta(newMeta), namespaced, nameIsPathSegment, fieldPath("metadata")),
    ...validateObjectMetaUpdate(newMeta, oldMeta),
  ];
}

/**
 * What rest.BeforeUpdate silently restores before validating (mutates `newMeta`): generation is the
 * server's, an empty uid takes the old one, creationTimestamp and a set deletionTimestamp cannot change,
 * and a dropped deletionGracePeriodSeconds comes back.
 */
export function prepareObjectMetaForUpdate(newMetaIn: ObjectMeta, oldMeta: ObjectMeta): void {
  // kubernetes-types marks server-set fields readonly; resetting them is exactly the server's job.
  const newMeta = newMetaIn as { -readonly [K in keyof ObjectMeta]: ObjectMeta[K] };
  if (oldMeta.generation === undefined) delete newMeta.generation;
  else newMeta.generation = oldMeta.generation;
  if (!newMeta.uid && oldMeta.uid !== undefined) newMeta.uid = oldMeta.uid;
  if (oldMeta.creationTimestamp) newMeta.creationTimestamp = oldMeta.creationTimestamp;
  if (oldMeta.deletionTimestamp) newMeta.deletionTimestamp = oldMeta.deletionTimestamp;
  if (oldMeta.deletionGracePeriodSeconds !== undefined && newMeta.deletionGracePeriodSeconds === undefined) {
    newMeta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
  }
}
