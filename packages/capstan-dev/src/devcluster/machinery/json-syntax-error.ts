/**
 * The message Go's encoding/json gives for malformed input ("invalid character 'x' looking for beginning
 * of value", "unexpected end of JSON input"...), which kube-apiserver passes through in its 400s.
 * A small scanner following encoding/json's scanner states (its depth limit included); called after
 * JSON.parse failed or the depth pre-scan (serializer/nesting-depth.ts) tripped.
 */

/**
 * How deep JSON (and YAML) documents may nest. Go's decoders stop at 10000 levels ("exceeded max
 * depth"); ours stop sooner because the request path (merge, apply, validation, managed fields, the
 * YAML parser) recurses on Node's ~1 MB stack, which runs out at about a thousand levels, and V8
 * aborts the process rather than throwing when that happens while it compiles a regular expression.
 */
export const MAX_NESTING_DEPTH = 500;

type Context = "value" | "objectKey" | "afterKey" | "afterObjectValue" | "afterArrayValue" | "top";

export function goJsonSyntaxError(text: string): string {
  const stack: ("object" | "array")[] = [];
  let i = 0;
  let expect: Context = "value";
  const describe = (c: string) =>
    `'${c === "'" ? "\\'" : c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r" ? "\\r" : c}'`;
  const afterValue = (): Context => {
    const top = stack[stack.length - 1];
    return top === "object" ? "afterObjectValue" : top === "array" ? "afterArrayValue" : "top";
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === " " || c === "\n" || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    switch (expect) {
      case "top":
        return `invalid character ${describe(c)} after top-level value`;
      case "objectKey":
        if (c === "}" && text[i - 1] !== ",") {
          stack.pop();
          i++;
          expect = afterValue();
          continue;
        }
        if (c !== '"') return `invalid character ${describe(c)} looking for beginning of object key string`;
        {
          const end = scanString(text, i);
          if (typeof end === "string") return end;
          i = end;
          expect = "afterKey";
        }
        continue;
      case "afterKey":
        if (c !== ":") return `invalid character ${describe(c)} after object key`;
        i++;
        expect = "value";
        continue;
      case "afterObjectValue":
        if (c === ",") {
          i++;
          expect = "objectKey";
          continue;
        }
        if (c === "}") {
          stack.pop();
          i++;
          expect = afterValue();
          continue;
        }
        return `invalid character ${describe(c)} after object key:value pair`;
      case "afterArrayValue":
        if (c === ",") {
          i++;
          expect = "value";
          continue;
        }
        if (c === "]") {
          stack.pop();
          i++;
          expect = afterValue();
          continue;
        }
        return `invalid character ${describe(c)} after array element`;
      case "value": {
        if (c === "{") {
          stack.push("object");
          if (stack.length > MAX_NESTING_DEPTH) return `invalid character '{' exceeded max depth`;
          i++;
          expect = "objectKey";
          continue;
        }
        if (c === "[") {
          stack.push("array");
          if (stack.length > MAX_NESTING_DEPTH) return `invalid character '[' exceeded max depth`;
          i++;
          // An empty array closes at once.
          let j = i;
          while (j < text.length && " \n\t\r".includes(text[j]!)) j++;
          if (text[j] === "]") {
            stack.pop();
            i = j + 1;
            expect = afterValue();
          }
          continue;
        }
        if (c === '"') {
          const end = scanString(text, i);
          if (typeof end === "string") return end;
          i = end;
          expect = afterValue();
          continue;
        }
        if (c === "-" || (c >= "0" && c <= "9")) {
          let j = i + 1;
          while (j < text.length && /[0-9eE.+-]/.test(text[j]!)) j++;
          i = j;
          expect = afterValue();
          continue;
        }
        for (const literal of ["true", "false", "null"]) {
          if (c === literal[0]) {
            for (let k = 1; k < literal.length; k++) {
              if (i + k >= text.length) return "unexpected end of JSON input";
              if (text[i + k] !== literal[k]) {
                return `invalid character ${describe(text[i + k]!)} in literal ${literal} (expecting ${describe(literal[k]!)})`;
              }
            }
            i += literal.length;
            expect = afterValue();
            break;
          }
        }
        if (expect === "value") return `invalid character ${describe(c)} looking for beginning of value`;
        continue;
      }
    }
  }
  return "unexpected end of JSON input";
}

/** Index after the closing quote, or the error message for a bad string. */
function scanString(text: string, start: number): number | string {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') return i + 1;
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c < " ") return `invalid character '${c === "\n" ? "\\n" : c === "\t" ? "\\t" : c}' in string literal`;
    i++;
  }
  return "unexpected end of JSON input";
}
