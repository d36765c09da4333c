/**
 * The structural schema rules a CRD version's OpenAPI v3 schema must follow, with the real server's
 * messages (apiextensions-apiserver `pkg/apiserver/schema/{convert,validation,complete}.go`, 1.32).
 *
 * A schema is structural when every node specifies a type (or is int-or-string / preserves unknown
 * fields), value validations (anyOf/allOf/oneOf/not) only repeat what the structure already declares,
 * and metadata is left alone. `validateStructural` returns the violations sorted by message, exactly
 * as ValidateStructural sorts them, so the order is the real server's.
 */
import { type FieldError, type FieldPath, fieldErrorMessage, forbidden, invalid, required } from "./field-errors.ts";
import { goRegexpError } from "./go-regexp.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

type Level = "root" | "item" | "field";

function isSchema(v: unknown): v is JSONSchemaProps {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function nonEmpty(v: unknown): boolean {
  return typeof v === "string" && v.length > 0;
}

/**
 * NewStructural's refusal of fields a structural schema cannot express, or undefined. The real server
 * reports this text only when nothing else was wrong with the schema.
 */
export function newStructuralError(s: JSONSchemaProps): string | undefined {
  const walk = (n: JSONSchemaProps, nested: boolean): string | undefined => {
    if (nonEmpty(n.id)) return "OpenAPIV3Schema 'id' is not supported";
    if (nonEmpty(n.$schema)) return "OpenAPIV3Schema 'schema' is not supported";
    if (n.$ref !== undefined && n.$ref !== null) return "OpenAPIV3Schema '$ref' is not supported";
    if (n.patternProperties && Object.keys(n.patternProperties).length > 0) {
      return "OpenAPIV3Schema 'patternProperties' is not supported";
    }
    if (n.dependencies && Object.keys(n.dependencies).length > 0)
      return "OpenAPIV3Schema 'dependencies' is not supported";
    if (n.additionalItems !== undefined && n.additionalItems !== null)
      return "OpenAPIV3Schema 'additionalItems' is not supported";
    if (n.definitions && Object.keys(n.definitions).length > 0) return "OpenAPIV3Schema 'definitions' is not supported";
    for (const sub of [n.not, ...(n.allOf ?? []), ...(n.anyOf ?? []), ...(n.oneOf ?? [])]) {
      if (isSchema(sub)) {
        const e = walk(sub, true);
        if (e) return e;
      }
    }
    if (Array.isArray(n.items)) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
    if (isSchema(n.items)) {
      const e = walk(n.items, nested);
      if (e) return e;
    }
    for (const p of Object.values(n.properties ?? {})) {
      if (isSchema(p)) {
        const e = walk(p, nested);
        if (e) return e;
      }
    }
    if (isSchema(n.additionalProperties)) return walk(n.additionalProperties, nested);
    return undefined;
  };
  return walk(s, false);
}

/** The int-or-string idiom `anyOf: [{type: integer}, {type: string}]`, which may name types. */
function isIntOrStringAnyOf(anyOf: JSONSchemaProps[] | undefined): boolean {
  if (anyOf?.length !== 2) return false;
  const only = (s: JSONSchemaProps, t: string) => isSchema(s) && Object.keys(s).length === 1 && s.type === t;
  return only(anyOf[0]!, "integer") && only(anyOf[1]!, "string");
}

function validateValueValidation(
  s: JSONSchemaProps,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  lvl: Level,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!skipAnyOf)
    (s.anyOf ?? []).forEach((v, i) => void errs.push(...validateNested(v, false, lvl, path.child("anyOf").index(i))));
  (s.allOf ?? []).forEach((v, i) => {
    errs.push(...validateNested(v, skipFirstAllOfAnyOf && i === 0, lvl, path.child("allOf").index(i)));
  });
  (s.oneOf ?? []).forEach((v, i) => void errs.push(...validateNested(v, false, lvl, path.child("oneOf").index(i))));
  if (isSchema(s.not)) errs.push(...validateNested(s.not, false, lvl, path.child("not")));
  if (nonEmpty(s.pattern)) {
    const err = goRegexpError(s.pattern!);
    if (err)
      errs.push(invalid(path.child("pattern"), s.pattern, `must be a valid regular expression, but isn't: ${err}`));
  }
  return errs;
}

