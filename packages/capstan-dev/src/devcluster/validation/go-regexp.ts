/**
 * Go RE2 patterns (CRD `pattern`, `patternProperties`) run with JavaScript's engine, and the error
 * text Go's regexp.Compile gives for the invalid patterns people actually write.
 *
 * Caveats: RE2 and JavaScript agree on the common subset (classes, anchors, groups, repetition).
 * Perl features RE2 refuses (lookaround, backreferences) are reported as Go reports them; other exotic
 * differences (e.g. `\Q...\E`, Unicode class names JavaScript lacks) are not emulated.
 */

/** A compiled pattern, or the reason it does not compile. */
export interface CompiledPattern {
  source: string;
  re: RegExp | undefined;
  error: string | undefined;
}

/** Go's `regexp.Compile` error for `source`, or undefined when Go accepts it. */
export function goRegexpError(source: string): string | undefined {
  const perl = /\(\?<?[=!]/.exec(source);
  if (perl) return `error parsing regexp: invalid or unsupported Perl syntax: \`${perl[0]}\``;
  const backref = /\\[1-9]/.exec(source);
  if (backref) return `error parsing regexp: invalid escape sequence: \`${backref[0]}\``;
  const { body, flags } = translate(source);
  try {
    new RegExp(body, flags + "u");
    return undefined;
  } catch {
    try {
      new RegExp(body, flags);
      return undefined;
    } catch (e) {
      return describe(source, e instanceof Error ? e.message : String(e));
    }
  }
}

/** Maps a JavaScript SyntaxError onto Go's wording for the same mistake. */
function describe(source: string, jsMessage: string): string {
  if (/Unterminated group/i.test(jsMessage)) return `error parsing regexp: missing closing ): \`${source}\``;
  if (/Unmatched '\)'/i.test(jsMessage)) return `error parsing regexp: unexpected ): \`${source}\``;
  if (/Unterminated character class/i.test(jsMessage)) {
    const at = source.lastIndexOf("[");
    return `error parsing regexp: missing closing ]: \`${source.slice(at < 0 ? 0 : at)}\``;
  }
  if (/Nothing to repeat/i.test(jsMessage)) {
    const op = /(^|[(|])([*+?]|\{\d+(,\d*)?\})/.exec(source);
    return `error parsing regexp: missing argument to repetition operator: \`${op ? op[2] : source}\``;
  }
  return `error parsing regexp: ${jsMessage}`;
}

function translate(source: string): { body: string; flags: string } {
  let body = source;
  let flags = "";
  const inline = /^\(\?([imsU]+)\)/.exec(body);
  if (inline) {
    body = body.slice(inline[0].length);
    for (const f of inline[1]!) if (f !== "U" && !flags.includes(f)) flags += f;
  }
  // RE2's absolute anchors.
  body = body.replace(/\\A/g, "^").replace(/\\z/g, "$");
  return { body, flags };
}

/** Compiles a Go pattern for matching; `error` carries Go's compile error text when it is invalid. */
export function compileGoRegExp(source: string): CompiledPattern {
  const error = goRegexpError(source);
  if (error) return { source, re: undefined, error };
  const { body, flags } = translate(source);
  for (const extra of ["u", ""]) {
    try {
      return { source, re: new RegExp(body, flags + extra), error: undefined };
    } catch {
      // try without the u flag: some escapes RE2 allows are only legal in JavaScript's legacy mode
    }
  }
  return { source, re: undefined, error: "error parsing regexp: invalid pattern" };
}
