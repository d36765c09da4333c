/**
 * The kubebuilder book's CronJob tutorial, as a Capstan operator: a CronJob runs a Job from its
 * template at each time of its cron schedule.
 *
 * Each reconcile, level-triggered as the tutorial's:
 * 1. reads the CronJob's Jobs (those it controls, from the informer cache) and sorts them into
 *    active, successful and failed (a Job is finished once its `Complete` or `Failed` condition is
 *    True);
 * 2. deletes the oldest finished Jobs beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit`;
 * 3. unless suspended, finds the latest scheduled time that has passed since the last run (or the
 *    CronJob's creation) and has not run yet, and runs it if it is not older than
 *    `startingDeadlineSeconds` and the `concurrencyPolicy` lets it: `Allow` runs it beside the
 *    active Jobs, `Forbid` skips it while any is active, `Replace` deletes them first. The Job is
 *    named `<cronjob>-<unix time of the schedule>` (so a second attempt at one run finds the first),
 *    annotated with the scheduled time, and controlled by the CronJob (garbage-collected with it);
 * 4. writes the status — `active` (references to the unfinished Jobs), `lastScheduleTime`, and the
 *    conditions `Available`, `Progressing` and `Degraded` — when it changed;
 * 5. asks to be called again at the next scheduled time (`requeueAfter`): no timer of its own, and
 *    a test moves the operator's clock there (`cluster.advance("1h")`) instead of waiting.
 *
 * Time is `ctx.now()`, the operator's clock, never `Date.now()`.
 */
import {
  type Condition,
  isAlreadyExists,
  isDeleted,
  isNotFound,
  needs,
  type ObjectOf,
  type Operator,
  operator,
  type ReconcileContext,
  type ReconcileResult,
  setCondition,
} from "capstan";
import { Job } from "capstan/core";
import { CONTROLLER_OWNER_INDEX } from "capstan/runtime";
import { CronSyntaxError, parseCronSchedule } from "./cron-schedule.ts";
import { CronJob } from "./resources.ts";

export { CronJob, GROUP, MAX_NAME_LENGTH } from "./resources.ts";

type CronJobObject = ObjectOf<typeof CronJob>;
type JobObject = ObjectOf<typeof Job>;
type CronJobStatus = NonNullable<CronJobObject["status"]>;

/** On each Job: the time it was scheduled for (RFC 3339, seconds), as the tutorial's `scheduled-at`. */
export const SCHEDULED_AT_ANNOTATION = "batch.tutorial.capstan.dev/scheduled-at";

/**
 * Missed runs counted at most before the CronJob is declared Degraded (the tutorial's and
 * Kubernetes' 100): a clock that is wildly off, or a CronJob never reconciled for months, must not
 * make a reconcile walk years of minutes. `startingDeadlineSeconds` bounds the walk.
 */
export const MAX_MISSED_STARTS = 100;

/** The CronJob operator; see the module documentation. */
export function cronJobOperator(): Operator {
  // Jobs are created (and read back after a conflict) and deleted through ctx.client, never applied:
  // `owns(Job, { apply: false })` derives only the watch, and these are declared for `capstan generate rbac`.
  const op = operator({ name: "cronjob", permissions: [needs.custom(Job, ["get", "create", "delete"])] });
  op.controller(CronJob)
    .owns(Job, { apply: false })
    .reconcile((cronJob, ctx) => (isDeleted(cronJob) ? undefined : reconcileCronJob(cronJob, ctx)));
  return op;
}

export default cronJobOperator();

