/**
 * The JSONPath dialect of Kubernetes (k8s.io/client-go/util/jsonpath) as CRD printer columns use it:
 * `.spec.replicas`, `.metadata.labels['app.kubernetes.io/name']`, `.status.conditions[0].type`,
 * `.items[*].name`, `.status.conditions[?(@.type=="Ready")].status`, `..name` is not supported.
 *
 * Guarantees:
 * - `parseJsonPath` rejects what it cannot evaluate with an Error naming the position, so a CRD
 *   whose column cannot be evaluated is reported, never silently mis-rendered.
 * - `evaluateJsonPath` never throws on data: missing keys give no result (the apiserver evaluates
 *   printer columns with AllowMissingKeys(true)).
 *
 * Caveats: range/end templates, `..` recursive descent, slices with steps and filter expressions
 * other than comparisons of `@.path` with a literal or existence of `@.path` are not implemented.
 */

type Step =
  | { kind: "field"; name: string }
  | { kind: "wildcard" }
  | { kind: "index"; index: number }
  | { kind: "slice"; start?: number; end?: number }
  | { kind: "filter"; path: Step[]; op?: "==" | "!=" | "<" | ">" | "<=" | ">="; literal?: unknown };

/** A compiled JSONPath expression. */
export interface JsonPath {
  readonly source: string;
  readonly steps: readonly Step[];
}

/**
 * Compiles `expression`, with or without the surrounding `{...}` kubectl templates use.
 * Throws an Error for syntax it does not understand.
 */
export function parseJsonPath(expression: string): JsonPath {
  let text = expression.trim();
  if (text.startsWith("{") && text.endsWith("}")) text = text.slice(1, -1).trim();
  const parser = new Parser(text);
  const steps = parser.parsePath(false);
  if (!parser.done())
    throw new Error(`unrecognized character in JSONPath ${JSON.stringify(expression)} at ${parser.pos}`);
  return { source: expression, steps };
}

/** Every value `path` selects in `data`, in document order. Missing keys select nothing. */
export function evaluateJsonPath(path: JsonPath, data: unknown): unknown[] {
  return walk(path.steps, 0, [data]);
}

function walk(steps: readonly Step[], from: number, values: unknown[]): unknown[] {
  let current = values;
  for (let i = from; i < steps.length; i++) {
    const step = steps[i]!;
    const next: unknown[] = [];
    for (const value of current) applyStep(step, value, next);
    current = next;
  }
  return current;
}

function applyStep(step: Step, value: unknown, out: unknown[]): void {
  switch (step.kind) {
    case "field":
      if (isRecord(value) && Object.hasOwn(value, step.name)) out.push(value[step.name]);
      return;
    case "wildcard":
      if (Array.isArray(value)) out.push(...value);
      else if (isRecord(value)) for (const key of Object.keys(value).sort()) out.push(value[key]);
      return;
    case "index": {
      if (!Array.isArray(value)) return;
      const index = step.index < 0 ? value.length + step.index : step.index;
      if (index >= 0 && index < value.length) out.push(value[index]);
      return;
    }
    case "slice": {
      if (!Array.isArray(value)) return;
      out.push(...value.slice(step.start ?? 0, step.end ?? value.length));
      return;
    }
    case "filter": {
      const items = Array.isArray(value) ? value : isRecord(value) ? Object.values(value) : [];
      for (const item of items) if (filterMatches(step, item)) out.push(item);
      return;
    }
  }
}

