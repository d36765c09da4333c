/**
 * Cron schedules as Kubernetes reads them (`robfig/cron`'s `ParseStandard`, which the kubebuilder
 * tutorial and kube-controller-manager's CronJob controller both use): five fields — minute
 * (0-59), hour (0-23), day of month (1-31), month (1-12 or JAN-DEC), day of week (0-6 or SUN-SAT)
 * — each `*`, `?`, a value, a range `a-b`, a step `*\/n`, `a-b/n` or `a/n` (from `a` to the field's
 * end), or a comma-separated list of those; or a descriptor: `@yearly` (`@annually`), `@monthly`,
 * `@weekly`, `@daily` (`@midnight`), `@hourly`, `@every <duration>` (`1h30m`, `90s`).
 *
 * Day of month and day of week: when either is `*` or `?`, a day must match both (so only the
 * other restricts); when both are restricted, a day matching either runs (`0 0 13 * 5`: the 13th
 * and every Friday), as Vixie cron does.
 *
 * Times are UTC: robfig reads them in the controller's time zone, which is UTC in the containers
 * Kubernetes controllers run in. A schedule that can never run (`0 0 30 2 *`) has no next time.
 *
 * Why not a package: croner (zero dependencies, 224 kB, ~7 ms to import) would do, but its
 * extensions (`L`, `W`, `#`, seconds) accept schedules Kubernetes refuses, and the examples are
 * not an npm workspace of their own, so a dependency would have to be installed by hand; this is
 * the standard syntax and nothing more.
 */

/** A parsed schedule: the first run time after a given time. */
export interface CronSchedule {
  /** The first run strictly after `after`, or `undefined` if none comes within five years. */
  next(after: Date): Date | undefined;
}

/** A schedule that cannot be parsed; the message says which field and why, as robfig's does. */
export class CronSyntaxError extends Error {
  override name = "CronSyntaxError";
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  { name: "day of week", min: 0, max: 6, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
];

const DESCRIPTORS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const MINUTE_MS = 60_000;
/** How far `next` looks before it decides a schedule never runs (robfig gives up after five years too). */
const SEARCH_YEARS = 5;

/** Parses a schedule; throws {@link CronSyntaxError} for one Kubernetes would refuse. */
export function parseCronSchedule(spec: string): CronSchedule {
  const text = spec.trim();
  if (text.startsWith("@every ")) return everySchedule(text.slice("@every ".length).trim());
  const expanded = text.startsWith("@") ? DESCRIPTORS[text] : text;
  if (expanded === undefined) throw new CronSyntaxError(`unrecognized descriptor: ${text}`);
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5) throw new CronSyntaxError(`expected exactly 5 fields, found ${parts.length}: ${text}`);
  const [minutes, hours, days, months, weekdays] = parts.map((part, i) => parseField(part, FIELDS[i] as FieldSpec));
  return fieldSchedule(minutes as Field, hours as Field, days as Field, months as Field, weekdays as Field);
}

/** The values a field allows, and whether it was `*` or `?` (which matters for the two day fields). */
interface Field {
  values: Set<number>;
  star: boolean;
}

function parseField(text: string, spec: FieldSpec): Field {
  const values = new Set<number>();
  let star = false;
  for (const item of text.split(",")) {
    const [range = "", stepText, extra] = item.split("/");
    if (extra !== undefined) throw new CronSyntaxError(`too many slashes: ${item}`);
    let low: number;
    let high: number;
    if (range === "*" || range === "?") {
      [low, high] = [spec.min, spec.max];
      star = stepText === undefined || stepText === "1";
    } else {
      const [lowText = "", highText, more] = range.split("-");
      if (more !== undefined) throw new CronSyntaxError(`too many hyphens: ${item}`);
      low = value(lowText, spec);
      // `a/n` runs from a to the field's end; a bare `a` is just a.
      high = highText !== undefined ? value(highText, spec) : stepText !== undefined ? spec.max : low;
    }
    const step = stepText === undefined ? 1 : Number(stepText);
    if (stepText !== undefined && !/^\d+$/.test(stepText)) throw new CronSyntaxError(`bad step: ${item}`);
    if (step === 0) throw new CronSyntaxError(`step of range should be a positive number: ${item}`);
    if (low > high) throw new CronSyntaxError(`beginning of range (${low}) beyond end of range (${high}): ${item}`);
    for (let v = low; v <= high; v += step) values.add(v);
  }
  return { values, star };
}

function value(text: string, spec: FieldSpec): number {
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  const n = named >= 0 ? named + spec.min : /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isNaN(n)) throw new CronSyntaxError(`failed to parse int from ${text} (${spec.name})`);
  if (n < spec.min || n > spec.max) {
    throw new CronSyntaxError(`${spec.name} value ${n} out of range [${spec.min}, ${spec.max}]`);
  }
  return n;
}

function fieldSchedule(minutes: Field, hours: Field, days: Field, months: Field, weekdays: Field): CronSchedule {
  const dayMatches = (d: Date): boolean => {
    const dom = days.values.has(d.getUTCDate());
    const dow = weekdays.values.has(d.getUTCDay());
    return days.star || weekdays.star ? dom && dow : dom || dow;
  };
  return {
    next(after) {
      // The next whole minute after `after`, then skip forward by the coarsest field that does not match.
      const t = new Date(Math.floor(after.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS);
      const limit = after.getUTCFullYear() + SEARCH_YEARS;
      while (t.getUTCFullYear() <= limit) {
        if (!months.values.has(t.getUTCMonth() + 1)) {
          t.setUTCMonth(t.getUTCMonth() + 1, 1);
          t.setUTCHours(0, 0, 0, 0);
        } else if (!dayMatches(t)) {
          t.setUTCDate(t.getUTCDate() + 1);
          t.setUTCHours(0, 0, 0, 0);
        } else if (!hours.values.has(t.getUTCHours())) {
          t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
        } else if (!minutes.values.has(t.getUTCMinutes())) {
          t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
        } else {
          return t;
        }
      }
      return undefined;
    },
  };
}

/** `@every 1h30m`: every so long, counted from the time given, in whole seconds (at least one). */
function everySchedule(text: string): CronSchedule {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (match === null || text === "") throw new CronSyntaxError(`failed to parse duration @every ${text}`);
  const [, h = "0", m = "0", s = "0"] = match;
  const seconds = Math.max(1, Number(h) * 3600 + Number(m) * 60 + Number(s));
  return {
    next: (after) => new Date(Math.floor(after.getTime() / 1000) * 1000 + seconds * 1000),
  };
}
