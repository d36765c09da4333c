/**
 * The CronJob of the kubebuilder book's tutorial (`batch.tutorial.kubebuilder.io/v1`), in a group of
 * ours: a schedule, a Job template, and what to do about concurrency, suspension, late starts and
 * old Jobs. Its status lists the active Jobs, the last scheduled time, and conditions.
 */
import { Conditions, defineResource, Type } from "capstan";
import { JobTemplateSpec } from "capstan/schemas/batch/v1";
import { ObjectReference } from "capstan/schemas/core/v1";

/**
 * The API group. The tutorial's is `batch.tutorial.kubebuilder.io`; ours ends in a domain of ours.
 * The kind stays `CronJob`, so `kubectl get cronjobs` means the built-in batch/v1 CronJobs (kubectl
 * prefers built-in groups): use the short name `cronjobs.batch.tutorial.capstan.dev`, or `tcj`.
 */
export const GROUP = "batch.tutorial.capstan.dev";

/**
 * A CronJob's name is at most 52 characters, as the built-in CronJob's: its Jobs are named
 * `<name>-<unix seconds>` (11 more), and a Job's name must fit the 63 characters of a label value
 * (the Job controller labels its pods with it).
 */
export const MAX_NAME_LENGTH = 52;

export const CronJob = defineResource({
  group: GROUP,
  version: "v1",
  kind: "CronJob",
  scope: "Namespaced",
  shortNames: ["tcj"],
  spec: Type.Object({
    /** The schedule in cron format (`*\/5 * * * *`, `@hourly`), in UTC. */
    schedule: Type.String({ description: "The schedule in cron format, in UTC." }),
    /** How late a missed run may still start, in seconds; older ones are skipped. */
    startingDeadlineSeconds: Type.Optional(
      Type.Integer({ minimum: 0, description: "How late, in seconds, a missed run may still start." }),
    ),
    /** What to do when a run is due while an earlier Job is still active. */
    concurrencyPolicy: Type.Optional(
      Type.Enum(["Allow", "Forbid", "Replace"], {
        default: "Allow",
        description:
          "Allow: run Jobs concurrently; Forbid: skip a run while one is active; Replace: delete the active Job first.",
      }),
    ),
    /** Stops scheduling new runs; Jobs already started go on. */
    suspend: Type.Optional(Type.Boolean({ description: "Stops scheduling new runs; started Jobs go on." })),
    /** The Job each run creates. */
    jobTemplate: JobTemplateSpec,
    /** How many finished successful Jobs to keep (all, unless set). */
    successfulJobsHistoryLimit: Type.Optional(
      Type.Integer({ minimum: 0, format: "int32", description: "How many successful Jobs to keep." }),
    ),
    /** How many finished failed Jobs to keep (all, unless set). */
    failedJobsHistoryLimit: Type.Optional(
      Type.Integer({ minimum: 0, format: "int32", description: "How many failed Jobs to keep." }),
    ),
  }),
  status: Type.Object({
    /** The Jobs of this CronJob that have not finished. */
    active: Type.Optional(Type.Array(ObjectReference, { description: "The Jobs that have not finished." })),
    /** The scheduled time of the latest Job. */
    lastScheduleTime: Type.Optional(
      Type.String({ format: "date-time", description: "The scheduled time of the latest Job." }),
    ),
    /** `Available`, `Progressing` and `Degraded`, as the tutorial sets them. */
    conditions: Type.Optional(Conditions),
  }),
  validations: [
    {
      rule: `size(self.metadata.name) <= ${MAX_NAME_LENGTH}`,
      message: `metadata.name must be no more than ${MAX_NAME_LENGTH} characters`,
    },
  ],
  printerColumns: [
    { name: "Schedule", type: "string", jsonPath: ".spec.schedule" },
    { name: "Suspend", type: "boolean", jsonPath: ".spec.suspend" },
    { name: "Last Schedule", type: "date", jsonPath: ".status.lastScheduleTime" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});
