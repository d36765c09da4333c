/**
 * One copy of the `"managedFields":[...]` text that many stored objects share. Objects written by the
 * same manager with the same field set in the same second carry byte-identical managedFields (about 240
 * bytes for a ConfigMap written by a controller): the in-memory store keeps such an object as head +
 * shared segment + tail instead of one string (memory-storage.ts).
 *
 * ## Guarantees
 * - `split(data)` returns parts whose concatenation is exactly `data`, wherever the split falls (a
 *   `"managedFields":[` inside a string value only costs the sharing, never correctness).
 * - A segment stays in the table while some holder has not released it.
 *
 * ## Caveats
 * - Parts are copied out of `data` (a V8 substring would keep the whole string alive).
 */

const MARKER = '"managedFields":[';

/**
 * Below this many characters sharing saves less than the parts cost (two more strings and a table
 * entry, ~60 bytes).
 */
const MIN_SEGMENT = 96;

export interface SplitObject {
  readonly head: string;
  readonly segment: string;
  readonly tail: string;
}

export class SharedSegments {
  private readonly table = new Map<string, { text: string; refs: number }>();

  /** Splits `data` around its managedFields, taking a reference on the shared segment; undefined when not worth it. */
  split(data: string): SplitObject | undefined {
    const start = data.indexOf(MARKER);
    if (start < 0) return undefined;
    const end = closingBracket(data, start + MARKER.length - 1);
    if (end < 0 || end + 1 - start < MIN_SEGMENT) return undefined;
    const segment = data.slice(start, end + 1);
    let shared = this.table.get(segment);
    if (!shared) {
      shared = { text: copyOf(segment), refs: 0 };
      this.table.set(shared.text, shared);
    }
    shared.refs++;
    return { head: copyOf(data.slice(0, start)), segment: shared.text, tail: copyOf(data.slice(end + 1)) };
  }

  /** The holder of `split` no longer needs its segment. */
  release(split: SplitObject): void {
    const shared = this.table.get(split.segment);
    if (!shared) return;
    if (--shared.refs === 0) this.table.delete(split.segment);
  }

  /** Distinct segments held (tests and diagnostics). */
  size(): number {
    return this.table.size;
  }
}

/** The whole string again. */
export function joined(split: SplitObject): string {
  return split.head + split.segment + split.tail;
}

/** Index of the `]` closing the array opened at `open`, skipping JSON strings; -1 when unbalanced. */
function closingBracket(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) depth++;
    else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
      if (depth === 0) return c === CLOSE_BRACKET ? i : -1;
    }
  }
  return -1;
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/**
 * A string with its own storage. `slice` of 13+ characters makes a V8 SlicedString that keeps its
 * parent alive; prepending a character and slicing it off again copies the part into a new string
 * (the result is a slice of that copy: 32 bytes more than a plain copy, but several times cheaper to
 * make than a UTF-8 round trip, measured).
 */
function copyOf(part: string): string {
  return ` ${part}`.slice(1);
}
