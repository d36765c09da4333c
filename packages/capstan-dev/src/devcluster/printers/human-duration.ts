/**
 * Ages as kubectl shows them (`5s`, `3m12s`, `4h`, `2d3h`, `3y20d`): the rendering of
 * k8s.io/apimachinery/pkg/util/duration.HumanDuration, which the apiserver's table printers use
 * for every AGE cell and for `date` columns of custom resources.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** `HumanDuration(d)` for a duration in milliseconds. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  // Up to 2 s in the future is tolerated as clock skew and shown as "0s"; beyond that it is invalid.
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/**
 * `translateTimestampSince`: the age of an RFC 3339 timestamp at `now`, `<unknown>` when the
 * timestamp is missing, `<invalid>` when it does not parse.
 */
export function ageSince(timestamp: string | undefined | null, now: number): string {
  if (!timestamp) return "<unknown>";
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return "<invalid>";
  return humanDuration(now - at);
}
