/**
 * Durations as the whole framework accepts them: `"5s" | "1h30m" | 250` (a number is milliseconds).
 */

/** A duration: milliseconds as a number, or a Go-style string such as `"500ms"`, `"5s"`, `"1h30m"`. */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

// One `<number><unit>` term, e.g. `1.5h` or `250ms`; a duration string is one or more of them.
const TERM = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)/y;

/**
 * Converts a {@link Duration} to milliseconds.
 * @throws Error naming the input when it is negative, not finite, or not of the form `1h30m5s250ms`.
 */
export function toMilliseconds(duration: Duration): number {
  if (typeof duration === "number") {
    if (!Number.isFinite(duration) || duration < 0) {
      throw new Error(`invalid duration ${duration}: expected a finite, non-negative number of milliseconds`);
    }
    return duration;
  }
  if (typeof duration !== "string") {
    throw new Error(`invalid duration ${String(duration)}: expected milliseconds or a string such as "5s"`);
  }
  const text = duration.trim();
  if (text === "0") return 0;
  let total = 0;
  TERM.lastIndex = 0;
  let consumed = 0;
  while (consumed < text.length) {
    TERM.lastIndex = consumed;
    const match = TERM.exec(text);
    if (match === null) {
      throw new Error(`invalid duration "${duration}": expected terms such as "500ms", "5s", "2m", "1h30m"`);
    }
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
    consumed = TERM.lastIndex;
  }
  if (consumed === 0) {
    throw new Error(`invalid duration "${duration}": expected terms such as "500ms", "5s", "2m", "1h30m"`);
  }
  return total;
}
