/**
 * metav1.Time as the API writes it: RFC 3339 in UTC at second precision (`2024-05-01T12:00:00Z`).
 */

/** `date` as metav1.Time text (milliseconds dropped, as Go's time.RFC3339 formats them). */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

let clockSecond = -1;
let clockText = "";

/**
 * The current second as metav1.Time text, formatted once per second: every create stamps it
 * (creationTimestamp, and the managedFields entry's time).
 */
export function nowRfc3339(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== clockSecond) {
    clockSecond = second;
    clockText = rfc3339(new Date(second * 1000));
  }
  return clockText;
}
