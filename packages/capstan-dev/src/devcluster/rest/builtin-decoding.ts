/**
 * Built-in objects decoded as kube-apiserver decodes them: into their Go struct, with
 * sigs.k8s.io/json's case-sensitive strict decoder (k8s.io/apimachinery runtime/serializer/json).
 * A JSON value of the wrong type is a 400 BadRequest carrying encoding/json's UnmarshalTypeError;
 * a field the struct does not have is an unknown field, dropped from the object and reported for
 * `fieldValidation` (Strict: 400, Warn: a warning, Ignore: nothing).
 *
 * ## Expected flow
 * The store calls {@link BuiltinDecoder.prepare} before a write of a built-in kind (the first one of a
 * kind awaits its field tree, built from @kubernetes/client-node's generated models, once per
 * process), then {@link BuiltinDecoder.decode} on the body of a create or update, or on the patched
 * result of a patch.
 *
 * ## Guarantees
 * - The type error is the one Go's decoder returns: the first UnmarshalTypeError in document order
 *   (`json: cannot unmarshal <json type> into Go struct field <Struct>.<field.path> of type <go type>`,
 *   the path being the struct fields without map keys or indices, as Go 1.20+ prints it), unless a
 *   field with its own UnmarshalJSON (Quantity, IntOrString, Time) fails later: that error stops the
 *   decoder and wins.
 * - Unknown field paths are sigs.k8s.io/json's strict paths (`spec.template.spec.containers[0].imagee`,
 *   map keys included), in document order, without what lies below an unknown field.
 * - null is accepted everywhere (Go leaves the zero value); `any` fields (RawExtension, FieldsV1,
 *   JSON) accept anything; IntOrString accepts a string or an int32; quantities accept a string or a
 *   number.
 * - Time and MicroTime fields come out as kube-apiserver prints them back (machinery/go-time.ts): UTC,
 *   whole seconds or exactly 6 fractional digits, `null` for Go's zero time; a string time.Parse
 *   refuses is its ParseError (`parsing time "..." as "2006-01-02T15:04:05Z07:00": cannot parse ...`),
 *   which stops the decoder. A pointer time sent as null is dropped; a value time (never omitted by
 *   Go) is kept as null, and written as null when a struct present in the body lacks it.
 * - A kind without a client-node model is not checked.
 *
 * ## Caveats
 * - The models name no Go named types: those of non-struct fields come from a table transcribed from
 *   k8s.io/api (builtin-named-types.ts: `of type v1.PullPolicy`); struct names (`EnvVar`) and
 *   packages (`v1.PodSpec`) are derived from the model names; named maps other than ResourceList
 *   print as `map[string]...`.
 * - Quantity fields are told apart from strings by the table below (client-node types them `string`);
 *   a quantity string is checked only against ParseQuantity's regular expression, base64 (`[]byte`)
 *   not at all.
 * - Structs Go declares by value are not written when the body lacks them: a template without
 *   `metadata` stays without it, where Go prints `metadata: {creationTimestamp: null}`.
 * - Duplicate JSON fields are not detected (the body is parsed by JSON.parse, which keeps the last).
 * - JSON numbers are seen after parsing: `3.0` is accepted as an integer, where Go refuses it.
 */

import { GoTimeParseError, metaTimeJson, microTimeJson } from "../machinery/go-time.ts";
import { type ApiError, badRequest } from "../machinery/status.ts";
import { type Attribute, loadModel, modelCandidates } from "../registry/builtin-schemas.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { GO_NAMED_TYPES } from "./builtin-named-types.ts";
import { VALUE_TIME_FIELDS } from "./builtin-time-fields.ts";
import { encodeObjectMeta } from "./object-meta-encoding.ts";

/** What a field holds, as far as decoding is concerned. */
type Shape =
  | { readonly k: "intstr" | "quantity" | "any" }
  | TimeShape
  /** `go`: the declared named type (`v1.PullPolicy`) when it is not the basic one. */
  | { readonly k: "string" | "bool" | "float" | "bytes"; readonly go?: string }
  | { readonly k: "int"; readonly bits: "int32" | "int64"; readonly go?: string }
  | { readonly k: "array" | "map"; readonly of: Shape; readonly go: string }
  | StructShape;

