/**
 * Compiling `x-kubernetes-validations` rules, once per schema node (so once per CRD version: a served
 * version keeps its schema object, and a CRD update brings new schema objects and so new programs).
 *
 * Expected flow: the CRD validator calls `compileCelRules(node, path)` for every schema node that
 * carries rules (crd.ts's RuleCompiler hook) and refuses the CRD with the returned field errors; the
 * object validator calls `compiledRulesOf(node, isRoot)` while walking an object and runs the programs.
 *
 * Guarantees: never throws; a rule is parsed, checked and planned once per (schema node, root-ness)
 * and reused by every write; compile errors have apiextensions-apiserver's form:
 * `...x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:...}: compilation
 * failed: ERROR: <input>:1:5: undefined field 'foo'` followed by cel-go's source snippet.
 * Caveats: syntax errors carry @bufbuild/cel's parser text, not ANTLR's (`Syntax error: found = but
 * expecting end of input` where cel-go says `Syntax error: mismatched input ...`); the position and
 * snippet are right. Static cost estimation (`estimated rule cost exceeds budget`) is not done.
 */
import { type CelResult, celEnv, celError, parse, plan } from "@bufbuild/cel";
import { goValidationRule } from "../crd-internal.ts";
import { type FieldError, type FieldPath, invalid } from "../field-errors.ts";
import type { JSONSchemaProps, ValidationRule } from "../schema-types.ts";
import { type CheckIssue, checkExpr, referencesIdent, type StaticType, schemaStaticType } from "./check.ts";
import { KUBERNETES_FUNCS } from "./library.ts";

/** A compiled program: bindings of `self` (and `oldSelf`) to the rule's result or a CEL error. */
export type CelProgram = (bindings: Record<string, unknown>) => CelResult;

/** One rule, ready to run. */
export interface CompiledRule {
  rule: ValidationRule;
  /** Undefined for an empty rule (skipped, as the real server skips it) or a rule that failed to compile. */
  program: CelProgram | undefined;
  /** The compile error detail (`compilation failed: ...`). */
  error: string | undefined;
  messageProgram: CelProgram | undefined;
  messageError: string | undefined;
  /** A transition rule: runs only on update, and only where an old value exists. */
  usesOldSelf: boolean;
}

const ENV = celEnv({ funcs: KUBERNETES_FUNCS });