/** validateNestedValueValidation: what anyOf/allOf/oneOf/not members may not say. */
function validateNested(v: JSONSchemaProps, skipAnyOf: boolean, lvl: Level, path: FieldPath): FieldError[] {
  if (!isSchema(v)) return [];
  const errs = validateValueValidation(v, skipAnyOf, false, lvl, path);
  if (isSchema(v.items)) errs.push(...validateNested(v.items, false, lvl, path.child("items")));
  for (const [k, p] of Object.entries(v.properties ?? {})) {
    errs.push(...validateNested(p, false, "field", path.child("properties").key(k)));
  }
  if (nonEmpty(v.type)) errs.push(forbidden(path.child("type"), "must be empty to be structural"));
  // additionalProperties: false is no NestedValueValidation at all in Go, so only a schema or true counts.
  if (isSchema(v.additionalProperties) || v.additionalProperties === true) {
    errs.push(forbidden(path.child("additionalProperties"), "must be undefined to be structural"));
  }
  if (v.default !== undefined && v.default !== null)
    errs.push(forbidden(path.child("default"), "must be undefined to be structural"));
  if (nonEmpty(v.title)) errs.push(forbidden(path.child("title"), "must be empty to be structural"));
  if (nonEmpty(v.description)) errs.push(forbidden(path.child("description"), "must be empty to be structural"));
  if (v.nullable === true) errs.push(forbidden(path.child("nullable"), "must be false to be structural"));
  if (v["x-kubernetes-preserve-unknown-fields"] === true) {
    errs.push(forbidden(path.child("x-kubernetes-preserve-unknown-fields"), "must be false to be structural"));
  }
  if (v["x-kubernetes-embedded-resource"] === true) {
    errs.push(forbidden(path.child("x-kubernetes-embedded-resource"), "must be false to be structural"));
  }
  if (v["x-kubernetes-int-or-string"] === true) {
    errs.push(forbidden(path.child("x-kubernetes-int-or-string"), "must be false to be structural"));
  }
  if ((v["x-kubernetes-list-map-keys"] ?? []).length > 0) {
    errs.push(forbidden(path.child("x-kubernetes-list-map-keys"), "must be empty to be structural"));
  }
  if (v["x-kubernetes-list-type"] !== undefined && v["x-kubernetes-list-type"] !== null) {
    errs.push(forbidden(path.child("x-kubernetes-list-type"), "must be undefined to be structural"));
  }
  if (v["x-kubernetes-map-type"] !== undefined && v["x-kubernetes-map-type"] !== null) {
    errs.push(forbidden(path.child("x-kubernetes-map-type"), "must be undefined to be structural"));
  }
  if ((v["x-kubernetes-validations"] ?? []).length > 0) {
    errs.push(forbidden(path.child("x-kubernetes-validations"), "must be empty to be structural"));
  }
  if (v.properties && Object.hasOwn(v.properties, "metadata")) {
    errs.push(forbidden(path.child("properties").key("metadata"), "must not be specified in a nested context"));
  }
  return errs;
}

/** Keys of a root `metadata` schema that are allowed (name/generateName alone) or ignored (type, default). */
function rootMetadataIsEmpty(m: JSONSchemaProps): boolean {
  const props = Object.keys(m.properties ?? {});
  const onlyNames =
    (props.length === 2 && props.includes("name") && props.includes("generateName")) ||
    (props.length === 1 && (props[0] === "name" || props[0] === "generateName"));
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined) continue;
    if (k === "type" || k === "default") continue;
    if (k === "properties" && (onlyNames || props.length === 0)) continue;
    // Zero values are what Go's DeepEqual sees as "not specified".
    if (v === false || v === "" || v === null) continue;
    return false;
  }
  return true;
}

