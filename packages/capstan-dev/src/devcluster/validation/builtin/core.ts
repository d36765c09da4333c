/**
 * The core group's kinds other than pods and their templates (core-pod.ts), as
 * pkg/apis/core/validation (Kubernetes 1.32) validates them: Services (core-service.ts), ConfigMaps
 * and Secrets (keys, the 1 MiB cap, a Secret type's required keys, immutability), ServiceAccounts
 * (metadata only), Namespaces (spec.finalizers names on create).
 *
 * A Secret's `stringData` has been merged into `data` by then (scheme-defaults.ts, as conversion to
 * the internal type does), so its keys are checked, and counted, as `data[key]`.
 */
import { goJsonSyntaxError } from "../../machinery/json-syntax-error.ts";
import { jsonEqual } from "../../machinery/semantic-equal.ts";
import { type FieldError, type FieldPath, fieldPath, forbidden, invalid, required, tooLong } from "../field-errors.ts";
import { byteLength, isQualifiedName, nameIsDNS1035Label, regexError } from "../names.ts";
import { validateService, validateServiceUpdate } from "./core-service.ts";
import { type GroupValidation, type Json, record } from "./kind-validation.ts";

/** core.MaxSecretSize: what a ConfigMap's or a Secret's data may hold in all. */
export const MAX_SECRET_SIZE = 1024 * 1024;
/** IsConfigMapKey's length limit (DNS1123SubdomainMaxLength). */
const CONFIG_KEY_MAX_LENGTH = 253;
const CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+";
const CONFIG_KEY_RE = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const IMMUTABLE_MESSAGE = "field is immutable when `immutable` is set";

/** IsConfigMapKey: a ConfigMap's or a Secret's key (also a file name in a volume). */
export function isConfigMapKey(key: string): string[] {
  const errs: string[] = [];
  if (byteLength(key) > CONFIG_KEY_MAX_LENGTH) errs.push(`must be no more than ${CONFIG_KEY_MAX_LENGTH} characters`);
  if (!CONFIG_KEY_RE.test(key)) {
    errs.push(regexError(CONFIG_KEY_ERR, CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"));
  }
  if (key === ".") errs.push("must not be '.'");
  else if (key === "..") errs.push("must not be '..'");
  else if (key.startsWith("..")) errs.push("must not start with '..'");
  return errs;
}

function entries(value: unknown): Array<[string, string]> {
  return Object.entries(record(value) ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : ""]);
}

/** A `[]byte` value as JSON carries it: base64. */
function bytesOf(base64: string): Buffer {
  return Buffer.from(base64, "base64");
}

/** A map[string][]byte as reflect.DeepEqual sees it: absent (nil) and empty differ. */
function sameBytesMap(a: unknown, b: unknown): boolean {
  const ra = record(a);
  const rb = record(b);
  if (ra === undefined || rb === undefined) return ra === rb;
  const ka = Object.keys(ra);
  if (ka.length !== Object.keys(rb).length) return false;
  return ka.every((k) => Object.hasOwn(rb, k) && bytesOf(String(ra[k] ?? "")).equals(bytesOf(String(rb[k] ?? ""))));
}

/** A map[string]string as reflect.DeepEqual sees it. */
function sameStringMap(a: unknown, b: unknown): boolean {
  const ra = record(a);
  const rb = record(b);
  if (ra === undefined || rb === undefined) return ra === rb;
  return jsonEqual(ra, rb);
}

/** ValidateConfigMap: keys of data and binaryData (not in both), the 1 MiB cap on the whole object. */
function validateConfigMap(cm: Json): FieldError[] {
  const errs: FieldError[] = [];
  const binaryData = record(cm["binaryData"]) ?? {};
  let total = 0;
  for (const [key, value] of entries(cm["data"])) {
    const path = fieldPath("data").key(key);
    for (const msg of isConfigMapKey(key)) errs.push(invalid(path, key, msg));
    if (Object.hasOwn(binaryData, key)) errs.push(invalid(path, key, "duplicate of key present in binaryData"));
    total += byteLength(value);
  }
  for (const [key, value] of entries(binaryData)) {
    for (const msg of isConfigMapKey(key)) errs.push(invalid(fieldPath("binaryData").key(key), key, msg));
    total += bytesOf(value).length;
  }
  // NewPath(""): the whole object, rendered "[]".
  if (total > MAX_SECRET_SIZE) errs.push(tooLong("[]", MAX_SECRET_SIZE));
  return errs;
}

/** ValidateConfigMapUpdate: an immutable ConfigMap keeps its data, binaryData and `immutable`. */
function validateConfigMapUpdate(next: Json, old: Json): FieldError[] {
  const errs: FieldError[] = [];
  if (old["immutable"] === true) {
    if (next["immutable"] !== true) errs.push(forbidden(fieldPath("immutable"), IMMUTABLE_MESSAGE));
    if (!sameStringMap(next["data"], old["data"])) errs.push(forbidden(fieldPath("data"), IMMUTABLE_MESSAGE));
    if (!sameBytesMap(next["binaryData"], old["binaryData"]))
      errs.push(forbidden(fieldPath("binaryData"), IMMUTABLE_MESSAGE));
  }
  return [...errs, ...validateConfigMap(next)];
}

/** Go's json.Unmarshal into a map[string]interface{}: its error, or undefined. */
function jsonObjectError(bytes: Buffer): string | undefined {
  const text = bytes.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return goJsonSyntaxError(text);
  }
  if (parsed === null || (typeof parsed === "object" && !Array.isArray(parsed))) return undefined;
  const jsonType = Array.isArray(parsed) ? "array" : typeof parsed === "boolean" ? "bool" : typeof parsed;
  return `json: cannot unmarshal ${jsonType} into Go value of type map[string]interface {}`;
}

