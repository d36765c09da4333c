/**
 * The tutorial's CronJob through the typed client, hours of schedule in milliseconds: the operator
 * runs on a manual clock, and `cluster.advance("1h")` moves it to the next scheduled time, runs what
 * falls due and waits until the operator is idle again.
 *
 * Nothing runs a Job here (the embedded server has no Job controller, envtest no kubelet): a test
 * finishes a Job by writing its status, as the Job controller would.
 *
 * The API server keeps real time, and a CronJob's `creationTimestamp` — the real time it was
 * created — is where the tutorial starts counting missed runs. A test that moved the operator's
 * clock five hours ahead leaves it five hours ahead of the API server (the clock skew the tutorial's
 * "too many missed start times" error warns of), so each test starts with the operator's clock set
 * back to the real time, and schedules its runs half an hour away from it (`hourlyFromNow`): no run
 * falls between the clock's start and the CronJob's creation, however slow the machine is. Each test
 * names its CronJobs apart and looks only at their Jobs.
 */
import { type Condition, isInvalid, type ObjectOf } from "capstan";
import { Event, Job } from "capstan/core";
import { ManualClock, missingCapability, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CronJob, cronJobOperator, SCHEDULED_AT_ANNOTATION } from "./operator.ts";

type CronJobObject = ObjectOf<typeof CronJob>;
type CronJobSpec = CronJobObject["spec"];

const HOUR = 3_600_000;

let cluster: TestCluster;
let clock: ManualClock;
let NS = "default";
beforeAll(async () => {
  clock = new ManualClock();
  cluster = await startTestCluster({ clock });
  NS = cluster.namespace;
  await cluster.run(cronJobOperator());
});
afterAll(() => cluster?.stop());
// The operator's clock agrees with the API server's again (see above).
beforeEach(() => clock.set(Date.now()));

const cronJobs = () => cluster.client.resource(CronJob, NS);
const jobs = () => cluster.client.resource(Job, NS);

/**
 * An hourly schedule whose first run is 30 to 31 minutes after the clock's now: `{ schedule, first }`,
 * `first` the first run's time (a whole minute).
 */
function hourlyFromNow(): { schedule: string; first: Date } {
  const first = new Date(Math.floor(clock.now() / 60_000) * 60_000 + 31 * 60_000);
  return { schedule: `${first.getUTCMinutes()} * * * *`, first };
}

/** The run `hours` after `first`. */
const at = (first: Date, hours: number) => new Date(first.getTime() + hours * HOUR);
/** The Job name of the run at `time`: `<cronjob>-<unix seconds>`. */
const jobName = (cronJob: string, time: Date) => `${cronJob}-${time.getTime() / 1000}`;
const rfc3339 = (time: Date) => `${time.toISOString().slice(0, 19)}Z`;

const TEMPLATE: CronJobSpec["jobTemplate"] = {
  metadata: { labels: { app: "hello" }, annotations: { "example.com/team": "batch" } },
  spec: {
    template: {
      spec: {
        restartPolicy: "OnFailure",
        containers: [{ name: "hello", image: "busybox", args: ["/bin/sh", "-c", "date; echo Hello"] }],
      },
    },
  },
};

async function createCronJob(name: string, spec: Partial<CronJobSpec> & { schedule: string }): Promise<CronJobObject> {
  const created = await cronJobs().create(
    CronJob.make({ metadata: { name, namespace: NS }, spec: { jobTemplate: TEMPLATE, ...spec } }),
  );
  await cluster.whenIdle();
  return created;
}

/** The names of the Jobs of these CronJobs, sorted (a CronJob's Jobs' names sort by scheduled time). */
async function jobNames(...cronJobNames: string[]): Promise<string[]> {
  return (await jobs().list()).items
    .map((j) => j.metadata?.name as string)
    .filter((name) => cronJobNames.some((cronJob) => new RegExp(`^${cronJob}-\\d+$`).test(name)))
    .sort();
}

/** Finishes a Job as the Job controller would: `Complete` (succeeded) or `Failed`, then waits for the operator. */
async function finish(name: string, outcome: "Complete" | "Failed"): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const condition = { type: outcome, status: "True", lastProbeTime: now, lastTransitionTime: now };
  await jobs().patchStatus(name, {
    status:
      outcome === "Complete"
        ? { startTime: now, completionTime: now, succeeded: 1, conditions: [condition] }
        : { startTime: now, failed: 1, conditions: [{ ...condition, reason: "BackoffLimitExceeded" }] },
  });
  await cluster.whenIdle();
}

