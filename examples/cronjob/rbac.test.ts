/**
 * The CronJob operator under RBAC, as a ServiceAccount bound only to what `capstan generate rbac`
 * prints for it: a run and a Replace pass; without `delete` on Jobs, the Replace is refused with a
 * 403 naming the ServiceAccount.
 */
import { fileURLToPath } from "node:url";
import { Job } from "capstan/core";
import {
  type GeneratedRbac,
  ManualClock,
  type ServiceAccountIdentity,
  startTestCluster,
  type TestCluster,
} from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CronJob, cronJobOperator } from "./operator.ts";

const OPERATOR = fileURLToPath(new URL("./operator.ts", import.meta.url));
const SYSTEM_NS = "cronjob-system";
const USER = `system:serviceaccount:${SYSTEM_NS}:cronjob`;

let cluster: TestCluster;
let clock: ManualClock;
let rbac: GeneratedRbac<ServiceAccountIdentity>;

beforeAll(async () => {
  clock = new ManualClock();
  cluster = await startTestCluster({ clock });
  rbac = await cluster.generatedRbac(OPERATOR, { namespace: SYSTEM_NS });
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
afterAll(() => cluster?.stop());

/** A Replace CronJob with its first run 30 to 31 minutes from the clock's now (see operator.test.ts). */
async function createReplacing(name: string): Promise<void> {
  clock.set(Date.now());
  const first = new Date(Math.floor(clock.now() / 60_000) * 60_000 + 31 * 60_000);
  await cluster.client.resource(CronJob, cluster.namespace).create(
    CronJob.make({
      metadata: { name, namespace: cluster.namespace },
      spec: {
        schedule: `${first.getUTCMinutes()} * * * *`,
        concurrencyPolicy: "Replace",
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
        },
      },
    }),
  );
}

const jobNames = async (prefix: string) =>
  (await cluster.client.resource(Job, cluster.namespace).list()).items
    .map((j) => j.metadata?.name as string)
    .filter((n) => n.startsWith(`${prefix}-`));

describe("CronJob operator under RBAC", () => {
  it("derives watch, get, create and delete on Jobs, and its CronJobs and their status", () => {
    const verbs = (group: string, resource: string) =>
      rbac.rules
        .filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource))
        .flatMap((r) => r.verbs)
        .sort();
    // (`owns` also grants patch, for ctx.apply, which this operator does not use.)
    expect(verbs("batch", "jobs")).toEqual(expect.arrayContaining(["create", "delete", "get", "list", "watch"]));
    expect(verbs("batch.tutorial.capstan.dev", "cronjobs")).toEqual(["list", "watch"]);
    expect(verbs("batch.tutorial.capstan.dev", "cronjobs/status")).toEqual(["patch"]);
  });

  it("creates and replaces Jobs with the generated rules alone, and logs the 403 without delete on Jobs", async () => {
    const sa = await rbac.apply();
    expect(sa.username).toBe(USER);
    let running = await cluster.run(cronJobOperator(), { client: sa.client });
    await createReplacing("granted");
    await cluster.advance("1h31m");
    expect(await jobNames("granted")).toHaveLength(1); // the first run's Job replaced by the second's
    await running.stop();

    await rbac.apply((rule) =>
      rule.resources.includes("jobs") ? { ...rule, verbs: rule.verbs.filter((v) => v !== "delete") } : rule,
    );
    running = await cluster.run(cronJobOperator(), { client: sa.client });
    await createReplacing("denied");
    await cluster.advance("31m");
    await cluster.advance("1h"); // the Replace fails with a 403, and is retried with backoff on this clock
    await running.waitForLog(`is forbidden: User "${USER}" cannot delete resource "jobs" in API group "batch"`);
    await running.stop();
  });
});