/**
 * metav1.Time (`micro` false) or metav1.MicroTime. `value`: declared by value, not as a pointer (null
 * kept, and written when absent: builtin-time-fields.ts).
 */
interface TimeShape {
  readonly k: "time";
  readonly micro: boolean;
  readonly value: boolean;
}

interface StructShape {
  readonly k: "struct";
  /** The Go type's name (`EnvVar`), as UnmarshalTypeError names the struct holding a field. */
  readonly name: string;
  /** reflect's Type.String() (`v1.EnvVar`). */
  readonly go: string;
  readonly fields: Map<string, Shape>;
  /** The value (non-pointer) time fields, which Go always prints: `null` when the body has none. */
  readonly valueTimes: string[];
}

const STRING: Shape = { k: "string" };
const BOOL: Shape = { k: "bool" };
const FLOAT: Shape = { k: "float" };
const BYTES: Shape = { k: "bytes" };
const TIME: TimeShape = { k: "time", micro: false, value: false };
const MICRO_TIME: TimeShape = { k: "time", micro: true, value: false };
const INT_OR_STRING: Shape = { k: "intstr" };
const QUANTITY: Shape = { k: "quantity" };
const ANY: Shape = { k: "any" };
const INT32: Shape = { k: "int", bits: "int32" };
const INT64: Shape = { k: "int", bits: "int64" };

/**
 * The fields k8s.io/api declares as resource.Quantity (`q`), []resource.Quantity (`qlist`), or maps of
 * quantities (`rlist`: the named v1.ResourceList, `qmap`: another map), by Go struct and JSON name:
 * client-node's models type them as strings, which a number (`cpu: 1`) would not fit. Taken from
 * k8s.io/api's types.go files (core, autoscaling, node, resource, storage).
 */
const QUANTITY_FIELDS: Readonly<Record<string, "q" | "qlist" | "rlist" | "qmap">> = {
  "PersistentVolumeSpec.capacity": "rlist",
  "PersistentVolumeClaimStatus.capacity": "rlist",
  "PersistentVolumeClaimStatus.allocatedResources": "rlist",
  "EmptyDirVolumeSource.sizeLimit": "q",
  "ResourceFieldSelector.divisor": "q",
  "ResourceRequirements.limits": "rlist",
  "ResourceRequirements.requests": "rlist",
  "VolumeResourceRequirements.limits": "rlist",
  "VolumeResourceRequirements.requests": "rlist",
  "ContainerStatus.allocatedResources": "rlist",
  "PodSpec.overhead": "rlist",
  "PodStatus.allocatedResources": "rlist",
  "NodeStatus.capacity": "rlist",
  "NodeStatus.allocatable": "rlist",
  "LimitRangeItem.max": "rlist",
  "LimitRangeItem.min": "rlist",
  "LimitRangeItem.default": "rlist",
  "LimitRangeItem.defaultRequest": "rlist",
  "LimitRangeItem.maxLimitRequestRatio": "rlist",
  "ResourceQuotaSpec.hard": "rlist",
  "ResourceQuotaStatus.hard": "rlist",
  "ResourceQuotaStatus.used": "rlist",
  "Overhead.podFixed": "rlist",
  "ObjectMetricSource.targetValue": "q",
  "ObjectMetricSource.averageValue": "q",
  "PodsMetricSource.targetAverageValue": "q",
  "ResourceMetricSource.targetAverageValue": "q",
  "ContainerResourceMetricSource.targetAverageValue": "q",
  "ExternalMetricSource.targetValue": "q",
  "ExternalMetricSource.targetAverageValue": "q",
  "ObjectMetricStatus.currentValue": "q",
  "ObjectMetricStatus.averageValue": "q",
  "PodsMetricStatus.currentAverageValue": "q",
  "ResourceMetricStatus.currentAverageValue": "q",
  "ContainerResourceMetricStatus.currentAverageValue": "q",
  "ExternalMetricStatus.currentValue": "q",
  "ExternalMetricStatus.currentAverageValue": "q",
  "HPAScalingRules.tolerance": "q",
  "MetricTarget.value": "q",
  "MetricTarget.averageValue": "q",
  "MetricValueStatus.value": "q",
  "MetricValueStatus.averageValue": "q",
  "CSIStorageCapacity.capacity": "q",
  "CSIStorageCapacity.maximumVolumeSize": "q",
  "NodeAllocatableMapping.capacityMultiplier": "q",
  "NodeAllocatableMapping.deviceMultiplier": "q",
  "NodeAllocatableOverhead.perPod": "q",
  "NodeAllocatableOverhead.perContainer": "q",
  "DeviceCapacity.value": "q",
  "Counter.value": "q",
  "CapacityRequestPolicy.default": "q",
  "CapacityRequestPolicy.validValues": "qlist",
  "CapacityRequestPolicyRange.min": "q",
  "CapacityRequestPolicyRange.max": "q",
  "CapacityRequestPolicyRange.step": "q",
  "CapacityRequirements.requests": "qmap",
  "DeviceRequestAllocationResult.consumedCapacity": "qmap",
  "ShareableCapacityStatus.total": "q",
  "ShareableCapacityStatus.consumed": "q",
  "ShareableCapacityStatus.available": "q",
};

