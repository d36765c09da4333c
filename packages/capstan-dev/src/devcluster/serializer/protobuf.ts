/**
 * Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), which kubectl's
 * typed commands send for built-in kinds. The envelope is the 4-byte magic `k8s\0` followed by a
 * runtime.Unknown message (typeMeta, raw); `raw` is the object in the kind's message schema
 * (protobuf-schema.ts). The result is the object's JSON form, with Go's omitempty applied to the
 * zero values the Go encoder writes for non-pointer fields.
 */
import { MAX_NESTING_DEPTH } from "../machinery/json-syntax-error.ts";
import { setOwn } from "../machinery/own-properties.ts";
import { badRequest, unsupportedMediaType } from "../machinery/status.ts";
import { nestsDeeperThan, parseJsonLimited } from "./nesting-depth.ts";
import { type FieldSpec, PROTOBUF_MESSAGES } from "./protobuf-schema.ts";

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** The protobuf package of each API group whose kinds can be decoded. */
const GROUP_PACKAGES: Record<string, string> = {
  "": "core",
  apps: "apps",
  autoscaling: "autoscaling",
  "certificates.k8s.io": "certificates",
  "rbac.authorization.k8s.io": "rbac",
  "coordination.k8s.io": "coordination",
  "authentication.k8s.io": "authentication",
  "authorization.k8s.io": "authorization",
  batch: "batch",
  "networking.k8s.io": "networking",
  policy: "policy",
  "scheduling.k8s.io": "scheduling",
};

/** Fields whose empty object is a value (`emptyDir: {}` is the volume's source, `data: {}` the content). */
const KEEP_EMPTY = new Set(["data", "emptyDir"]);

