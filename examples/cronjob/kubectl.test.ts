/**
 * The CronJob driven with the real kubectl and the folder's manifests, as the README tells a
 * newcomer to do it, on a manual clock: the sample's every-minute schedule runs by `cluster.advance`.
 */
import { fileURLToPath } from "node:url";
import { ManualClock, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cronJobOperator } from "./operator.ts";

const manifest = (file: string) => fileURLToPath(new URL(file, import.meta.url));

let cluster: TestCluster;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock();
  cluster = await startTestCluster({ clock });
  await cluster.run(cronJobOperator());
});
afterAll(() => cluster?.stop());

/** Runs kubectl and returns its stdout; a non-zero exit fails the test with kubectl's stderr. */
async function kubectl(args: string[]): Promise<string> {
  const r = await cluster.kubectl(args);
  expect(r.code, `kubectl ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

it("applies the sample, runs it each minute, shows it as tcj (not as the built-in cronjobs), and suspends it", async () => {
  await kubectl(["apply", "-f", manifest("cronjob.yaml")]);
  await cluster.whenIdle();
  expect(await kubectl(["get", "tcj"])).toMatch(
    /^NAME\s+SCHEDULE\s+SUSPEND\s+LAST SCHEDULE\s+AGE\ncronjob-sample\s+\*\/1 \* \* \* \*\s+/,
  );
  // `cronjobs` is the built-in batch/v1 resource: kubectl prefers it to ours.
  expect((await cluster.kubectl(["get", "cronjobs"])).stderr).toMatch(/No resources found/);
  expect(await kubectl(["get", "cronjobs.batch.tutorial.capstan.dev", "-o", "name"])).toBe(
    "cronjob.batch.tutorial.capstan.dev/cronjob-sample\n",
  );

  // Runs come at whole minutes after the CronJob's creation (the API server's real time); the
  // operator's clock started a little earlier, so the first minute may fall before the creation.
  const created = Date.parse(
    await kubectl(["get", "tcj", "cronjob-sample", "-o", "jsonpath={.metadata.creationTimestamp}"]),
  );
  await cluster.advance("3m");
  const runs = Math.floor(clock.now() / 60_000) - Math.floor(created / 60_000);
  expect(runs).toBeGreaterThanOrEqual(2);
  const jobs = (await kubectl(["get", "jobs", "-o", "name"])).trim().split("\n");
  expect(jobs).toHaveLength(runs);
  expect(jobs.every((j) => /^job\.batch\/cronjob-sample-\d{10}$/.test(j))).toBe(true);
  const available = await kubectl([
    "get",
    "tcj",
    "cronjob-sample",
    "-o",
    'jsonpath={.status.conditions[?(@.type=="Available")].message}',
  ]);
  expect(available).toBe(
    `next run at ${new Date(Math.floor(clock.now() / 60_000 + 1) * 60_000).toISOString().slice(0, 19)}Z`,
  );

  await kubectl(["patch", "tcj", "cronjob-sample", "--type", "merge", "-p", '{"spec":{"suspend":true}}']);
  await cluster.advance("5m");
  expect((await kubectl(["get", "jobs", "-o", "name"])).trim().split("\n")).toHaveLength(runs);
  expect(await kubectl(["describe", "tcj", "cronjob-sample"])).toMatch(
    /SuccessfulCreate\s+.*Created job cronjob-sample-\d{10}/,
  );
});

it("refuses the manifest with a nameless container, with the API server's message", async () => {
  const r = await cluster.kubectl(["apply", "-f", manifest("bad-container.yaml")]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('The CronJob "nameless" is invalid');
  expect(r.stderr).toContain("spec.jobTemplate.spec.template.spec.containers[0].name: Required value");
});
