/**
 * Go's `%#v`: how Kubernetes 1.32 prints a composite bad value in a field error. apimachinery v0.32's
 * `field.Error.ErrorBody` prints a string with `%q`; int64, int32, float64, float32 and bool with `%v`;
 * a nil value or nil pointer as the string "null" (so `"null"`, quoted); a non-nil pointer is
 * dereferenced once; a `fmt.Stringer` with its String(); anything else with `%#v`. (Releases from 1.33
 * print composites as JSON instead.)
 *
 * JSON carries no Go types, so there are two cases:
 * - a value the apiserver decoded from JSON into `interface{}` (a custom object's content, a schema
 *   default) prints as the `map[string]interface {}` / `[]interface {}` it is: `goSharpDecoded`;
 * - a value whose Go type is a struct or a typed slice gets its text from the code that knows the type,
 *   built with the helpers below and attached with go-format.ts's `withGoSharpV` (or `goPrinted`).
 *
 * Caveat: inside a composite, Go prints a non-nil pointer as its address, which differs on every run;
 * we print one made-up address.
 */
import { goNumberV, goQuote, goSharpVOf, withGoSharpV } from "./go-format.ts";

/** The address printed for every non-nil pointer inside a composite (a real one differs on every run). */
export const GO_ADDRESS = "0xc000000000";

/** A pointer inside a composite: `(*T)(nil)` or `(*T)(0xc000000000)`. */
export function goSharpPointer(elemType: string, isNil: boolean): string {
  return `(*${elemType})(${isNil ? "nil" : GO_ADDRESS})`;
}

/** A slice of type `type` (`[]string`, or a named slice type) whose elements print as `items`; undefined is nil. */
export function goSharpSlice(type: string, items: readonly string[] | undefined): string {
  return items === undefined ? `${type}(nil)` : `${type}{${items.join(", ")}}`;
}

/** A `[]string` (or a slice of a named string type, whose elements print the same). */
export function goSharpStrings(values: readonly string[] | undefined, type = "[]string"): string {
  return goSharpSlice(type, values?.map(goQuote));
}

/** Go's string order (bytes of UTF-8), which fmt sorts map keys by. */
function compareGoStrings(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** A map with string keys: entries sorted by key as fmt sorts them; undefined is a nil map. */
export function goSharpMap(type: string, entries: ReadonlyArray<readonly [string, string]> | undefined): string {
  if (entries === undefined) return `${type}(nil)`;
  const sorted = [...entries].sort(([a], [b]) => compareGoStrings(a, b));
  return `${type}{${sorted.map(([k, v]) => `${goQuote(k)}:${v}`).join(", ")}}`;
}

/** A struct: `T{Field:value, ...}`, fields in declaration order. */
export function goSharpStruct(type: string, fields: ReadonlyArray<readonly [string, string]>): string {
  return `${type}{${fields.map(([name, v]) => `${name}:${v}`).join(", ")}}`;
}

/**
 * A JSON-decoded value held in an interface (integers as int64, other numbers as float64): nested maps
 * print as `map[string]interface {}{"k":v}`, slices as `[]interface {}{a, b}`, and a nil held in the
 * interface as `<nilType>(nil)` (`interface {}(nil)`, or e.g. `apiextensions.JSON(nil)` in a []JSON).
 */
export function goSharpDecoded(value: unknown, nilType = "interface {}"): string {
  if (value === null || value === undefined) return `${nilType}(nil)`;
  switch (typeof value) {
    case "string":
      return goQuote(value);
    case "number":
      return goNumberV(value);
    case "boolean":
      return String(value);
    case "object": {
      if (Array.isArray(value))
        return goSharpSlice(
          "[]interface {}",
          value.map((v) => goSharpDecoded(v)),
        );
      const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, goSharpDecoded(v)] as const);
      return goSharpMap("map[string]interface {}", entries);
    }
    default:
      return `${nilType}(nil)`;
  }
}

/** A bad value Go prints as `text` (when only the text matters, not the value). */
export function goPrinted(text: string): object {
  return withGoSharpV({}, text);
}

/** What 1.32's ErrorBody prints for a bad value (the part between the error type and the detail). */
export function goBadValue(value: unknown): string {
  if (value === null || value === undefined) return goQuote("null");
  switch (typeof value) {
    case "string":
      return goQuote(value);
    case "number":
      return goNumberV(value);
    case "boolean":
      return String(value);
    default:
      return goSharpVOf(value) ?? goSharpDecoded(value);
  }
}