async function status(name: string): Promise<NonNullable<CronJobObject["status"]>> {
  return (await cronJobs().get(name)).status ?? {};
}

function condition(
  conditions: Condition[] | undefined,
  type: string,
): Pick<Condition, "status" | "reason"> | undefined {
  const found = conditions?.find((c) => c.type === type);
  return found && { status: found.status, reason: found.reason };
}

describe("CronJob operator (the kubebuilder tutorial), on a manual clock", () => {
  it("creates a Job at each scheduled time across hours, named and annotated for its run, controlled by the CronJob", async () => {
    const { schedule, first } = hourlyFromNow();
    const cronJob = await createCronJob("hello", { schedule });
    expect(await jobNames("hello")).toEqual([]);
    expect(condition((await status("hello")).conditions, "Available")).toEqual({ status: "True", reason: "Scheduled" });

    await cluster.advance("30m"); // the first run is 30 to 31 minutes away: not yet
    expect(await jobNames("hello")).toEqual([]);
    await cluster.advance("1m");
    expect(await jobNames("hello")).toEqual([jobName("hello", first)]);

    const job = await jobs().get(jobName("hello", first));
    // (A real Job controller adds annotations of its own, batch.kubernetes.io/job-tracking.)
    expect(job.metadata?.annotations).toMatchObject({
      "example.com/team": "batch",
      [SCHEDULED_AT_ANNOTATION]: rfc3339(first),
    });
    expect(job.metadata?.labels).toMatchObject({ app: "hello" });
    expect(job.metadata?.ownerReferences).toEqual([
      {
        apiVersion: CronJob.apiVersion,
        kind: "CronJob",
        name: "hello",
        uid: cronJob.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(job.spec?.template.spec?.containers[0]).toMatchObject({ name: "hello", image: "busybox" });

    await cluster.advance("5h");
    expect(await jobNames("hello")).toEqual([0, 1, 2, 3, 4, 5].map((h) => jobName("hello", at(first, h))));
  });

  it("reports the unfinished Jobs in status.active and the latest run in lastScheduleTime, with conditions", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("reported", { schedule });
    expect(await status("reported")).not.toHaveProperty("active");
    expect(await status("reported")).not.toHaveProperty("lastScheduleTime");

    await cluster.advance("1h31m");
    const two = await status("reported");
    expect(two.lastScheduleTime).toBe(rfc3339(at(first, 1)));
    expect(two.active?.map((r) => r.name)).toEqual([jobName("reported", first), jobName("reported", at(first, 1))]);
    const job = await jobs().get(jobName("reported", first));
    expect(two.active?.[0]).toEqual({
      apiVersion: "batch/v1",
      kind: "Job",
      namespace: NS,
      name: job.metadata?.name,
      uid: job.metadata?.uid,
    });
    expect(condition(two.conditions, "Progressing")).toEqual({ status: "True", reason: "JobsActive" });

    await finish(jobName("reported", first), "Complete");
    await finish(jobName("reported", at(first, 1)), "Complete");
    const done = await status("reported");
    expect(done).not.toHaveProperty("active");
    expect(done.lastScheduleTime).toBe(rfc3339(at(first, 1)));
    expect(condition(done.conditions, "Progressing")).toEqual({ status: "False", reason: "NoJobsActive" });
    expect(condition(done.conditions, "Degraded")).toEqual({ status: "False", reason: "AsExpected" });
    // Its lastTransitionTime is the operator's time of the change, not the API server's.
    const progressing = done.conditions?.find((c) => c.type === "Progressing");
    expect(Date.parse(progressing?.lastTransitionTime ?? "")).toBe(Math.floor(clock.now() / 1000) * 1000);
  });

  it("with concurrencyPolicy Forbid, skips runs while a Job is active and starts the missed one when it finishes", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("forbid", { schedule, concurrencyPolicy: "Forbid" });
    await cluster.advance("31m");
    expect(await jobNames("forbid")).toEqual([jobName("forbid", first)]);
    await cluster.advance("3h"); // three runs due, the first Job still active
    expect(await jobNames("forbid")).toEqual([jobName("forbid", first)]);

    // Without a starting deadline the latest missed run still starts, late, as the tutorial's does.
    await finish(jobName("forbid", first), "Complete");
    expect(await jobNames("forbid")).toEqual([jobName("forbid", first), jobName("forbid", at(first, 3))]);
  });

  it("with concurrencyPolicy Replace, deletes the active Job before it starts the next", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("replace", { schedule, concurrencyPolicy: "Replace" });
    await cluster.advance("31m");
    await cluster.advance("1h");
    expect(await jobNames("replace")).toEqual([jobName("replace", at(first, 1))]);
    expect((await status("replace")).active?.map((r) => r.name)).toEqual([jobName("replace", at(first, 1))]);
    const events = (await cluster.client.resource(Event, NS).list()).items.filter(
      (e) => e.involvedObject.name === "replace",
    );
    expect(events.map((e) => [e.reason, e.message])).toContainEqual([
      "SuccessfulDelete",
      `replaced job ${jobName("replace", first)}`,
    ]);
  });

  it("with concurrencyPolicy Allow (the default), runs Jobs side by side", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("allow", { schedule });
    await cluster.advance("2h31m");
    expect((await status("allow")).active?.map((r) => r.name)).toEqual(
      [0, 1, 2].map((h) => jobName("allow", at(first, h))),
    );
  });

  it("while suspended, starts no Job and says so in the Available condition; Jobs already started go on", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("paused", { schedule });
    await cluster.advance("31m");
    await cronJobs().patch("paused", { spec: { suspend: true } }, { type: "merge" });
    await cluster.whenIdle();
    expect(condition((await status("paused")).conditions, "Available")).toEqual({
      status: "False",
      reason: "Suspended",
    });
    await cluster.advance("5h");
    expect(await jobNames("paused")).toEqual([jobName("paused", first)]);
    expect((await status("paused")).lastScheduleTime).toBe(rfc3339(first));
  });

  it("on resuming, starts the latest missed run late, unless it is older than startingDeadlineSeconds", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("late", { schedule, suspend: true });
    await createCronJob("strict", { schedule, suspend: true, startingDeadlineSeconds: 600 });
    await cluster.advance("31m");
    await cluster.advance("20m"); // the run at `first` is 20 minutes old: past strict's 10-minute deadline
    for (const name of ["late", "strict"]) {
      await cronJobs().patch(name, { spec: { suspend: false } }, { type: "merge" });
    }
    await cluster.whenIdle();
    expect(await jobNames("late", "strict")).toEqual([jobName("late", first)]);

    await cluster.advance("40m"); // the next run is on time for both
    expect(await jobNames("late", "strict")).toEqual([
      jobName("late", first),
      jobName("late", at(first, 1)),
      jobName("strict", at(first, 1)),
    ]);
  });

  it("keeps successfulJobsHistoryLimit and failedJobsHistoryLimit finished Jobs, deleting the oldest", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("history", { schedule, successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 });
    await cluster.advance("3h31m");
    const [j0, j1, j2, j3] = [0, 1, 2, 3].map((h) => jobName("history", at(first, h))) as [
      string,
      string,
      string,
      string,
    ];
    expect(await jobNames("history")).toEqual([j0, j1, j2, j3]);

    await finish(j0, "Complete");
    await finish(j1, "Complete"); // two successful: the older goes
    expect(await jobNames("history")).toEqual([j1, j2, j3]);
    await finish(j2, "Failed");
    expect(condition((await status("history")).conditions, "Degraded")).toEqual({
      status: "True",
      reason: "JobsFailed",
    });
    await finish(j3, "Failed"); // two failed: the older goes
    expect(await jobNames("history")).toEqual([j1, j3]);
    // Deleting old Jobs does not move lastScheduleTime back.
    expect((await status("history")).lastScheduleTime).toBe(rfc3339(at(first, 3)));
  });

  it("with a history limit of 0, deletes each finished Job and does not run its time again", async () => {
    const { schedule, first } = hourlyFromNow();
    await createCronJob("nohistory", { schedule, successfulJobsHistoryLimit: 0 });
    await cluster.advance("31m");
    await finish(jobName("nohistory", first), "Complete");
    // The tutorial rebuilds lastScheduleTime from the Jobs alone, so with its Job gone it would run
    // `first` again; the status's own lastScheduleTime remembers it.
    expect(await jobNames("nohistory")).toEqual([]);
    expect((await status("nohistory")).lastScheduleTime).toBe(rfc3339(first));
    await cluster.advance("1h");
    expect(await jobNames("nohistory")).toEqual([jobName("nohistory", at(first, 1))]);
  });

  it("reports an unparseable schedule in its conditions and runs nothing until it is fixed", async () => {
    await createCronJob("typo", { schedule: "0 * * *" });
    const broken = await status("typo");
    expect(condition(broken.conditions, "Available")).toEqual({ status: "False", reason: "InvalidSchedule" });
    expect(broken.conditions?.find((c) => c.type === "Degraded")?.message).toBe(
      'unparseable schedule "0 * * *": expected exactly 5 fields, found 4: 0 * * *',
    );
    await cluster.advance("20m"); // not to an hour yet, so fixed, it has no run to catch up
    expect(await jobNames("typo")).toEqual([]);

    const { schedule, first } = hourlyFromNow();
    await cronJobs().patch("typo", { spec: { schedule } }, { type: "merge" });
    await cluster.whenIdle();
    const fixed = await status("typo");
    expect(condition(fixed.conditions, "Available")).toEqual({ status: "True", reason: "Scheduled" });
    expect(fixed.conditions?.every((c) => c.observedGeneration === 2)).toBe(true);
    await cluster.advance("31m");
    expect(await jobNames("typo")).toEqual([jobName("typo", first)]);
  });

  it("lets the garbage collector delete its Jobs with it (owner references)", async (ctx) => {
    const noGc = missingCapability("garbageCollection", cluster.capabilities);
    if (noGc !== undefined) ctx.skip(noGc);
    const { schedule, first } = hourlyFromNow();
    await createCronJob("collected", { schedule });
    await cluster.advance("1h31m");
    const names = await jobNames("collected");
    expect(names).toEqual([jobName("collected", first), jobName("collected", at(first, 1))]);
    await cronJobs().delete("collected");
    for (const name of names) {
      await cluster.waitForDeletion(Job, `${NS}/${name}`, { timeout: cluster.timeouts.garbageCollection });
    }
  });
});