/** cel-go's issue rendering: `ERROR: <input>:L:C: msg` and the source line with a caret under column C. */
function renderIssues(source: string, issues: CheckIssue[]): string {
  return [...issues]
    .sort((a, b) => a.offset - b.offset)
    .map(({ offset, message }) => {
      const before = source.slice(0, offset);
      const line = before.split("\n").length;
      const lineStart = before.lastIndexOf("\n") + 1;
      const col = offset - lineStart;
      const text = source.split("\n")[line - 1] ?? "";
      return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${text}\n | ${".".repeat(col)}^`;
    })
    .join("\n");
}

/** Optional field selection / indexing (`self.?x`, `self[?'k']`), which @bufbuild/cel does not parse. */
const OPTIONAL_SYNTAX = /\.\?|\[\?/;
const OPTIONAL_UNSUPPORTED = "optional types (?. and [?]) are not supported by the devcluster's CEL";

/** A compiled expression: its program, or the cel-go-style rendering of its compile issues. */
export interface Checked {
  program: CelProgram | undefined;
  type: StaticType | undefined;
  usesOldSelf: boolean;
  issues: string | undefined;
}

/**
 * Parses, checks against `scope` (the identifiers the expression may use and their static types) and plans
 * one expression. Also used for expressions outside CRD schemas (admission policies' and webhooks' CEL).
 */
export function compileExpression(source: string, scope: ReadonlyMap<string, StaticType>): Checked {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (e) {
    if (OPTIONAL_SYNTAX.test(source)) {
      // Valid on a real cluster (optional types): accept the CRD, fail the rule when it runs.
      const program: CelProgram = () => celError(OPTIONAL_UNSUPPORTED);
      return { program, type: undefined, usesOldSelf: /\boldSelf\b/.test(source), issues: undefined };
    }
    const loc = (e as { location?: { start?: { offset?: number } } }).location?.start?.offset ?? 0;
    const raw = e instanceof Error ? e.message : String(e);
    const message = "Syntax error: " + raw.replace(/^<input>:\d+:\d+: /, "");
    return {
      program: undefined,
      type: undefined,
      usesOldSelf: false,
      issues: renderIssues(source, [{ offset: loc, message }]),
    };
  }
  const issues: CheckIssue[] = [];
  const positions: Record<string, number> = {};
  for (const [id, offset] of Object.entries(parsed.sourceInfo?.positions ?? {})) positions[id] = Number(offset);
  const type = checkExpr(parsed.expr, scope, positions, issues);
  if (issues.length > 0) {
    return { program: undefined, type, usesOldSelf: false, issues: renderIssues(source, issues) };
  }
  const run = plan(ENV, parsed) as (ctx?: Record<string, never>) => CelResult;
  const program: CelProgram = (bindings) => {
    try {
      return run(bindings as Record<string, never>);
    } catch (e) {
      // Library functions signal failures by throwing; the rule reports them as evaluation errors.
      return celError(e);
    }
  };
  return { program, type, usesOldSelf: referencesIdent(parsed.expr, "oldSelf"), issues: undefined };
}

function compileRule(rule: ValidationRule, selfType: StaticType): CompiledRule {
  const out: CompiledRule = {
    rule,
    program: undefined,
    error: undefined,
    messageProgram: undefined,
    messageError: undefined,
    usesOldSelf: false,
  };
  const source = typeof rule.rule === "string" ? rule.rule : "";
  if (source.trim() === "") return out;
  const scope = new Map<string, StaticType>([
    ["self", selfType],
    ["oldSelf", selfType],
  ]);
  const checked = compileExpression(source, scope);
  if (checked.issues !== undefined) {
    out.error = "compilation failed: " + checked.issues;
    return out;
  }
  if (checked.type && checked.type.kind !== "bool" && checked.type.kind !== "dyn") {
    out.error = "cel expression must evaluate to a bool";
    return out;
  }
  out.program = checked.program;
  out.usesOldSelf = checked.usesOldSelf;
  const msg = typeof rule.messageExpression === "string" ? rule.messageExpression : "";
  if (msg !== "") {
    const m = compileExpression(msg, scope);
    if (m.issues !== undefined) out.messageError = "messageExpression compilation failed: " + m.issues;
    else if (m.type && m.type.kind !== "string" && m.type.kind !== "dyn") {
      out.messageError = "messageExpression must evaluate to a string";
    } else out.messageProgram = m.program;
  }
  return out;
}

/** Compiled rules by schema node; a second map for nodes used as a resource root (their self type differs). */
const cache = new WeakMap<JSONSchemaProps, CompiledRule[]>();
const rootCache = new WeakMap<JSONSchemaProps, CompiledRule[]>();

/** The compiled `x-kubernetes-validations` of one schema node (compiled on first use, then cached). */
export function compiledRulesOf(schema: JSONSchemaProps, isRoot: boolean): CompiledRule[] {
  const store = isRoot ? rootCache : cache;
  let rules = store.get(schema);
  if (!rules) {
    const selfType = schemaStaticType(schema, isRoot);
    rules = (schema["x-kubernetes-validations"] ?? []).map((r) => compileRule(r, selfType));
    store.set(schema, rules);
  }
  return rules;
}

/**
 * crd.ts's RuleCompiler: the compile errors of one schema node's rules, at
 * `<path>.x-kubernetes-validations[i].rule` / `.messageExpression` / `.optionalOldSelf`.
 */
export function compileCelRules(schema: JSONSchemaProps, path: FieldPath): FieldError[] {
  const isRoot = path.toString().endsWith("openAPIV3Schema");
  const errs: FieldError[] = [];
  compiledRulesOf(schema, isRoot).forEach((c, i) => {
    const p = path.child("x-kubernetes-validations").index(i);
    if (c.error !== undefined) errs.push(invalid(p.child("rule"), goValidationRule(c.rule), c.error));
    if (c.messageError !== undefined)
      errs.push(invalid(p.child("messageExpression"), goValidationRule(c.rule), c.messageError));
    if (!c.usesOldSelf && c.rule.optionalOldSelf !== undefined && c.rule.optionalOldSelf !== null) {
      errs.push(
        invalid(p.child("optionalOldSelf"), c.rule.optionalOldSelf, "may not be set if oldSelf is not used in rule"),
      );
    }
  });
  return errs;
}