function quantityShape(struct: string, field: string): Shape | undefined {
  switch (QUANTITY_FIELDS[`${struct}.${field}`]) {
    case "q":
      return QUANTITY;
    case "qlist":
      return { k: "array", of: QUANTITY, go: "[]resource.Quantity" };
    case "rlist":
      return { k: "map", of: QUANTITY, go: "v1.ResourceList" };
    case "qmap":
      return { k: "map", of: QUANTITY, go: "map[string]resource.Quantity" };
    default:
      return undefined;
  }
}

/** `CoreV1Event` -> package `v1`, type `Event`; `V2MetricTarget` -> `v2`, `MetricTarget`. */
const MODEL_NAME = /^(?:[A-Z][a-z]+)*?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$/;

/** The field trees of the models, built once per process (the models do not change). */
const structs = new Map<string, Promise<StructShape | undefined>>();

/**
 * Builds under way. A struct another build is filling is taken without waiting (that is what keeps
 * recursive types from waiting on themselves), so a kind is complete only once none is left.
 */
const pendingBuilds = new Set<Promise<unknown>>();

function structOf(model: string): Promise<StructShape | undefined> {
  let shape = structs.get(model);
  if (!shape) {
    const build = buildStruct(model);
    shape = build;
    structs.set(model, build);
    pendingBuilds.add(build);
    const done = () => pendingBuilds.delete(build);
    build.then(done, done);
  }
  return shape;
}

/** Resolves once every build started so far (and those they started) has finished. */
async function buildsSettled(): Promise<void> {
  while (pendingBuilds.size > 0) await Promise.allSettled([...pendingBuilds]);
}

/**
 * The struct shape of `model`. Resolves once its field map is complete down to the leaves; a field
 * referring back to a struct being built (JSONSchemaProps) takes its object without waiting for it.
 */
async function buildStruct(model: string): Promise<StructShape | undefined> {
  const attributes = await loadModel(model);
  if (!attributes) return undefined;
  const parts = MODEL_NAME.exec(model);
  const name = parts ? parts[2]! : model;
  const pkg = parts ? parts[1]!.toLowerCase() : "v1";
  const shape: StructShape = { k: "struct", name, go: `${pkg}.${name}`, fields: new Map(), valueTimes: [] };
  building.set(model, shape);
  const shapes = await Promise.all(
    attributes.map(
      async (a) =>
        quantityShape(name, a.baseName) ?? named(name, a.baseName, await shapeOf(a.type, a.format || undefined)),
    ),
  );
  attributes.forEach((a: Attribute, i) => {
    let field = shapes[i]!;
    if (field.k === "time" && VALUE_TIME_FIELDS.has(`${name}.${a.baseName}`)) {
      field = { ...field, value: true };
      shape.valueTimes.push(a.baseName);
    }
    shape.fields.set(a.baseName, field);
  });
  return shape;
}