describe("the CronJob CRD", () => {
  /** The API server's 422 message for a CronJob named `name` with this spec. */
  async function refusal(name: string, spec: Record<string, unknown>): Promise<string> {
    const err = await cronJobs()
      .create({ apiVersion: CronJob.apiVersion, kind: "CronJob", metadata: { name, namespace: NS }, spec } as never)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isInvalid(err), String(err)).toBe(true);
    return (err as Error).message;
  }

  const withContainer = (container: Record<string, unknown>) => ({
    schedule: "@hourly",
    jobTemplate: { spec: { template: { spec: { restartPolicy: "Never", containers: [container] } } } },
  });

  // Where the schema refuses an object, kube-apiserver may list more than its message (another error,
  // a note that the CEL rule on the name was not checked), depending on the error and the version:
  // the tests pin the schema's message (as 1.26.9 and the embedded server both write it).
  it("refuses a bad container in the job template with kube-apiserver's message", async () => {
    const PREFIX = 'CronJob.batch.tutorial.capstan.dev "nameless" is invalid: ';
    expect(await refusal("nameless", withContainer({ image: "busybox" }))).toContain(
      `${PREFIX}[spec.jobTemplate.spec.template.spec.containers[0].name: Required value`,
    );
    expect(await refusal("typed", withContainer({ name: "c", image: 42 }))).toContain(
      'spec.jobTemplate.spec.template.spec.containers[0].image: Invalid value: "integer": spec.jobTemplate.spec.template.spec.containers[0].image in body must be of type string: "integer"',
    );
  });

  it("refuses a concurrencyPolicy it does not know and a negative history limit, and defaults the policy to Allow", async () => {
    const spec = withContainer({ name: "c", image: "busybox" });
    expect(await refusal("sometimes", { ...spec, concurrencyPolicy: "Sometimes" })).toContain(
      'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
    );
    expect(await refusal("negative", { ...spec, failedJobsHistoryLimit: -1 })).toContain(
      'CronJob.batch.tutorial.capstan.dev "negative" is invalid: spec.failedJobsHistoryLimit: Invalid value: -1: spec.failedJobsHistoryLimit in body should be greater than or equal to 0',
    );
    const created = await cronJobs().create({
      apiVersion: CronJob.apiVersion,
      kind: "CronJob",
      metadata: { name: "defaulted", namespace: NS },
      spec,
    } as never);
    expect(created.spec.concurrencyPolicy).toBe("Allow");
  });

  it("refuses a name too long for its Jobs' names", async () => {
    const name = "n".repeat(53);
    expect(await refusal(name, withContainer({ name: "c", image: "busybox" }))).toBe(
      `CronJob.batch.tutorial.capstan.dev "${name}" is invalid: <nil>: Invalid value: "object": metadata.name must be no more than 52 characters`,
    );
  });
});
