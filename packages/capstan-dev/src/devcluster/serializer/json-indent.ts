/**
 * JSON text re-indented as Go's `json.MarshalIndent(v, "", "  ")` lays it out (the pretty serializer of
 * apimachinery's runtime/serializer/json): one member per line, two spaces a level, `": "` after keys,
 * and empty objects and arrays kept as `{}` and `[]`. Works on the text, so numbers keep their digits.
 */

const INDENT = "  ";

/** Re-indents serialized JSON; whitespace between tokens in the input is dropped first. */
export function indentJson(text: string): string {
  let out = "";
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    i++;
    switch (c) {
      case " ":
      case "\t":
      case "\n":
      case "\r":
        break;
      case "{":
      case "[": {
        const next = skipSpace(text, i);
        if (text[next] === (c === "{" ? "}" : "]")) {
          out += c === "{" ? "{}" : "[]";
          i = next + 1;
          break;
        }
        depth++;
        out += `${c}\n${INDENT.repeat(depth)}`;
        break;
      }
      case "}":
      case "]":
        depth--;
        out += `\n${INDENT.repeat(depth)}${c}`;
        break;
      case ",":
        out += `,\n${INDENT.repeat(depth)}`;
        break;
      case ":":
        out += ": ";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/** The index just past the string literal opening at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return i;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  return i;
}