/** `shape` with the Go named type k8s.io/api declares for `struct.field`, if any (GO_NAMED_TYPES). */
function named(struct: string, field: string, shape: Shape): Shape {
  const go = GO_NAMED_TYPES[`${struct}.${field}`];
  if (go === undefined) return shape;
  switch (shape.k) {
    case "string":
    case "bool":
    case "float":
    case "bytes":
    case "int":
      return go.startsWith("[]") ? shape : { ...shape, go };
    case "array": {
      const of = shape.of;
      if (!go.startsWith("[]") || (of.k !== "string" && of.k !== "int")) return shape;
      return { k: "array", of: { ...of, go: go.slice(2) }, go };
    }
    default:
      return shape;
  }
}

/** Structs whose fields are being filled: recursive references take these rather than awaiting. */
const building = new Map<string, StructShape>();

async function shapeOf(type: string, format: string | undefined): Promise<Shape> {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    const of = await shapeOf(array[1]!, undefined);
    return { k: "array", of, go: `[]${goName(of)}` };
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    const of = await shapeOf(map[1]!, format);
    return { k: "map", of, go: `map[string]${goName(of)}` };
  }
  switch (type) {
    case "string":
      return format === "byte" ? BYTES : STRING;
    case "number":
      return format === "int32" ? INT32 : format === "int64" ? INT64 : FLOAT;
    case "boolean":
      return BOOL;
    case "Date":
      return TIME;
    case "V1MicroTime":
      return MICRO_TIME;
    case "IntOrString":
      return INT_OR_STRING;
    case "any":
    case "object":
      return ANY;
  }
  const pending = building.get(type);
  if (pending) return pending;
  return (await structOf(type)) ?? ANY;
}

/** reflect's Type.String() of a shape, for the `of type` part of an UnmarshalTypeError. */
function goName(shape: Shape): string {
  switch (shape.k) {
    case "string":
      return shape.go ?? "string";
    case "bool":
      return shape.go ?? "bool";
    case "float":
      return shape.go ?? "float64";
    case "bytes":
      return shape.go ?? "[]uint8";
    case "int":
      return shape.go ?? shape.bits;
    case "time":
      return shape.micro ? "v1.MicroTime" : "v1.Time";
    case "intstr":
      return "intstr.IntOrString";
    case "quantity":
      return "resource.Quantity";
    case "any":
      return "runtime.RawExtension";
    default:
      return shape.go;
  }
}

/** encoding/json's name for a JSON value in an UnmarshalTypeError (`number 1.5` for a number that does not fit). */
function jsonValueName(value: unknown): string {
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
      return "string";
    case "boolean":
      return "bool";
    case "number":
      return "number";
    default:
      return "object";
  }
}

/** ParseQuantity's format (k8s.io/apimachinery/pkg/api/resource splitREString). */
const QUANTITY_FORMAT = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
const QUANTITY_RE = new RegExp(QUANTITY_FORMAT);
const QUANTITY_ERROR = `quantities must match the regular expression '${QUANTITY_FORMAT}'`;

const INT32_MAX = 2 ** 31 - 1;
const INT64_MAX = 2 ** 63;

function fitsInt(value: number, go: "int32" | "int64"): boolean {
  if (!Number.isInteger(value)) return false;
  return go === "int32" ? value >= -INT32_MAX - 1 && value <= INT32_MAX : value >= -INT64_MAX && value < INT64_MAX;
}

/** A decoder error that stops decoding at once (an UnmarshalJSON method failing). */
class Abort {
  constructor(readonly message: string) {}
}

