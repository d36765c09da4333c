/**
 * The small JSONPath subset CRDs use in `additionalPrinterColumns` (`.status.rate`,
 * `.spec.switches`, `.metadata.labels.app`, `.status.conditions[0].type`,
 * `.status.conditions[?(@.type=="Ready")].status`, `.spec.items[*].name`), evaluated on a plain
 * object for one table cell.
 *
 * Guarantees: never throws on any object; a path it cannot parse yields a {@link JsonPath} whose
 * `error` says why and which selects nothing (its cells are empty and the page shows the error on
 * the column's header).
 *
 * Caveats: no recursive descent (`..`), slices, unions or script expressions other than the
 * `[?(@.field=="value")]` equality filter; the API server rejects most of those for printer columns
 * anyway, and a dashboard cell needs no more.
 */

/** One step of a parsed path. */
type Step =
  | { type: "field"; name: string }
  | { type: "index"; index: number }
  | { type: "all" }
  | { type: "filter"; field: string[]; value: string | number | boolean };

/** A parsed path: evaluate it with {@link evaluateJsonPath}. */
export interface JsonPath {
  readonly source: string;
  readonly steps: readonly Step[];
  /** Why the path could not be parsed (then it evaluates to `undefined`). */
  readonly error?: string;
}

/** Parses `path` (with or without kubectl's `{...}` braces). */
export function parseJsonPath(path: string): JsonPath {
  let text = path.trim();
  if (text.startsWith("{") && text.endsWith("}")) text = text.slice(1, -1).trim();
  if (text.startsWith("$")) text = text.slice(1);
  const steps: Step[] = [];
  let i = 0;
  try {
    while (i < text.length) {
      const c = text[i];
      if (c === ".") {
        i++;
        const start = i;
        while (i < text.length && text[i] !== "." && text[i] !== "[") i++;
        const name = text.slice(start, i);
        if (name === "") throw new Error(`empty field name at character ${start}`);
        steps.push(name === "*" ? { type: "all" } : { type: "field", name });
      } else if (c === "[") {
        const end = closingBracket(text, i);
        steps.push(bracketStep(text.slice(i + 1, end).trim()));
        i = end + 1;
      } else {
        throw new Error(`unexpected "${c}" at character ${i}`);
      }
    }
  } catch (err) {
    return { source: path, steps: [], error: `${path}: ${(err as Error).message}` };
  }
  return { source: path, steps };
}

function closingBracket(text: string, open: number): number {
  let quote = "";
  for (let j = open + 1; j < text.length; j++) {
    const ch = text[j];
    if (quote !== "") {
      if (ch === quote) quote = "";
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === "]") {
      return j;
    }
  }
  throw new Error(`no "]" for the "[" at character ${open}`);
}

function bracketStep(inner: string): Step {
  if (inner === "*") return { type: "all" };
  if (/^-?\d+$/.test(inner)) return { type: "index", index: Number(inner) };
  const quoted = /^(['"])(.*)\1$/.exec(inner);
  if (quoted) return { type: "field", name: quoted[2] as string };
  const filter = /^\?\(\s*@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*(.+?)\s*\)$/.exec(inner);
  if (filter) {
    return { type: "filter", field: (filter[1] as string).slice(1).split("."), value: literal(filter[2] as string) };
  }
  throw new Error(`unsupported "[${inner}]"`);
}

function literal(text: string): string | number | boolean {
  const quoted = /^(['"])(.*)\1$/.exec(text);
  if (quoted) return quoted[2] as string;
  if (text === "true" || text === "false") return text === "true";
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  throw new Error(`unsupported filter value ${text}`);
}

/**
 * The values `path` selects in `obj`: one value for a plain path, several for `[*]` or a filter,
 * none when a field is absent.
 */
export function evaluateJsonPath(path: JsonPath, obj: unknown): unknown[] {
  if (path.error !== undefined) return [];
  let current: unknown[] = [obj];
  for (const step of path.steps) {
    const next: unknown[] = [];
    for (const value of current) {
      if (step.type === "field") {
        if (isRecord(value) && value[step.name] !== undefined) next.push(value[step.name]);
      } else if (step.type === "index") {
        if (Array.isArray(value)) {
          const item = value[step.index < 0 ? value.length + step.index : step.index];
          if (item !== undefined) next.push(item);
        }
      } else if (step.type === "all") {
        if (Array.isArray(value)) next.push(...value);
        else if (isRecord(value)) next.push(...Object.values(value));
      } else if (Array.isArray(value)) {
        for (const item of value) if (fieldOf(item, step.field) === step.value) next.push(item);
      }
    }
    current = next;
  }
  return current;
}

function fieldOf(value: unknown, field: readonly string[]): unknown {
  let v = value;
  for (const name of field) v = isRecord(v) ? v[name] : undefined;
  return v;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One cell's value: a single scalar as is, several values or a structure as kubectl prints them
 * (comma-joined; objects and arrays as JSON), nothing as `null`.
 */
export function cellValue(path: JsonPath, obj: unknown): string | number | boolean | null {
  const values = evaluateJsonPath(path, obj);
  if (values.length === 0) return null;
  if (values.length === 1) {
    const v = values[0];
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
    return v === null ? null : JSON.stringify(v);
  }
  return values.map((v) => (typeof v === "object" && v !== null ? JSON.stringify(v) : String(v))).join(",");
}
