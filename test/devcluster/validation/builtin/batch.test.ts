/**
 * The batch group's spec validation over HTTP, as kube-apiserver 1.32 answers: Jobs and CronJobs refused
 * with its 422 (whole message and causes, in its order), valid ones stored as sent plus defaults and the
 * generated selector, and a Job's update rules (immutable template, selector and completions).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, type Response, startRawHttpCluster } from "../../support/http.ts";
import { type Cause, expectInvalid as expectInvalid422 } from "./support/expect-invalid.ts";

const NS = "/apis/batch/v1/namespaces/default";

let t: RawHttpCluster;
beforeAll(async () => {
  t = await startRawHttpCluster({ kubelet: false });
});
afterAll(async () => {
  await t?.stop();
});

const expectInvalid = (res: Response, kind: string, name: string, causes: Cause[]) =>
  expectInvalid422(res, "batch", kind, name, causes);

const CONTAINERS = [{ name: "main", image: "busybox:1.36" }];

const DEFAULTED_CONTAINERS = [
  {
    name: "main",
    image: "busybox:1.36",
    resources: {},
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
  },
];

function podTemplate(spec: Record<string, unknown> = {}, labels?: Record<string, string>) {
  return {
    ...(labels ? { metadata: { labels } } : {}),
    spec: { containers: CONTAINERS, restartPolicy: "Never", ...spec },
  };
}

function job(name: string, spec: Record<string, unknown> = {}) {
  return { apiVersion: "batch/v1", kind: "Job", metadata: { name }, spec: { template: podTemplate(), ...spec } };
}

function cronJob(name: string, spec: Record<string, unknown> = {}, jobSpec: Record<string, unknown> = {}) {
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: { name },
    spec: { schedule: "*/5 * * * *", jobTemplate: { spec: { template: podTemplate(), ...jobSpec } }, ...spec },
  };
}

const NEGATIVE = "must be greater than or equal to 0";

async function create(plural: string, body: unknown): Promise<Response> {
  return t.request("POST", `${NS}/${plural}`, { body });
}

/** Creates `body`, then PUTs what `change` makes of the stored object. */
// biome-ignore lint/suspicious/noExplicitAny: the change edits arbitrary JSON
async function update(plural: string, body: { metadata: { name: string } }, change: (obj: any) => void) {
  const created = await create(plural, body);
  expect(created.status, created.text).toBe(201);
  const next = structuredClone(created.body);
  change(next);
  return t.request("PUT", `${NS}/${plural}/${body.metadata.name}`, { body: next });
}