/**
 * One decoding pass: Go's errorContext (the struct holding the current field and the field stack) and
 * sigs.k8s.io/json's strict path, as stacks so that nothing is joined unless an error needs it.
 */
class Decoding {
  typeError: string | undefined;
  readonly unknown: string[] = [];
  private struct = "";
  private readonly fieldStack: string[] = [];
  private readonly strictStack: string[] = [];

  /**
   * Checks `value` against `shape` and returns it as Go would print it back: the same value, except
   * times (UTC, their precision, `null` for Go's zero time).
   */
  value(value: unknown, shape: Shape): unknown {
    if (value === null || value === undefined) return value; // null leaves Go's zero value
    switch (shape.k) {
      case "any":
        return value;
      case "string":
        if (typeof value !== "string") this.misfit(jsonValueName(value), goName(shape));
        return value;
      case "bool":
        if (typeof value !== "boolean") this.misfit(jsonValueName(value), goName(shape));
        return value;
      case "float":
        if (typeof value !== "number") this.misfit(jsonValueName(value), goName(shape));
        return value;
      case "bytes":
        if (typeof value !== "string") this.misfit(jsonValueName(value), goName(shape));
        return value;
      case "int":
        if (typeof value !== "number") this.misfit(jsonValueName(value), goName(shape));
        else if (!fitsInt(value, shape.bits)) this.misfit(`number ${value}`, goName(shape));
        return value;
      case "time":
        // Time's UnmarshalJSON decodes a string first (its UnmarshalTypeError gets the field's context),
        // then time.Parse's error stops the decoder.
        if (typeof value !== "string") throw new Abort(this.typeErrorMessage(jsonValueName(value), "string"));
        try {
          return shape.micro ? microTimeJson(value) : metaTimeJson(value);
        } catch (err) {
          if (err instanceof GoTimeParseError) throw new Abort(err.message);
          throw err;
        }
      case "intstr":
        // IntOrString's UnmarshalJSON: a string, else an int32.
        if (typeof value === "string") return value;
        if (typeof value !== "number") throw new Abort(this.typeErrorMessage(jsonValueName(value), "int32"));
        if (!fitsInt(value, "int32")) throw new Abort(this.typeErrorMessage(`number ${value}`, "int32"));
        return value;
      case "quantity":
        // Quantity's UnmarshalJSON parses the literal (unquoted when a string): anything else fails ParseQuantity.
        if (typeof value === "number") return value;
        if (typeof value !== "string" || !QUANTITY_RE.test(value.trim())) throw new Abort(QUANTITY_ERROR);
        return value;
      case "array":
        if (!Array.isArray(value)) {
          this.misfit(jsonValueName(value), shape.go);
          return value;
        }
        for (let i = 0; i < value.length; i++) {
          this.strictStack.push(`[${i}]`);
          const item = value[i];
          const decoded = this.value(item, shape.of);
          if (decoded !== item) value[i] = decoded;
          this.strictStack.pop();
        }
        return value;
      case "map":
        if (typeof value !== "object" || Array.isArray(value)) {
          this.misfit(jsonValueName(value), shape.go);
          return value;
        }
        for (const key in value as Record<string, unknown>) {
          this.strictStack.push(this.strictStack.length === 0 ? key : `.${key}`);
          const item = (value as Record<string, unknown>)[key];
          const decoded = this.value(item, shape.of);
          if (decoded !== item) (value as Record<string, unknown>)[key] = decoded;
          this.strictStack.pop();
        }
        return value;
      case "struct":
        if (typeof value !== "object" || Array.isArray(value)) {
          this.misfit(jsonValueName(value), shape.go);
          return value;
        }
        this.object(value as Record<string, unknown>, shape);
        return value;
    }
  }