/** ValidateSecret: keys, the 1 MiB cap on data, the keys (or annotation) the Secret's type requires. */
function validateSecret(secret: Json): FieldError[] {
  const errs: FieldError[] = [];
  const dataPath = fieldPath("data");
  const data = record(secret["data"]) ?? {};
  let total = 0;
  for (const [key, value] of entries(data)) {
    for (const msg of isConfigMapKey(key)) errs.push(invalid(dataPath.key(key), key, msg));
    total += bytesOf(value).length;
  }
  if (total > MAX_SECRET_SIZE) errs.push(tooLong(dataPath, MAX_SECRET_SIZE));
  const has = (key: string) => Object.hasOwn(data, key);
  const requireJson = (key: string) => {
    if (!has(key)) {
      errs.push(required(dataPath.key(key), ""));
      return;
    }
    const message = jsonObjectError(bytesOf(String(data[key] ?? "")));
    if (message !== undefined) errs.push(invalid(dataPath.key(key), "<secret contents redacted>", message));
  };
  switch (secret["type"]) {
    case "kubernetes.io/service-account-token": {
      const annotations = record(record(secret["metadata"])?.["annotations"]) ?? {};
      const name = annotations["kubernetes.io/service-account.name"];
      if (typeof name !== "string" || name === "")
        errs.push(required(fieldPath("metadata", "annotations").key("kubernetes.io/service-account.name"), ""));
      break;
    }
    case "kubernetes.io/dockercfg":
      requireJson(".dockercfg");
      break;
    case "kubernetes.io/dockerconfigjson":
      requireJson(".dockerconfigjson");
      break;
    case "kubernetes.io/basic-auth":
      // Either may be empty, but one must be there.
      if (!has("username") && !has("password")) {
        errs.push(required(dataPath.key("username"), ""), required(dataPath.key("password"), ""));
      }
      break;
    case "kubernetes.io/ssh-auth":
      if (bytesOf(String(data["ssh-privatekey"] ?? "")).length === 0)
        errs.push(required(dataPath.key("ssh-privatekey"), ""));
      break;
    case "kubernetes.io/tls":
      if (!has("tls.crt")) errs.push(required(dataPath.key("tls.crt"), ""));
      if (!has("tls.key")) errs.push(required(dataPath.key("tls.key"), ""));
      break;
  }
  return errs;
}

/** ValidateSecretUpdate: the type may not change; an immutable Secret keeps its data and `immutable`. */
function validateSecretUpdate(next: Json, old: Json): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof next["type"] === "string" ? next["type"] : "";
  if (type !== (typeof old["type"] === "string" ? old["type"] : ""))
    errs.push(invalid(fieldPath("type"), type, "field is immutable"));
  if (old["immutable"] === true) {
    if (next["immutable"] !== true) errs.push(forbidden(fieldPath("immutable"), IMMUTABLE_MESSAGE));
    if (!sameBytesMap(next["data"], old["data"])) errs.push(forbidden(fieldPath("data"), IMMUTABLE_MESSAGE));
  }
  return [...errs, ...validateSecret(next)];
}

/** A finalizer name kube itself defines (helper.IsStandardFinalizerName). */
const STANDARD_FINALIZERS = new Set(["kubernetes", "orphan", "foregroundDeletion"]);

/** validateFinalizerName: a qualified name, and a bare one must be a standard finalizer. */
function validateFinalizerName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((msg) => invalid(path, name, msg));
  if (!name.includes("/") && !STANDARD_FINALIZERS.has(name))
    errs.push(invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"));
  return errs;
}

/** ValidateNamespace: spec.finalizers (each reported on `spec.finalizers`, without its index, as Go does). */
function validateNamespace(ns: Json): FieldError[] {
  const finalizers = record(ns["spec"])?.["finalizers"];
  if (!Array.isArray(finalizers)) return [];
  return finalizers.flatMap((f) =>
    validateFinalizerName(typeof f === "string" ? f : "", fieldPath("spec", "finalizers")),
  );
}

export const coreValidation: GroupValidation = {
  services: {
    name: nameIsDNS1035Label,
    create: validateService,
    update: (next, old) => validateServiceUpdate(next, old),
  },
  configmaps: { create: validateConfigMap, update: validateConfigMapUpdate },
  secrets: { create: validateSecret, update: validateSecretUpdate },
  // ValidateServiceAccount checks only metadata; its secrets are cleaned, not validated.
  serviceaccounts: { create: () => [] },
  // ValidateNamespaceUpdate checks only metadata (spec.finalizers is kept from the stored namespace).
  namespaces: { create: validateNamespace, update: () => [] },
};
