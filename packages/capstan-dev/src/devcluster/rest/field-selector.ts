/**
 * Field selectors as k8s.io/apimachinery/pkg/fields parses them: `f=v`, `f==v`, `f!=v`, joined by
 * commas, with `\,` `\=` `\\` escapes. Which fields a kind supports is in its ServedResource.
 */
import type { FieldGetter, JsonObject, ServedResource } from "../registry/served-resource.ts";

export interface FieldRequirement {
  field: string;
  op: "=" | "!=";
  value: string;
}

/** Parses a selector; throws an Error with the message of the apiserver's 400. */
export function parseFieldSelector(input: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const term of splitUnescaped(input, ",")) {
    if (term.trim() === "") continue;
    const m = /^(.*?)(==|!=|=)(.*)$/s.exec(findOperator(term));
    if (!m) throw new Error(`invalid selector: '${input}'; can't understand '${term}'`);
    const [field, op, value] = [term.slice(0, m[1]!.length), m[2]!, term.slice(m[1]!.length + m[2]!.length)];
    out.push({ field: field.trim(), op: op === "!=" ? "!=" : "=", value: unescapeValue(value) });
  }
  return out;
}

/** Replaces escaped characters with placeholders of the same length so operator search ignores them. */
function findOperator(term: string): string {
  return term.replace(/\\./g, "__");
}

function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let current = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\" && i + 1 < s.length) {
      current += c + s[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(current);
      current = "";
    } else current += c;
  }
  parts.push(current);
  return parts;
}

function unescapeValue(value: string): string {
  return value.replace(/\\(.)/g, "$1");
}

/**
 * Resolves each requirement to a getter for `served`, or throws the error the real server gives for
 * an unsupported field (`field label not supported: x` for built-ins; the CRD form for custom resources).
 */
export function compileFieldSelector(
  served: ServedResource,
  requirements: FieldRequirement[],
): { getter: FieldGetter; op: "=" | "!="; value: string }[] {
  return requirements.map((r) => {
    const getter = getterFor(served, r.field);
    if (!getter) {
      if (served.custom) {
        const known = [
          '"metadata.name"',
          '"metadata.namespace"',
          ...Object.keys(served.fieldSelectors ?? {}).map((k) => `"${k}"`),
        ];
        throw new Error(`"${r.field}" is not a known field selector: only ${known.join(", ")}`);
      }
      throw new Error(`field label not supported: ${r.field}`);
    }
    return { getter, op: r.op, value: r.value };
  });
}

function getterFor(served: ServedResource, field: string): FieldGetter | undefined {
  if (field === "metadata.name") return (o) => String(o.metadata?.["name"] ?? "");
  if (field === "metadata.namespace") return (o) => String(o.metadata?.["namespace"] ?? "");
  // `field` comes from the query: `constructor` or `__proto__` is no selector (not Object.prototype's member).
  const selectors = served.fieldSelectors;
  return selectors !== undefined && Object.hasOwn(selectors, field) ? selectors[field] : undefined;
}

/** True when `obj` satisfies every compiled requirement. */
export function matchesFields(compiled: ReturnType<typeof compileFieldSelector>, obj: JsonObject): boolean {
  for (const c of compiled) {
    const value = c.getter(obj) ?? "";
    if (c.op === "=" ? value !== c.value : value === c.value) return false;
  }
  return true;
}