async function reconcileCronJob(
  cronJob: CronJobObject,
  ctx: ReconcileContext<CronJobObject>,
): Promise<ReconcileResult> {
  const now = ctx.now();
  const { spec } = cronJob;
  const jobs = sortJobs(ctx.cache(Job).byIndex(CONTROLLER_OWNER_INDEX, cronJob.metadata.uid as string));
  // Jobs deleted by this reconcile: still in the cache, no longer counted.
  const gone = new Set<string>();

  await deleteBeyondLimit(jobs.successful, spec.successfulJobsHistoryLimit, ctx, gone);
  await deleteBeyondLimit(jobs.failed, spec.failedJobsHistoryLimit, ctx, gone);

  // The latest run: from the Jobs, and from the status too, so a run whose Job the history limit
  // deleted (or the cache has not shown yet) is not run again.
  let lastScheduleTime = latest([
    ...jobs.all.map(scheduledTime),
    cronJob.status?.lastScheduleTime === undefined ? undefined : new Date(cronJob.status.lastScheduleTime),
  ]);
  let active = jobs.active;
  const plan = schedulePlan(cronJob, lastScheduleTime, now);
  const result: ReconcileResult =
    plan.next === undefined ? undefined : { requeueAfter: Math.max(0, plan.next.getTime() - now.getTime()) };

  if (!spec.suspend && plan.due !== undefined) {
    const due = plan.due;
    const deadline = spec.startingDeadlineSeconds;
    if (deadline !== undefined && due.getTime() + deadline * 1000 < now.getTime()) {
      ctx.logger.debug({ due }, "missed the starting deadline of the last run; waiting for the next");
    } else if (spec.concurrencyPolicy === "Forbid" && active.length > 0) {
      ctx.logger.debug({ due, active: active.length }, "a Job is active and the policy is Forbid; skipping this run");
    } else {
      if (spec.concurrencyPolicy === "Replace") {
        for (const job of active) await deleteJob(job, ctx, gone, `replaced job ${job.metadata?.name}`);
        active = [];
      }
      active = [...active, await runJob(cronJob, due, ctx)];
      lastScheduleTime = due;
    }
  }

  const status: CronJobStatus = {
    active: active.map(reference),
    lastScheduleTime: lastScheduleTime === undefined ? undefined : rfc3339(lastScheduleTime),
    conditions: conditions(cronJob, plan, active.length, jobs.failed.filter((j) => !gone.has(uidOf(j))).length, now),
  };
  await writeStatus(cronJob, status, ctx);
  return result;
}

/** What the schedule says now: the run due (latest scheduled time passed and not run), the next one, or why neither. */
interface SchedulePlan {
  due?: Date;
  next?: Date;
  problem?: { reason: "InvalidSchedule" | "TooManyMissedStarts"; message: string };
}

/** The tutorial's `getNextSchedule`. */
function schedulePlan(cronJob: CronJobObject, lastScheduleTime: Date | undefined, now: Date): SchedulePlan {
  let schedule: ReturnType<typeof parseCronSchedule>;
  try {
    schedule = parseCronSchedule(cronJob.spec.schedule);
  } catch (err) {
    if (!(err instanceof CronSyntaxError)) throw err;
    return {
      problem: {
        reason: "InvalidSchedule",
        message: `unparseable schedule "${cronJob.spec.schedule}": ${err.message}`,
      },
    };
  }
  let earliest = lastScheduleTime ?? new Date(cronJob.metadata.creationTimestamp as string);
  const deadline = cronJob.spec.startingDeadlineSeconds;
  if (deadline !== undefined && now.getTime() - deadline * 1000 > earliest.getTime()) {
    // Nothing older than the deadline will be run: no need to look at it.
    earliest = new Date(now.getTime() - deadline * 1000);
  }
  const next = schedule.next(now);
  if (earliest > now) return { next };
  let due: Date | undefined;
  let starts = 0;
  for (let t = schedule.next(earliest); t !== undefined && t <= now; t = schedule.next(t)) {
    due = t;
    if (++starts > MAX_MISSED_STARTS) {
      return {
        problem: {
          reason: "TooManyMissedStarts",
          message: `too many missed start times (> ${MAX_MISSED_STARTS}): set or decrease .spec.startingDeadlineSeconds or check clock skew`,
        },
      };
    }
  }
  return { due, next };
}

/** Creates the Job of the run scheduled at `due`, or finds it if an earlier attempt did. */
async function runJob(cronJob: CronJobObject, due: Date, ctx: ReconcileContext<CronJobObject>): Promise<JobObject> {
  const template = cronJob.spec.jobTemplate;
  const name = `${cronJob.metadata.name}-${Math.floor(due.getTime() / 1000)}`;
  const job = ctx.adopt(
    Job.make({
      metadata: {
        name,
        namespace: ctx.key.namespace,
        labels: { ...template.metadata?.labels },
        annotations: { ...template.metadata?.annotations, [SCHEDULED_AT_ANNOTATION]: rfc3339(due) },
      },
      spec: structuredClone(template.spec) as JobObject["spec"],
    }),
  );
  const jobs = ctx.client.resource(Job, ctx.key.namespace);
  try {
    const created = await jobs.create(job, { signal: ctx.signal });
    ctx.event("Normal", "SuccessfulCreate", `Created job ${name}`);
    return created;
  } catch (err) {
    // A reconcile that ran from a cache without this Job yet: the run happened, take its Job.
    if (!isAlreadyExists(err)) throw err;
    return jobs.get(name, { signal: ctx.signal });
  }
}

/** Deletes the oldest of `finished` (sorted oldest first) until `limit` are left; no limit keeps all. */
async function deleteBeyondLimit(
  finished: JobObject[],
  limit: number | undefined,
  ctx: ReconcileContext<CronJobObject>,
  gone: Set<string>,
): Promise<void> {
  if (limit === undefined) return;
  for (const job of finished.slice(0, Math.max(0, finished.length - limit))) {
    await deleteJob(job, ctx, gone, `deleted old job ${job.metadata?.name}`);
  }
}