  private object(obj: Record<string, unknown>, shape: StructShape): void {
    const outer = this.struct;
    for (const key in obj) {
      const field = shape.fields.get(key);
      if (field === undefined) {
        this.unknown.push(this.strictStack.length === 0 ? key : `${this.strictStack.join("")}.${key}`);
        delete obj[key];
        continue;
      }
      this.struct = shape.name;
      this.fieldStack.push(key);
      this.strictStack.push(this.strictStack.length === 0 ? key : `.${key}`);
      const item = obj[key];
      const decoded = this.value(item, field);
      // A pointer time sent as null is nil, which omitempty leaves out (a zero time is printed as null).
      if (item === null && field.k === "time" && !field.value) delete obj[key];
      else if (decoded !== item) obj[key] = decoded;
      this.strictStack.pop();
      this.fieldStack.pop();
      this.struct = outer;
    }
    for (const key of shape.valueTimes) if (obj[key] === undefined) obj[key] = null;
  }

  /** decodeState.saveError: the first type error is kept, decoding goes on. */
  private misfit(value: string, go: string): void {
    this.typeError ??= this.typeErrorMessage(value, go);
  }

  private typeErrorMessage(value: string, go: string): string {
    if (this.fieldStack.length === 0) return `json: cannot unmarshal ${value} into Go value of type ${go}`;
    return `json: cannot unmarshal ${value} into Go struct field ${this.struct}.${this.fieldStack.join(".")} of type ${go}`;
  }
}

/** The first model of a served kind that exists, resolved once per kind. */
interface KindEntry {
  ready: Promise<void>;
  shape: StructShape | undefined;
  loaded: boolean;
}

/**
 * Decodes built-in objects against their kind's Go struct (see the module comment). One per store;
 * the field trees it loads are shared by the whole process.
 */
export class BuiltinDecoder {
  private readonly kinds = new Map<string, KindEntry>();

  /** Undefined when {@link decode} can run for `served` now; otherwise the load to await first. */
  prepare(served: ServedResource): Promise<void> | undefined {
    if (served.custom) return undefined;
    const key = kindKey(served);
    const known = this.kinds.get(key);
    if (known) return known.loaded ? undefined : known.ready;
    const entry: KindEntry = { ready: Promise.resolve(), shape: undefined, loaded: false };
    entry.ready = (async () => {
      for (const candidate of modelCandidates(served.group, served.version, served.kind)) {
        const shape = await structOf(candidate);
        if (shape) {
          entry.shape = shape;
          break;
        }
      }
      await buildsSettled();
      entry.loaded = true;
    })();
    this.kinds.set(key, entry);
    return entry.ready;
  }

  /**
   * Decodes `obj` in place: throws the decoder's 400 for a value of the wrong type, drops unknown
   * fields and returns their paths (undefined when there is none, or the kind is not checked or not
   * prepared). Every object's metadata, a custom object's too, then reads as ObjectMeta prints back
   * (object-meta-encoding.ts): this is the step every body and patch result takes before the field
   * manager sees it.
   */
  decode(served: ServedResource, obj: JsonObject): string[] | undefined {
    const shape = served.custom ? undefined : this.kinds.get(kindKey(served))?.shape;
    if (!shape) {
      encodeMetadataOf(served, obj);
      return undefined;
    }
    const decoding = new Decoding();
    try {
      decoding.value(obj, shape);
    } catch (err) {
      if (err instanceof Abort) throw cannotBeHandled(served, err.message);
      throw err;
    }
    if (decoding.typeError !== undefined) throw cannotBeHandled(served, decoding.typeError);
    encodeMetadataOf(served, obj);
    return decoding.unknown.length > 0 ? decoding.unknown : undefined;
  }
}

function encodeMetadataOf(served: ServedResource, obj: JsonObject): void {
  const meta = obj.metadata;
  if (meta !== null && typeof meta === "object" && !Array.isArray(meta)) encodeObjectMeta(served, meta);
}

function kindKey(served: ServedResource): string {
  return `${served.group}/${served.version}/${served.kind}`;
}

/** create.go/update.go transformDecodeError, for a body whose kind is known. */
function cannotBeHandled(served: ServedResource, message: string): ApiError {
  return badRequest(`${served.kind} in version "${served.version}" cannot be handled as a ${served.kind}: ${message}`);
}
