/**
 * The `Warning` headers of one response, as kube-apiserver's warning recorder writes them
 * (apiserver endpoints/filters/warning.go, apimachinery util/net NewWarningHeader):
 *
 * - each text becomes `299 - "<text>"`, with only `"` and `\` escaped (a backslash before them);
 *   the text travels as its UTF-8 bytes, whatever characters it holds;
 * - empty texts and repeated ones are dropped; a text holding a control character (U+0000-U+001F,
 *   U+007F-U+009F: Go's unicode.IsControl) is dropped, never failing the request;
 * - once the texts add up to more than 4096 characters, every text is cut to 256 characters (the
 *   ones already written too) and texts past the 4096 are dropped.
 *
 * Headers are written as warnings come, so a request that fails afterwards (a webhook denying it
 * after another warned) still carries them, as kube-apiserver's do.
 */
import type { ServerResponse } from "node:http";

/** Characters of all texts before the recorder starts truncating (truncateAtTotalRunes). */
const TRUNCATE_AT_TOTAL = 4 * 1024;
/** Characters kept of each text once truncating (truncateItemRunes). */
const TRUNCATE_ITEM = 256;

/** Where a request's warnings go; a plain array is one too (the in-process API keeps them). */
export interface WarningSink {
  push(text: string): void;
}

export class WarningRecorder implements WarningSink {
  private readonly recorded = new Set<string>();
  /** Every text recorded, in order, to write again cut short once truncating. */
  private readonly ordered: string[] = [];
  private headers: string[] = [];
  /** Characters of text written so far. */
  private written = 0;
  private truncating = false;

  constructor(private readonly res: ServerResponse) {}

  push(text: string): void {
    if (text === "") return;
    if (this.truncating && this.written >= TRUNCATE_AT_TOTAL) return;
    if (this.recorded.has(text)) return;
    this.recorded.add(text);
    this.ordered.push(text);
    const shown = this.truncating ? cut(text) : text;
    const header = warningHeader(shown);
    if (header === undefined) return;
    const length = runeCount(shown);
    if (this.written + length <= TRUNCATE_AT_TOTAL || this.truncating) {
      this.written += length;
      this.headers.push(header);
    } else {
      // Over the limit: from now on every text is cut, the ones written before too.
      this.truncating = true;
      this.written = 0;
      this.headers = [];
      for (const earlier of this.ordered) {
        const cutShort = cut(earlier);
        const h = warningHeader(cutShort);
        if (h === undefined) continue;
        this.written += runeCount(cutShort);
        this.headers.push(h);
      }
    }
    if (!this.res.headersSent) this.res.setHeader("Warning", this.headers);
  }
}

/**
 * `299 - "<text>"` as the bytes Go writes (UTF-8), in the one-byte-per-character string Node sends
 * header values as; undefined for a text Go refuses (a control character).
 */
function warningHeader(text: string): string | undefined {
  if (hasControlCharacter(text)) return undefined;
  const quoted = text.replace(/["\\]/g, (c) => `\\${c}`);
  return Buffer.from(`299 - "${quoted}"`, "utf8").toString("latin1");
}

/** Go's unicode.IsControl: C0, DEL and C1, nothing beyond Latin-1. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** Go counts runes: code points, a lone surrogate being one (it is sent as U+FFFD). */
function runeCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function cut(text: string): string {
  if (text.length <= TRUNCATE_ITEM) return text;
  return Array.from(text).slice(0, TRUNCATE_ITEM).join("");
}