async function deleteJob(
  job: JobObject,
  ctx: ReconcileContext<CronJobObject>,
  gone: Set<string>,
  message: string,
): Promise<void> {
  try {
    // Background: the Job goes now, its pods after it (the garbage collector's work).
    await ctx.client.resource(Job, ctx.key.namespace).delete(job.metadata?.name as string, {
      propagationPolicy: "Background",
      preconditions: { uid: job.metadata?.uid },
      signal: ctx.signal,
    });
    ctx.event("Normal", "SuccessfulDelete", message);
  } catch (err) {
    if (!isNotFound(err)) throw err; // already gone: just as good
  }
  gone.add(uidOf(job));
}

/** The CronJob's Jobs (not being deleted), oldest scheduled first, split as the tutorial splits them. */
function sortJobs(owned: JobObject[]): {
  all: JobObject[];
  active: JobObject[];
  successful: JobObject[];
  failed: JobObject[];
} {
  const all = owned
    .filter((j) => j.metadata?.deletionTimestamp === undefined)
    .sort((a, b) => (scheduledTime(a)?.getTime() ?? 0) - (scheduledTime(b)?.getTime() ?? 0));
  const finished = (j: JobObject, type: string) =>
    j.status?.conditions?.some((c) => c.type === type && c.status === "True") === true;
  return {
    all,
    active: all.filter((j) => !finished(j, "Complete") && !finished(j, "Failed")),
    successful: all.filter((j) => finished(j, "Complete")),
    failed: all.filter((j) => finished(j, "Failed")),
  };
}

/** The conditions, recomputed from what this reconcile saw (the tutorial's Available, Progressing, Degraded). */
function conditions(
  cronJob: CronJobObject,
  plan: SchedulePlan,
  active: number,
  failed: number,
  now: Date,
): Condition[] {
  const generation = cronJob.metadata.generation;
  const next = plan.next === undefined ? "the schedule has no next run" : `next run at ${rfc3339(plan.next)}`;
  const available: [Condition["status"], string, string] = cronJob.spec.suspend
    ? ["False", "Suspended", "the CronJob is suspended"]
    : plan.problem !== undefined
      ? ["False", plan.problem.reason, plan.problem.message]
      : ["True", "Scheduled", next];
  const degraded: [Condition["status"], string, string] =
    plan.problem !== undefined
      ? ["True", plan.problem.reason, plan.problem.message]
      : failed > 0
        ? ["True", "JobsFailed", `${failed} failed job(s) kept`]
        : ["False", "AsExpected", ""];
  const progressing: [Condition["status"], string, string] =
    active > 0 ? ["True", "JobsActive", `${active} job(s) active`] : ["False", "NoJobsActive", "no job active"];
  let list = cronJob.status?.conditions;
  for (const [type, [status, reason, message]] of [
    ["Available", available],
    ["Progressing", progressing],
    ["Degraded", degraded],
  ] as const) {
    list = setCondition(list, { type, status, reason, message, observedGeneration: generation }, now).conditions;
  }
  return list ?? [];
}

/** Patches the status with what differs from the CronJob's (fields to remove as `null`); nothing if nothing does. */
async function writeStatus(
  cronJob: CronJobObject,
  status: CronJobStatus,
  ctx: ReconcileContext<CronJobObject>,
): Promise<void> {
  const current = cronJob.status ?? {};
  const patch: Record<string, unknown> = {};
  for (const key of ["active", "lastScheduleTime", "conditions"] as const) {
    const wanted = key === "active" && status.active?.length === 0 ? undefined : status[key];
    if (JSON.stringify(wanted) !== JSON.stringify(current[key])) patch[key] = wanted ?? null;
  }
  if (Object.keys(patch).length > 0) await ctx.patchStatus(patch);
}

/** A reference to a Job, as `status.active` holds it. */
function reference(job: JobObject): NonNullable<CronJobStatus["active"]>[number] {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    namespace: job.metadata?.namespace,
    name: job.metadata?.name,
    uid: job.metadata?.uid,
  };
}

function scheduledTime(job: JobObject): Date | undefined {
  const text = job.metadata?.annotations?.[SCHEDULED_AT_ANNOTATION];
  const time = text === undefined ? Number.NaN : Date.parse(text);
  return Number.isNaN(time) ? undefined : new Date(time);
}

function latest(times: (Date | undefined)[]): Date | undefined {
  let best: Date | undefined;
  for (const t of times) if (t !== undefined && (best === undefined || t > best)) best = t;
  return best;
}

function uidOf(job: JobObject): string {
  return job.metadata?.uid as string;
}

/** `metav1.Time` on the wire: RFC 3339 in UTC, whole seconds. */
function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