describe("Jobs", () => {
  it("stores a valid Job with its defaults and the selector and labels generated from its UID", async () => {
    const res = await create("jobs", job("pi"));
    expect(res.status, res.text).toBe(201);
    const uid = res.body.metadata.uid;
    const labels = {
      "controller-uid": uid,
      "batch.kubernetes.io/controller-uid": uid,
      "job-name": "pi",
      "batch.kubernetes.io/job-name": "pi",
    };
    // 1.32's SetDefaults_Job also writes `manualSelector: false`; that is the scheme defaults' business.
    const { manualSelector: _manualSelector, ...spec } = res.body.spec;
    expect(spec).toEqual({
      parallelism: 1,
      completions: 1,
      backoffLimit: 6,
      selector: { matchLabels: { "batch.kubernetes.io/controller-uid": uid } },
      template: {
        metadata: { labels },
        spec: {
          containers: DEFAULTED_CONTAINERS,
          restartPolicy: "Never",
          terminationGracePeriodSeconds: 30,
          dnsPolicy: "ClusterFirst",
          securityContext: {},
          schedulerName: "default-scheduler",
        },
      },
      completionMode: "NonIndexed",
      suspend: false,
      podReplacementPolicy: "TerminatingOrFailed",
    });
  });

  it("requires restartPolicy OnFailure or Never (an absent one defaults to Always)", async () => {
    const message = 'Required value: valid values: "OnFailure", "Never"';
    expectInvalid(
      await create("jobs", job("always", { template: podTemplate({ restartPolicy: undefined }) })),
      "Job",
      "always",
      [["FieldValueRequired", "spec.template.spec.restartPolicy", message]],
    );
    expectInvalid(
      await create("jobs", job("always2", { template: podTemplate({ restartPolicy: "Always" }) })),
      "Job",
      "always2",
      [["FieldValueRequired", "spec.template.spec.restartPolicy", message]],
    );
  });

  it("refuses negative counts and an unknown completion mode, in kube's order", async () => {
    const body = job("counts", {
      parallelism: -1,
      completions: -2,
      activeDeadlineSeconds: -3,
      backoffLimit: -4,
      ttlSecondsAfterFinished: -5,
      completionMode: "Sometimes",
    });
    expectInvalid(await create("jobs", body), "Job", "counts", [
      ["FieldValueInvalid", "spec.parallelism", `Invalid value: -1: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.completions", `Invalid value: -2: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.activeDeadlineSeconds", `Invalid value: -3: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.backoffLimit", `Invalid value: -4: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.ttlSecondsAfterFinished", `Invalid value: -5: ${NEGATIVE}`],
      [
        "FieldValueNotSupported",
        "spec.completionMode",
        'Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"',
      ],
    ]);
  });

  it("checks Indexed completion: completions required, per-index backoff only there", async () => {
    expectInvalid(
      await create("jobs", job("indexed", { completionMode: "Indexed", parallelism: 2 })),
      "Job",
      "indexed",
      [["FieldValueRequired", "spec.completions", "Required value: when completion mode is Indexed"]],
    );
    expectInvalid(
      await create("jobs", job("perindex", { backoffLimitPerIndex: 1, maxFailedIndexes: 2 })),
      "Job",
      "perindex",
      [
        ["FieldValueInvalid", "spec.backoffLimitPerIndex", "Invalid value: 1: requires indexed completion mode"],
        ["FieldValueInvalid", "spec.maxFailedIndexes", "Invalid value: 2: requires indexed completion mode"],
      ],
    );
    const long = "a".repeat(62);
    expectInvalid(
      await create("jobs", job(long, { completionMode: "Indexed", completions: 100, parallelism: 1 })),
      "Job",
      long,
      [
        [
          "FieldValueInvalid",
          "metadata.name",
          `Invalid value: "${long}": will not able to create pod with invalid DNS label: ${long}-99`,
        ],
      ],
    );
  });

  it("checks a pod failure policy against the restart policy and its rules", async () => {
    const body = job("pfp", {
      template: podTemplate({ restartPolicy: "OnFailure" }),
      podFailurePolicy: {
        rules: [
          { action: "Retry", onExitCodes: { operator: "In", values: [3, 0, 3] } },
          { action: "Ignore" },
          { action: "FailJob", onExitCodes: { containerName: "other", operator: "NotIn", values: [] } },
        ],
      },
    });
    expectInvalid(await create("jobs", body), "Job", "pfp", [
      [
        "FieldValueNotSupported",
        "spec.podFailurePolicy.rules[0].action",
        'Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
      ],
      [
        "FieldValueInvalid",
        "spec.podFailurePolicy.rules[0].onExitCodes.values[1]",
        "Invalid value: 0: must not be 0 for the In operator",
      ],
      ["FieldValueDuplicate", "spec.podFailurePolicy.rules[0].onExitCodes.values[2]", "Duplicate value: 3"],
      [
        "FieldValueInvalid",
        "spec.podFailurePolicy.rules[0].onExitCodes.values",
        "Invalid value: []int32{3, 0, 3}: must be ordered",
      ],
      [
        "FieldValueInvalid",
        "spec.podFailurePolicy.rules[1]",
        "Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
      ],
      [
        "FieldValueInvalid",
        "spec.podFailurePolicy.rules[2].onExitCodes.containerName",
        'Invalid value: "other": must be one of the container or initContainer names in the pod template',
      ],
      [
        "FieldValueInvalid",
        "spec.podFailurePolicy.rules[2].onExitCodes.values",
        "Invalid value: []int32{}: at least one value is required",
      ],
      [
        "FieldValueInvalid",
        "spec.template.spec.restartPolicy",
        'Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
      ],
    ]);
  });

  it("with manualSelector, requires a selector that selects the template", async () => {
    expectInvalid(
      await create(
        "jobs",
        job("manual", {
          manualSelector: true,
          selector: { matchLabels: { app: "a" } },
          template: podTemplate({}, { app: "b" }),
        }),
      ),
      "Job",
      "manual",
      [
        [
          "FieldValueInvalid",
          "spec.template.metadata.labels",
          'Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
        ],
      ],
    );
    expectInvalid(await create("jobs", job("manual2", { manualSelector: true })), "Job", "manual2", [
      ["FieldValueRequired", "spec.selector", "Required value"],
      [
        "FieldValueInvalid",
        "spec.template.metadata.labels",
        "Invalid value: map[string]string(nil): `selector` does not match template `labels`",
      ],
    ]);
  });

  it("refuses a selector of its own without manualSelector, and generated labels it overrode", async () => {
    const res = await create(
      "jobs",
      job("ownsel", {
        selector: { matchLabels: { app: "a" } },
        template: podTemplate({}, { app: "a", "job-name": "other" }),
      }),
    );
    expect(res.status, res.text).toBe(422);
    const fields = res.body.details.causes.map((c: { field: string; reason: string }) => [c.reason, c.field]);
    expect(fields).toEqual([
      ["FieldValueInvalid", "spec.template.metadata.labels[job-name]"],
      ["FieldValueInvalid", "spec.selector"],
    ]);
    // The UID is the server's: the messages name it.
    expect(res.body.details.causes[0].message).toMatch(
      /^Invalid value: map\[string\]string\{"app":"a", "batch.kubernetes.io\/controller-uid":"[0-9a-f-]{36}", "batch.kubernetes.io\/job-name":"ownsel", "controller-uid":"[0-9a-f-]{36}", "job-name":"other"\}: must be 'ownsel'$/,
    );
    expect(res.body.details.causes[1].message).toMatch(
      /^Invalid value: v1.LabelSelector\{MatchLabels:map\[string\]string\{"app":"a", "batch.kubernetes.io\/controller-uid":"[0-9a-f-]{36}"\}, MatchExpressions:\[\]v1.LabelSelectorRequirement\(nil\)\}: `selector` not auto-generated$/,
    );
  });

  it("keeps its template, completions and selector on update; parallelism may change", async () => {
    const res = await update("jobs", job("up"), (obj) => {
      obj.spec.template.spec.containers[0].image = "busybox:1.37";
      obj.spec.completions = 2;
      obj.spec.parallelism = 2;
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
      "spec.completions",
      "spec.template",
    ]);
    expect(res.body.details.causes[0].message).toBe("Invalid value: 2: field is immutable");
    // 1.32 prints the internal core.PodTemplateSpec with %#v; the devcluster prints the %#v of its JSON.
    expect(res.body.details.causes[1].message).toMatch(
      /^Invalid value: map\[string\]interface \{\}\{"metadata":map\[string\]interface \{\}\{.*"busybox:1\.37".*\}: field is immutable$/,
    );
    const stored = await t.request("GET", `${NS}/jobs/up`);
    const next = structuredClone(stored.body);
    next.spec.parallelism = 3;
    next.spec.activeDeadlineSeconds = 60;
    const ok = await t.request("PUT", `${NS}/jobs/up`, { body: next });
    expect(ok.status, ok.text).toBe(200);
  });

  it("lets an Indexed Job change completions only together with parallelism", async () => {
    const body = job("elastic", { completionMode: "Indexed", completions: 2, parallelism: 2 });
    expectInvalid(
      await update("jobs", body, (obj) => {
        obj.spec.completions = 3;
      }),
      "Job",
      "elastic",
      [
        [
          "FieldValueInvalid",
          "spec.completions",
          "Invalid value: 3: can only be modified in tandem with spec.parallelism",
        ],
      ],
    );
    const stored = await t.request("GET", `${NS}/jobs/elastic`);
    const next = structuredClone(stored.body);
    next.spec.completions = 3;
    next.spec.parallelism = 3;
    expect((await t.request("PUT", `${NS}/jobs/elastic`, { body: next })).status).toBe(200);
  });

  it("lets a suspended Job that never started change its scheduling directives, and nothing else", async () => {
    const body = job("suspended", { suspend: true });
    const ok = await update("jobs", body, (obj) => {
      obj.spec.template.spec.nodeSelector = { zone: "a" };
      obj.spec.template.spec.tolerations = [{ key: "gpu", operator: "Exists" }];
      obj.spec.template.metadata.annotations = { team: "ml" };
    });
    expect(ok.status, ok.text).toBe(200);
    const next = structuredClone(ok.body);
    next.spec.template.spec.containers[0].args = ["run"];
    const res = await t.request("PUT", `${NS}/jobs/suspended`, { body: next });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes.map((c: { field: string }) => c.field)).toEqual(["spec.template"]);
  });

  it("keeps a manual selector on update, and lists the spec's errors twice", async () => {
    const body = job("mansel", {
      manualSelector: true,
      selector: { matchLabels: { app: "a" } },
      template: podTemplate({}, { app: "a", tier: "b" }),
    });
    expectInvalid(
      await update("jobs", body, (obj) => {
        obj.spec.selector.matchLabels.tier = "b";
        obj.spec.backoffLimit = -1;
      }),
      "Job",
      "mansel",
      [
        ["FieldValueInvalid", "spec.backoffLimit", `Invalid value: -1: ${NEGATIVE}`],
        ["FieldValueInvalid", "spec.backoffLimit", `Invalid value: -1: ${NEGATIVE}`],
        [
          "FieldValueInvalid",
          "spec.selector",
          'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"a", "tier":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
        ],
      ],
    );
  });
});

describe("CronJobs", () => {
  it("stores a valid CronJob with its defaults", async () => {
    const res = await create(
      "cronjobs",
      cronJob("nightly", { schedule: "0 3 * jan-dec mon-fri", timeZone: "Europe/Paris" }),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).toEqual({
      schedule: "0 3 * jan-dec mon-fri",
      timeZone: "Europe/Paris",
      concurrencyPolicy: "Allow",
      suspend: false,
      jobTemplate: {
        spec: {
          template: {
            spec: {
              containers: DEFAULTED_CONTAINERS,
              restartPolicy: "Never",
              terminationGracePeriodSeconds: 30,
              dnsPolicy: "ClusterFirst",
              securityContext: {},
              schedulerName: "default-scheduler",
            },
          },
        },
      },
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    });
    for (const schedule of ["@hourly", "@every 1h30m", "*/15 0-6,22-23 1,15 * ?", "0 12 * * SUN"])
      expect(
        (await create("cronjobs", cronJob(`ok-${schedule.length}-${schedule.charCodeAt(1)}`, { schedule }))).status,
      ).toBe(201);
  });

  it("refuses a schedule robfig/cron cannot parse, with its words", async () => {
    const cases: Array<[string, string]> = [
      ["bad", "expected exactly 5 fields, found 1: [bad]"],
      ["61 * * * *", "end of range (61) above maximum (59): 61"],
      ["*/0 * * * *", "step of range should be a positive number: */0"],
      ["0 0 * * 7", "end of range (7) above maximum (6): 7"],
      ["0 0 * foo *", 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'],
      ["5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"],
      ["@every 5x", 'failed to parse duration @every 5x: time: unknown unit "x" in duration "5x"'],
      ["@fortnightly", "unrecognized descriptor: @fortnightly"],
    ];
    for (const [i, [schedule, error]] of cases.entries()) {
      const name = `sched-${i}`;
      expectInvalid(await create("cronjobs", cronJob(name, { schedule })), "CronJob", name, [
        ["FieldValueInvalid", "spec.schedule", `Invalid value: "${schedule}": ${error}`],
      ]);
    }
    expectInvalid(await create("cronjobs", cronJob("tz", { schedule: "TZ=UTC 0 * * * *" })), "CronJob", "tz", [
      [
        "FieldValueInvalid",
        "spec.schedule",
        'Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
      ],
    ]);
    expectInvalid(await create("cronjobs", cronJob("noschedule", { schedule: "" })), "CronJob", "noschedule", [
      ["FieldValueRequired", "spec.schedule", "Required value"],
    ]);
  });

  it("checks the time zone, concurrency policy and counts", async () => {
    const body = cronJob("fields", {
      startingDeadlineSeconds: -1,
      timeZone: "Mars/Olympus",
      concurrencyPolicy: "Sometimes",
      successfulJobsHistoryLimit: -2,
      failedJobsHistoryLimit: -3,
    });
    expectInvalid(await create("cronjobs", body), "CronJob", "fields", [
      ["FieldValueInvalid", "spec.startingDeadlineSeconds", `Invalid value: -1: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.timeZone", 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'],
      [
        "FieldValueNotSupported",
        "spec.concurrencyPolicy",
        'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
      ],
      ["FieldValueInvalid", "spec.successfulJobsHistoryLimit", `Invalid value: -2: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.failedJobsHistoryLimit", `Invalid value: -3: ${NEGATIVE}`],
    ]);
    expectInvalid(await create("cronjobs", cronJob("local", { timeZone: "Local" })), "CronJob", "local", [
      [
        "FieldValueInvalid",
        "spec.timeZone",
        'Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
      ],
    ]);
    expectInvalid(await create("cronjobs", cronJob("tzpart", { timeZone: "America/../Paris" })), "CronJob", "tzpart", [
      ["FieldValueInvalid", "spec.timeZone", 'Invalid value: "America/../Paris": unknown time zone America/../Paris'],
    ]);
  });

  it("validates the job template like a Job's spec, with the selector left to the controller", async () => {
    const body = cronJob(
      "template",
      {},
      {
        parallelism: -1,
        selector: { matchLabels: { app: "x" } },
        manualSelector: true,
        template: podTemplate({ restartPolicy: "Always" }),
      },
    );
    expectInvalid(await create("cronjobs", body), "CronJob", "template", [
      ["FieldValueInvalid", "spec.jobTemplate.spec.parallelism", `Invalid value: -1: ${NEGATIVE}`],
      [
        "FieldValueRequired",
        "spec.jobTemplate.spec.template.spec.restartPolicy",
        'Required value: valid values: "OnFailure", "Never"',
      ],
      [
        "FieldValueInvalid",
        "spec.jobTemplate.spec.selector",
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated',
      ],
      [
        "FieldValueNotSupported",
        "spec.jobTemplate.spec.manualSelector",
        'Unsupported value: true: supported values: "nil", "false"',
      ],
    ]);
  });

  it("limits names to 52 characters on create", async () => {
    const name = "c".repeat(53);
    expectInvalid(await create("cronjobs", cronJob(name)), "CronJob", name, [
      ["FieldValueInvalid", "metadata.name", `Invalid value: "${name}": must be no more than 52 characters`],
    ]);
    expect((await create("cronjobs", cronJob("c".repeat(52)))).status).toBe(201);
  });

  it("checks the schedule again on update", async () => {
    expectInvalid(
      await update("cronjobs", cronJob("resched"), (obj) => {
        obj.spec.schedule = "* * *";
      }),
      "CronJob",
      "resched",
      [["FieldValueInvalid", "spec.schedule", 'Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]']],
    );
  });
});

describe("the pod template rules (core-pod.ts) inside the workload", () => {
  it("refuses a Job and a CronJob whose templates have no containers", async () => {
    expectInvalid(
      await create("jobs", job("nocontainers", { template: { spec: { restartPolicy: "Never" } } })),
      "Job",
      "nocontainers",
      [["FieldValueRequired", "spec.template.spec.containers", "Required value"]],
    );
    expectInvalid(
      await create("cronjobs", cronJob("nocontainers", {}, { template: { spec: { restartPolicy: "OnFailure" } } })),
      "CronJob",
      "nocontainers",
      [["FieldValueRequired", "spec.jobTemplate.spec.template.spec.containers", "Required value"]],
    );
  });
});
