/**
 * Label selectors as k8s.io/apimachinery/pkg/labels parses them: `a=b`, `a==b`, `a!=b`,
 * `a in (x,y)`, `a notin (x,y)`, `a`, `!a`, `a>1`, `a<1`, joined by commas (all must hold); and the
 * structured metav1.LabelSelector of workloads and webhooks ({@link selectorMatches}).
 */

export type LabelOperator = "=" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

export interface LabelRequirement {
  key: string;
  op: LabelOperator;
  values: string[];
}

/** Parses a selector string; throws an Error whose message the apiserver would give in its 400. */
export function parseLabelSelector(input: string): LabelRequirement[] {
  const out: LabelRequirement[] = [];
  let i = 0;
  const s = input;
  const skipSpace = () => {
    while (i < s.length && s[i] === " ") i++;
  };
  const readWord = (): string => {
    const start = i;
    while (i < s.length && !" ,=!()<>".includes(s[i]!)) i++;
    return s.slice(start, i);
  };
  while (true) {
    skipSpace();
    if (i >= s.length) break;
    let negated = false;
    if (s[i] === "!") {
      negated = true;
      i++;
      skipSpace();
    }
    const key = readWord();
    if (key === "") throw new Error(`unable to parse requirement: found '${s[i] ?? ""}', expected: identifier`);
    checkKey(key);
    skipSpace();
    if (negated) {
      out.push({ key, op: "!", values: [] });
    } else if (i >= s.length || s[i] === ",") {
      out.push({ key, op: "exists", values: [] });
    } else if (s.startsWith("==", i) || s[i] === "=") {
      i += s.startsWith("==", i) ? 2 : 1;
      skipSpace();
      out.push({ key, op: "=", values: [checkValue(readWord())] });
    } else if (s.startsWith("!=", i)) {
      i += 2;
      skipSpace();
      out.push({ key, op: "!=", values: [checkValue(readWord())] });
    } else if (s[i] === ">" || s[i] === "<") {
      const op = s[i] === ">" ? "gt" : "lt";
      i++;
      skipSpace();
      const value = readWord();
      if (!/^-?\d+$/.test(value)) {
        throw new Error(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
      }
      out.push({ key, op, values: [value] });
    } else {
      const word = readWord();
      if (word !== "in" && word !== "notin") {
        throw new Error(`unable to parse requirement: found '${word}', expected: in, notin, =, ==, !=, gt, lt`);
      }
      skipSpace();
      if (s[i] !== "(") throw new Error(`unable to parse requirement: found '${s[i] ?? ""}', expected: '('`);
      i++;
      const values: string[] = [];
      while (true) {
        skipSpace();
        values.push(checkValue(readWord()));
        skipSpace();
        if (s[i] === ",") {
          i++;
          continue;
        }
        if (s[i] === ")") {
          i++;
          break;
        }
        throw new Error(`unable to parse requirement: found '${s[i] ?? ""}', expected: ',', ')'`);
      }
      out.push({ key, op: word, values });
    }
    skipSpace();
    if (i < s.length) {
      if (s[i] !== ",") throw new Error(`unable to parse requirement: found '${s[i]}', expected: ','`);
      i++;
    }
  }
  return out;
}

const QUALIFIED_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): void {
  const slash = key.lastIndexOf("/");
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (name.length > 63 || !QUALIFIED_NAME.test(name)) {
    throw new Error(
      `unable to parse requirement: invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  }
}

function checkValue(value: string): string {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    throw new Error(
      `unable to parse requirement: values[0][${value}]: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
  }
  return value;
}

/** True when `labels` satisfy every requirement. */
export function matchesLabels(requirements: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  for (const r of requirements) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    const value = has ? labels![r.key]! : undefined;
    switch (r.op) {
      case "=":
      case "in":
        if (!has || !r.values.includes(value!)) return false;
        break;
      case "!=":
      case "notin":
        if (has && r.values.includes(value!)) return false;
        break;
      case "exists":
        if (!has) return false;
        break;
      case "!":
        if (has) return false;
        break;
      case "gt":
      case "lt": {
        if (!has || !/^-?\d+$/.test(value!)) return false;
        const n = Number(value);
        const bound = Number(r.values[0]);
        if (r.op === "gt" ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

/** metav1.LabelSelector: `matchLabels` and `matchExpressions` (In, NotIn, Exists, DoesNotExist). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** metav1.LabelSelectorAsSelector + Matches. An empty selector matches everything; a missing one, nothing. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string> = {}): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    if (e.operator === "In" && !(has && values.includes(labels[e.key] ?? ""))) return false;
    if (e.operator === "NotIn" && has && values.includes(labels[e.key] ?? "")) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}