function filterMatches(step: Extract<Step, { kind: "filter" }>, item: unknown): boolean {
  const found = walk(step.path, 0, [item]);
  if (step.op === undefined) return found.length > 0 && found[0] !== null && found[0] !== false;
  if (found.length === 0) return false;
  const left = found[0];
  const right = step.literal;
  switch (step.op) {
    case "==":
      return left === right;
    case "!=":
      return left !== right;
    default: {
      if (typeof left !== "number" || typeof right !== "number") return false;
      if (step.op === "<") return left < right;
      if (step.op === ">") return left > right;
      if (step.op === "<=") return left <= right;
      return left >= right;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.pos >= this.text.length;
  }

  private peek(): string {
    return this.text[this.pos] ?? "";
  }

  private fail(what: string): never {
    throw new Error(`${what} in JSONPath ${JSON.stringify(this.text)} at ${this.pos}`);
  }

  /** Steps until the end, or until `)`/comparison operators when inside a filter. */
  parsePath(inFilter: boolean): Step[] {
    const steps: Step[] = [];
    if (this.peek() === "$") this.pos++;
    while (!this.done()) {
      const c = this.peek();
      if (c === ".") {
        this.pos++;
        if (this.peek() === ".") this.fail("recursive descent is not supported");
        if (this.peek() === "*") {
          this.pos++;
          steps.push({ kind: "wildcard" });
          continue;
        }
        const name = this.readIdentifier();
        if (name === "") {
          // A lone "." is the current object (kubectl accepts "{.}").
          if (this.done()) break;
          this.fail("expected a field name");
        }
        steps.push({ kind: "field", name });
      } else if (c === "[") {
        steps.push(this.parseBracket());
      } else if (inFilter) {
        break;
      } else {
        this.fail(`unexpected ${JSON.stringify(c)}`);
      }
    }
    return steps;
  }

  private readIdentifier(): string {
    const start = this.pos;
    while (!this.done() && /[A-Za-z0-9_\-/]/.test(this.peek())) this.pos++;
    return this.text.slice(start, this.pos);
  }

  private parseBracket(): Step {
    this.pos++; // [
    this.skipSpaces();
    const c = this.peek();
    let step: Step;
    if (c === "*") {
      this.pos++;
      step = { kind: "wildcard" };
    } else if (c === "'" || c === '"') {
      step = { kind: "field", name: this.readQuoted() };
    } else if (c === "?") {
      step = this.parseFilter();
    } else {
      step = this.parseIndexOrSlice();
    }
    this.skipSpaces();
    if (this.peek() !== "]") this.fail("expected ]");
    this.pos++;
    return step;
  }

  private parseIndexOrSlice(): Step {
    const first = this.readInteger();
    this.skipSpaces();
    if (this.peek() !== ":") {
      if (first === undefined) this.fail("expected an index");
      return { kind: "index", index: first };
    }
    this.pos++;
    const end = this.readInteger();
    const step: Step = { kind: "slice" };
    if (first !== undefined) step.start = first;
    if (end !== undefined) step.end = end;
    return step;
  }

  private readInteger(): number | undefined {
    this.skipSpaces();
    const match = /^-?\d+/.exec(this.text.slice(this.pos));
    if (!match) return undefined;
    this.pos += match[0].length;
    return Number(match[0]);
  }

  private readQuoted(): string {
    const quote = this.peek();
    this.pos++;
    const start = this.pos;
    while (!this.done() && this.peek() !== quote) this.pos++;
    if (this.done()) this.fail("unterminated string");
    const value = this.text.slice(start, this.pos);
    this.pos++;
    return value;
  }

  private parseFilter(): Step {
    this.pos++; // ?
    if (this.peek() !== "(") this.fail("expected ( after ?");
    this.pos++;
    this.skipSpaces();
    if (this.peek() !== "@") this.fail("filters must start with @");
    this.pos++;
    const path = this.parsePath(true);
    this.skipSpaces();
    const step: Extract<Step, { kind: "filter" }> = { kind: "filter", path };
    const op = /^(==|!=|<=|>=|<|>)/.exec(this.text.slice(this.pos));
    if (op) {
      this.pos += op[0].length;
      this.skipSpaces();
      step.op = op[0] as NonNullable<typeof step.op>;
      step.literal = this.readLiteral();
      this.skipSpaces();
    }
    if (this.peek() !== ")") this.fail("expected )");
    this.pos++;
    return step;
  }

  private readLiteral(): unknown {
    const c = this.peek();
    if (c === "'" || c === '"') return this.readQuoted();
    const match = /^(-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false|null)/.exec(this.text.slice(this.pos));
    if (!match) this.fail("expected a literal");
    this.pos += match[0].length;
    if (match[0] === "true") return true;
    if (match[0] === "false") return false;
    if (match[0] === "null") return null;
    return Number(match[0]);
  }

  private skipSpaces(): void {
    while (this.peek() === " ") this.pos++;
  }
}

/**
 * How client-go's `JSONPath.PrintResults` renders one value: strings as they are, maps and lists
 * as compact JSON, other scalars in their plain text form.
 */
export function jsonPathText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "<nil>";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