function validateInvariants(s: JSONSchemaProps, lvl: Level, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof s.type === "string" ? s.type : "";
  if (type === "array" && !isSchema(s.items)) errs.push(required(path.child("items"), "must be specified"));
  if (isSchema(s.items)) errs.push(...validateInvariants(s.items, "item", path.child("items")));
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    if (isSchema(v)) errs.push(...validateInvariants(v, "field", path.child("properties").key(k)));
  }
  const ap = s.additionalProperties;
  if (ap !== undefined && ap !== null) {
    if (lvl === "root") errs.push(forbidden(path.child("additionalProperties"), "must not be used at the root"));
    if (isSchema(ap)) errs.push(...validateInvariants(ap, "field", path.child("additionalProperties")));
  }
  const intOrString = s["x-kubernetes-int-or-string"] === true;
  const preserve = s["x-kubernetes-preserve-unknown-fields"] === true;
  const embedded = s["x-kubernetes-embedded-resource"] === true;
  if (intOrString && preserve) {
    errs.push(
      invalid(
        path.child("x-kubernetes-preserve-unknown-fields"),
        true,
        "must be false if x-kubernetes-int-or-string is true",
      ),
    );
  }
  if (intOrString && embedded) {
    errs.push(
      invalid(
        path.child("x-kubernetes-embedded-resource"),
        true,
        "must be false if x-kubernetes-int-or-string is true",
      ),
    );
  }
  const skipFirstAllOfAnyOf =
    (s.allOf ?? []).length >= 1 && isSchema(s.allOf![0]) && isIntOrStringAnyOf(s.allOf![0].anyOf);
  errs.push(...validateValueValidation(s, isIntOrStringAnyOf(s.anyOf), skipFirstAllOfAnyOf, lvl, path));

  const checkMetadata = lvl === "root" || embedded;
  if (embedded && type !== "object") {
    if (type === "")
      errs.push(required(path.child("type"), "must be object if x-kubernetes-embedded-resource is true"));
    else errs.push(invalid(path.child("type"), type, "must be object if x-kubernetes-embedded-resource is true"));
  } else if (type === "" && !intOrString && !preserve) {
    const detail =
      lvl === "root"
        ? "must not be empty at the root"
        : lvl === "item"
          ? "must not be empty for specified array items"
          : "must not be empty for specified object fields";
    errs.push(required(path.child("type"), detail));
  }
  if (embedded && ap !== undefined && ap !== null) {
    errs.push(
      forbidden(path.child("additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set"),
    );
  }
  if (lvl === "root" && type !== "" && type !== "object")
    errs.push(invalid(path.child("type"), type, "must be object at the root"));
  const props = s.properties ?? {};
  for (const meta of ["kind", "apiVersion"]) {
    const p = props[meta];
    if (p && checkMetadata) {
      const t = typeof p.type === "string" ? p.type : "";
      if (t !== "string") errs.push(invalid(path.child("properties").key(meta).child("type"), t, "must be string"));
    }
  }
  const metadata = props["metadata"];
  if (isSchema(metadata)) {
    const mp = path.child("properties").key("metadata");
    const mt = typeof metadata.type === "string" ? metadata.type : "";
    if (checkMetadata && mt !== "object") errs.push(invalid(mp.child("type"), mt, "must be object"));
    if (lvl === "root" && !rootMetadataIsEmpty(metadata)) {
      errs.push(
        forbidden(
          mp,
          "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ),
      );
    }
  }
  if (embedded && !preserve && Object.keys(props).length === 0) {
    errs.push(
      required(
        path.child("properties"),
        "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
      ),
    );
  }
  return errs;
}

/** validateStructuralCompleteness: the root's value validations may only mention fields the structure has. */
function validateCompleteness(s: JSONSchemaProps, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const checkValue = (v: JSONSchemaProps, st: JSONSchemaProps | undefined, sPath: FieldPath, vPath: FieldPath) => {
    if (isSchema(v.not)) checkNested(v.not, st, sPath, vPath.child("not"));
    (v.allOf ?? []).forEach((x, i) => {
      checkNested(x, st, sPath, vPath.child("allOf").index(i));
    });
    (v.anyOf ?? []).forEach((x, i) => {
      checkNested(x, st, sPath, vPath.child("anyOf").index(i));
    });
    (v.oneOf ?? []).forEach((x, i) => {
      checkNested(x, st, sPath, vPath.child("oneOf").index(i));
    });
  };
  const checkNested = (v: JSONSchemaProps, st: JSONSchemaProps | undefined, sPath: FieldPath, vPath: FieldPath) => {
    if (!isSchema(v)) return;
    if (st === undefined) {
      errs.push(required(sPath, `because it is defined in ${vPath.toString()}`));
      return;
    }
    checkValue(v, st, sPath, vPath);
    if (isSchema(v.items))
      checkNested(v.items, isSchema(st.items) ? st.items : undefined, sPath.child("items"), vPath.child("items"));
    for (const [k, vf] of Object.entries(v.properties ?? {})) {
      const sf = st.properties?.[k];
      if (!isSchema(sf)) {
        errs.push(
          required(
            sPath.child("properties").key(k),
            `because it is defined in ${vPath.child("properties").key(k).toString()}`,
          ),
        );
      } else {
        checkNested(vf, sf, sPath.child("properties").key(k), vPath.child("properties").key(k));
      }
    }
  };
  checkValue(s, s, path, path);
  return errs;
}

/** ValidateStructural: every structural-schema violation under `path`, sorted by message as Go sorts them. */
export function validateStructural(path: FieldPath, schema: JSONSchemaProps): FieldError[] {
  const errs = [...validateInvariants(schema, "root", path), ...validateCompleteness(schema, path)];
  const keyed = errs.map((e) => [fieldErrorMessage(e), e] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map(([, e]) => e);
}

/** Whether a schema fails NewStructural or ValidateStructural (used to relax update rules for old CRDs). */
export function schemaIsNonStructural(schema: JSONSchemaProps | undefined, path: FieldPath): boolean {
  if (!isSchema(schema)) return false;
  return newStructuralError(schema) !== undefined || validateStructural(path, schema).length > 0;
}
