/**
 * The swagger 2.0 document kube-apiserver serves at `/openapi/v2`, built from the same schemas as the
 * OpenAPI v3 documents (openapi.ts), as JSON or as the gnostic `openapi.v2.Document` protobuf message.
 *
 * Why kubectl needs it: client-side validation reads it. `kubectl apply|create` first asks the v3
 * documents whether the object's kind takes `fieldValidation`; for a kind the server does not serve (a
 * custom object applied before its CRD) it falls back to validating against this document, which it
 * only accepts as protobuf (client-go `OpenAPISchema()`). With no document kubectl stops at "error
 * validating data: the server could not find the requested resource"; with one that lacks the kind it
 * skips validation and reports the real problem, "resource mapping not found ... ensure CRDs are
 * installed first". `kubectl explain --output=plaintext-openapiv2` prints from it too.
 *
 * Guarantees: every schema of every served group-version's v3 document is a definition, under the same
 * name, with `$ref`s pointing at `#/definitions/`; vendor extensions (`x-kubernetes-*`) carried over;
 * what swagger 2.0 cannot say is left out as apiextensions-apiserver's v2 publishing
 * (ToStructuralOpenAPIV2) leaves it out: `oneOf`/`anyOf`/`not`; a nullable field loses `type`,
 * `items` and `properties` and leaves `required` (so that null still validates); a field keeping
 * unknown fields loses `items` and `properties`; an array without `items` loses its type. A `$ref`
 * wrapped in a one-element `allOf` (how v3 gives a reference a description or default) is the plain
 * `$ref` with its description, as kube-openapi's v2 documents write it.
 *
 * Caveats: the document has definitions only, no `paths`, and that is load-bearing. kube-openapi's
 * reader builds its models from the definitions alone; but kubectl's client-side apply of a built-in
 * kind reads the `consumes` of its PATCH operation in v2's paths to decide whether to compute the
 * strategic merge patch from v2's definitions (kubectl/pkg/cmd/apply/patcher.go). The built-in
 * schemas here carry no `x-kubernetes-patch-merge-key`s (builtin-schemas.ts), so with paths kubectl
 * would replace lists such as `containers` whole; without them it uses its compiled-in types, which
 * carry the merge keys (the v3 documents leave strategic merge out of PATCH's request bodies for the
 * same reason, see openapi.ts).
 */
import { setOwn } from "../machinery/own-properties.ts";

type Json = Record<string, unknown>;

/** The protobuf media type the apiserver answers with. */
export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/** The older spelling client-go still asks for; answered with {@link OPENAPI_V2_PROTOBUF}. */
export const OPENAPI_V2_PROTOBUF_DEPRECATED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

const V3_REF_PREFIX = "#/components/schemas/";
const V2_REF_PREFIX = "#/definitions/";

/** Swagger 2.0 from the schemas of the v3 group-version documents (a schema named twice is one definition). */
export function swaggerDocument(v3Documents: Iterable<Json>, serverVersion: string): Json {
  const definitions: Record<string, Json> = {};
  for (const doc of v3Documents) {
    const schemas = ((doc["components"] as Json | undefined)?.["schemas"] ?? {}) as Record<string, Json>;
    for (const [name, schema] of Object.entries(schemas)) definitions[name] ??= toV2Schema(schema);
  }
  const sorted: Record<string, Json> = {};
  for (const name of Object.keys(definitions).sort()) sorted[name] = definitions[name]!;
  return { swagger: "2.0", info: { title: "Kubernetes", version: serverVersion }, paths: {}, definitions: sorted };
}

/** Keywords of a v3 schema that swagger 2.0 has too; everything else but `x-` extensions is dropped. */
const V2_KEYWORDS = new Set([
  "$ref",
  "format",
  "title",
  "description",
  "default",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxProperties",
  "minProperties",
  "required",
  "enum",
  "additionalProperties",
  "type",
  "items",
  "allOf",
  "properties",
  "readOnly",
  "example",
]);