/** Integer fields whose 0 is a value, not an absent pointer (the encoder writes pointers only when set). */
const KEEP_ZERO = new Set(["replicas"]);

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}

  done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): number {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error("truncated varint");
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      if (shift > 70n) throw new Error("varint too long");
    }
    return Number(BigInt.asIntN(64, result));
  }

  bytes(): Uint8Array {
    const length = this.varint();
    if (length < 0 || this.pos + length > this.buf.length) throw new Error("truncated length-delimited field");
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

const utf8 = new TextDecoder();

/** Decodes a protobuf request body into the object's JSON form. Throws 400 for malformed input, 415 for kinds without a schema. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || MAGIC.some((b, i) => body[i] !== b)) {
    throw badRequest("provided protobuf object is missing the Kubernetes 'k8s\\x00' prefix");
  }
  let envelope: Record<string, unknown>;
  try {
    envelope = decodeMessage(new Reader(body.subarray(4)), "runtime.Unknown", true);
  } catch (err) {
    throw badRequest(`unable to decode protobuf envelope: ${(err as Error).message}`);
  }
  const typeMeta = (envelope["typeMeta"] ?? {}) as { apiVersion?: string; kind?: string };
  const apiVersion = typeMeta.apiVersion ?? "";
  const kind = typeMeta.kind ?? "";
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  const pkg = GROUP_PACKAGES[group];
  const type = pkg === undefined ? undefined : `${pkg}.${kind}`;
  if (type === undefined || !PROTOBUF_MESSAGES[type]) {
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    );
  }
  const raw = envelope["raw"];
  if (typeof raw !== "string") return { apiVersion, kind };
  try {
    const obj = decodeMessage(new Reader(Buffer.from(raw, "base64")), type, false);
    // Lists, maps and embedded JSON (RawExtension) nest deeper than the messages holding them.
    if (nestsDeeperThan(obj)) throw new Error(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
    return { apiVersion, kind, ...obj };
  } catch (err) {
    throw badRequest(`unable to decode protobuf ${kind}: ${(err as Error).message}`);
  }
}

/**
 * How many messages are being decoded inside each other. Protobuf has no depth limit of its own (Go's
 * stack grows), but recursive messages (JSONSchemaProps) would overflow ours: the JSON limit applies.
 */
let messageDepth = 0;

function decodeMessage(reader: Reader, type: string, keepZero: boolean): Record<string, unknown> {
  if (messageDepth >= MAX_NESTING_DEPTH) throw new Error(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
  messageDepth++;
  try {
    return decodeFields(reader, type, keepZero);
  } finally {
    messageDepth--;
  }
}

function decodeFields(reader: Reader, type: string, keepZero: boolean): Record<string, unknown> {
  const schema = PROTOBUF_MESSAGES[type];
  if (!schema) throw new Error(`no schema for ${type}`);
  const out: Record<string, unknown> = {};
  while (!reader.done()) {
    const tag = reader.varint();
    const field = tag >>> 3;
    const wireType = tag & 7;
    const spec = schema[field];
    if (!spec) {
      reader.skip(wireType);
      continue;
    }
    const [name, kind, messageType, repeated] = spec;
    if (kind.startsWith("M")) {
      const entry = decodeMapEntry(new Reader(reader.bytes()), kind.slice(1), messageType);
      if (out[name] === undefined) out[name] = {};
      // Map keys are user data (a ConfigMap may hold `__proto__`): an own key, never the prototype.
      setOwn(out[name] as Record<string, unknown>, entry.key, entry.value);
      continue;
    }
    if (repeated && wireType === 2 && (kind === "i" || kind === "b" || kind === "d")) {
      // Packed repeated scalars.
      const packed = new Reader(reader.bytes());
      if (out[name] === undefined) out[name] = [];
      const list = out[name] as unknown[];
      while (!packed.done()) list.push(kind === "b" ? packed.varint() !== 0 : packed.varint());
      continue;
    }
    const value = decodeValue(reader, kind, messageType, wireType);
    // A struct embedded inline (IngressRule's IngressRuleValue): its fields are the parent's in JSON.
    if (name === "" && value !== null && typeof value === "object") Object.assign(out, value);
    else if (!repeated) out[name] = value;
    else if (Array.isArray(out[name])) (out[name] as unknown[]).push(value);
    else out[name] = [value];
  }
  return keepZero ? out : omitEmpty(out);
}

function decodeValue(reader: Reader, kind: string, messageType: string | undefined, wireType: number): unknown {
  switch (kind) {
    case "s":
      return utf8.decode(reader.bytes());
    case "i":
      return reader.varint();
    case "b":
      return reader.varint() !== 0;
    case "d": {
      if (wireType === 1) {
        const value = Buffer.from(reader.buf.subarray(reader.pos, reader.pos + 8)).readDoubleLE(0);
        reader.pos += 8;
        return value;
      }
      const value = Buffer.from(reader.buf.subarray(reader.pos, reader.pos + 4)).readFloatLE(0);
      reader.pos += 4;
      return value;
    }
    case "y":
      return Buffer.from(reader.bytes()).toString("base64");
    case "m":
      return decodeMessage(new Reader(reader.bytes()), messageType!, false);
    default:
      return decodeSpecial(new Reader(reader.bytes()), kind);
  }
}

/** Types whose JSON form is not their message form. */
function decodeSpecial(reader: Reader, kind: string): unknown {
  const fields = new Map<number, unknown>();
  while (!reader.done()) {
    const tag = reader.varint();
    const wireType = tag & 7;
    const field = tag >>> 3;
    if (wireType === 0) fields.set(field, reader.varint());
    else if (wireType === 2) fields.set(field, reader.bytes());
    else reader.skip(wireType);
  }
  const text = (n: number) => {
    const v = fields.get(n);
    return v instanceof Uint8Array ? utf8.decode(v) : "";
  };
  switch (kind) {
    case "t":
    case "T": {
      const seconds = fields.get(1);
      if (typeof seconds !== "number") return undefined; // the zero Time: omitted
      const nanos = typeof fields.get(2) === "number" ? (fields.get(2) as number) : 0;
      const iso = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "");
      return kind === "T" ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, "0")}Z` : `${iso}Z`;
    }
    case "q":
      return text(1);
    case "n":
      return fields.get(1) === 1 ? text(3) : ((fields.get(2) as number | undefined) ?? 0);
    case "u":
      return `${((fields.get(1) as number | undefined) ?? 0) / 1e9}s`;
    case "r":
    case "f": {
      const raw = text(1);
      return raw === "" ? undefined : parseJsonLimited(raw);
    }
    default:
      return undefined;
  }
}

function decodeMapEntry(
  reader: Reader,
  valueKind: string,
  messageType: string | undefined,
): { key: string; value: unknown } {
  let key = "";
  let value: unknown = valueKind === "s" ? "" : undefined;
  while (!reader.done()) {
    const tag = reader.varint();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1) key = utf8.decode(reader.bytes());
    else if (field === 2)
      value =
        valueKind === "m"
          ? decodeMessage(new Reader(reader.bytes()), messageType!, false)
          : decodeValue(reader, valueKind, messageType, wireType);
    else reader.skip(wireType);
  }
  if (value === undefined && valueKind === "y") value = "";
  return { key, value };
}

/** Go's omitempty on what the encoder wrote for non-pointer fields: "", 0, false and empty structs go. */
function omitEmpty(obj: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(obj)) {
    if (
      value === undefined ||
      value === "" ||
      value === false ||
      (value === 0 && !KEEP_ZERO.has(key)) ||
      (value !== null &&
        typeof value === "object" &&
        !Array.isArray(value) &&
        Object.keys(value).length === 0 &&
        !KEEP_EMPTY.has(key))
    ) {
      delete obj[key];
    }
  }
  return obj;
}

export type { FieldSpec };