function toV2Schema(schema: Json): Json {
  const wrapped = plainReference(schema);
  if (wrapped) return wrapped;
  const out: Json = {};
  const nullable = schema["nullable"] === true;
  const untyped = nullable || schema["x-kubernetes-preserve-unknown-fields"] === true;
  for (const [key, value] of Object.entries(schema)) {
    if (!V2_KEYWORDS.has(key) && !key.startsWith("x-")) continue;
    if (key === "type" && nullable) continue;
    if ((key === "items" || key === "properties") && untyped) continue;
    if (key === "type" && value === "array" && (untyped || !isObject(schema["items"]))) continue;
    if (key === "required" && Array.isArray(value)) {
      const props = isObject(schema["properties"]) ? schema["properties"] : {};
      const additional = schema["additionalProperties"];
      if (isObject(additional) && additional["nullable"] === true) continue;
      const kept = value.filter((name) => !(isObject(props[name]) && props[name]["nullable"] === true));
      if (kept.length > 0) out[key] = kept;
      continue;
    }
    if (key === "$ref" && typeof value === "string") {
      out[key] = value.startsWith(V3_REF_PREFIX) ? V2_REF_PREFIX + value.slice(V3_REF_PREFIX.length) : value;
    } else if (key === "properties" && isObject(value)) {
      const props: Json = {};
      // Property names are the CRD author's: `__proto__` is published like any other.
      for (const [name, sub] of Object.entries(value)) if (isObject(sub)) setOwn(props, name, toV2Schema(sub));
      out[key] = props;
    } else if ((key === "items" || key === "additionalProperties") && isObject(value)) {
      out[key] = toV2Schema(value);
    } else if (key === "allOf" && Array.isArray(value)) {
      out[key] = value.filter(isObject).map(toV2Schema);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** `{ allOf: [{ $ref }], description?, default? }` as `{ $ref, description? }`; undefined for anything else. */
function plainReference(schema: Json): Json | undefined {
  const allOf = schema["allOf"];
  if (!Array.isArray(allOf) || allOf.length !== 1 || !isObject(allOf[0])) return undefined;
  const only = allOf[0];
  if (typeof only["$ref"] !== "string" || Object.keys(only).length !== 1) return undefined;
  if (Object.keys(schema).some((k) => k !== "allOf" && k !== "description" && k !== "default")) return undefined;
  const out = toV2Schema({ $ref: only["$ref"] });
  if (typeof schema["description"] === "string") out["description"] = schema["description"];
  return out;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// --- protobuf: the gnostic openapi.v2 messages, only the fields this document uses ---

/** Field numbers of gnostic's `openapi.v2.Schema`. */
const SCHEMA_FIELDS = {
  $ref: 1,
  format: 2,
  title: 3,
  description: 4,
  default: 5,
  multipleOf: 6,
  maximum: 7,
  exclusiveMaximum: 8,
  minimum: 9,
  exclusiveMinimum: 10,
  maxLength: 11,
  minLength: 12,
  pattern: 13,
  maxItems: 14,
  minItems: 15,
  uniqueItems: 16,
  maxProperties: 17,
  minProperties: 18,
  required: 19,
  enum: 20,
  additionalProperties: 21,
  type: 22,
  items: 23,
  allOf: 24,
  properties: 25,
  readOnly: 27,
  example: 30,
  vendorExtension: 31,
} as const;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;

/** A protobuf message under construction: fields appended in order. */
class MessageWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  private push(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }

  private varint(value: number): void {
    const bytes: number[] = [];
    let v = BigInt.asUintN(64, BigInt(Math.trunc(value)));
    while (v >= 0x80n) {
      bytes.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    bytes.push(Number(v));
    this.push(Uint8Array.from(bytes));
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  string(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, "utf8"));
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, WIRE_BYTES);
    this.varint(value.length);
    this.push(value);
    return this;
  }

  message(field: number, value: MessageWriter): this {
    return this.bytes(field, value.finish());
  }

  int64(field: number, value: number): this {
    this.tag(field, WIRE_VARINT);
    this.varint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.int64(field, value ? 1 : 0);
  }

  double(field: number, value: number): this {
    this.tag(field, WIRE_FIXED64);
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value, true);
    this.push(bytes);
    return this;
  }

  finish(): Uint8Array {
    return Buffer.concat(this.chunks, this.length);
  }
}

/** `openapi.v2.Any`: a value as YAML text (JSON is YAML, and what kube-openapi's reader parses). */
function anyValue(value: unknown): MessageWriter {
  return new MessageWriter().string(2, JSON.stringify(value));
}

/** `openapi.v2.NamedAny` (vendor extensions). */
function namedAny(name: string, value: unknown): MessageWriter {
  return new MessageWriter().string(1, name).message(2, anyValue(value));
}

function encodeSchema(schema: Json): MessageWriter {
  const w = new MessageWriter();
  const F = SCHEMA_FIELDS;
  const str = (field: number, v: unknown) => typeof v === "string" && w.string(field, v);
  const int = (field: number, v: unknown) => typeof v === "number" && w.int64(field, v);
  const dbl = (field: number, v: unknown) => typeof v === "number" && w.double(field, v);
  const bool = (field: number, v: unknown) => v === true && w.bool(field, true);
  str(F.$ref, schema["$ref"]);
  str(F.format, schema["format"]);
  str(F.title, schema["title"]);
  str(F.description, schema["description"]);
  if (schema["default"] !== undefined) w.message(F.default, anyValue(schema["default"]));
  dbl(F.multipleOf, schema["multipleOf"]);
  dbl(F.maximum, schema["maximum"]);
  bool(F.exclusiveMaximum, schema["exclusiveMaximum"]);
  dbl(F.minimum, schema["minimum"]);
  bool(F.exclusiveMinimum, schema["exclusiveMinimum"]);
  int(F.maxLength, schema["maxLength"]);
  int(F.minLength, schema["minLength"]);
  str(F.pattern, schema["pattern"]);
  int(F.maxItems, schema["maxItems"]);
  int(F.minItems, schema["minItems"]);
  bool(F.uniqueItems, schema["uniqueItems"]);
  int(F.maxProperties, schema["maxProperties"]);
  int(F.minProperties, schema["minProperties"]);
  if (Array.isArray(schema["required"])) for (const r of schema["required"]) str(F.required, r);
  if (Array.isArray(schema["enum"])) for (const e of schema["enum"]) w.message(F.enum, anyValue(e));
  const additional = schema["additionalProperties"];
  // AdditionalPropertiesItem: oneof { Schema schema = 1; bool boolean = 2; }
  if (isObject(additional)) w.message(F.additionalProperties, new MessageWriter().message(1, encodeSchema(additional)));
  else if (typeof additional === "boolean") {
    w.message(F.additionalProperties, new MessageWriter().bool(2, additional));
  }
  const type = schema["type"];
  // TypeItem: repeated string value = 1
  if (typeof type === "string") w.message(F.type, new MessageWriter().string(1, type));
  // ItemsItem: repeated Schema schema = 1
  if (isObject(schema["items"])) w.message(F.items, new MessageWriter().message(1, encodeSchema(schema["items"])));
  if (Array.isArray(schema["allOf"])) for (const s of schema["allOf"]) w.message(F.allOf, encodeSchema(s as Json));
  if (isObject(schema["properties"])) {
    // Properties: repeated NamedSchema additional_properties = 1; NamedSchema { name = 1; value = 2 }
    const props = new MessageWriter();
    for (const [name, sub] of Object.entries(schema["properties"])) {
      props.message(1, new MessageWriter().string(1, name).message(2, encodeSchema(sub as Json)));
    }
    w.message(F.properties, props);
  }
  bool(F.readOnly, schema["readOnly"]);
  if (schema["example"] !== undefined) w.message(F.example, anyValue(schema["example"]));
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-")) w.message(F.vendorExtension, namedAny(key, value));
  }
  return w;
}

/** The document as gnostic's `openapi.v2.Document` message (what client-go unmarshals). */
export function encodeSwaggerProtobuf(doc: Json): Uint8Array {
  const info = (doc["info"] ?? {}) as Json;
  const w = new MessageWriter().string(1, String(doc["swagger"] ?? "2.0"));
  w.message(2, new MessageWriter().string(1, String(info["title"] ?? "")).string(2, String(info["version"] ?? "")));
  w.message(8, new MessageWriter());
  // Definitions: repeated NamedSchema additional_properties = 1
  const definitions = new MessageWriter();
  for (const [name, schema] of Object.entries((doc["definitions"] ?? {}) as Record<string, Json>)) {
    definitions.message(1, new MessageWriter().string(1, name).message(2, encodeSchema(schema)));
  }
  w.message(9, definitions);
  return w.finish();
}
