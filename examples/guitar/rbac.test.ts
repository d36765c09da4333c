/**
 * The guitar reviewer under RBAC: run as a ServiceAccount bound only to the rules
 * `capstan generate rbac` derives for it, it still reviews guitars; without one of those rules it
 * cannot, and its log says why with the API server's 403 message.
 */
import { fileURLToPath } from "node:url";
import { Namespace } from "capstan/core";
import {
  type GeneratedRbac,
  type GeneratedRule,
  type LogRecord,
  type RunningOperator,
  type ServiceAccountIdentity,
  startTestCluster,
  type TestCluster,
} from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { GOOD_COMMENT, Guitar, guitarOperator } from "./operator.ts";

const NS = "guitar-system";
const SA = "guitar-reviewer"; // the operator's name: the generated ServiceAccount's
const OPERATOR = fileURLToPath(new URL("operator.ts", import.meta.url));

let cluster: TestCluster;
let rbac: GeneratedRbac<ServiceAccountIdentity>;
let running: RunningOperator | undefined;
beforeAll(async () => {
  cluster = await startTestCluster();
  rbac = await cluster.generatedRbac(OPERATOR, { namespace: NS });
  for (const ns of ["rock", "jazz"]) await cluster.client.resource(Namespace).create({ metadata: { name: ns } });
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
afterEach(async () => {
  await running?.stop();
  running = undefined;
});
afterAll(() => cluster?.stop());

/** Drops the rule for `resource`. */
const without =
  (resource: string) =>
  (rule: GeneratedRule): GeneratedRule | undefined =>
    rule.resources.includes(resource) ? undefined : rule;

/** Takes `verb` out of the rule for `resource`. */
const withoutVerb =
  (resource: string, verb: string) =>
  (rule: GeneratedRule): GeneratedRule =>
    rule.resources.includes(resource) ? { ...rule, verbs: rule.verbs.filter((v) => v !== verb) } : rule;

/** A log-record predicate: the record's error has exactly this message. */
const errorMessage = (message: string) => (record: LogRecord) =>
  (record.err as { message?: string } | undefined)?.message === message;

const guitarRule = () => rbac.rules.find((r) => r.resources.includes("guitars"));

it("reviews guitars in several namespaces as a ServiceAccount bound to the generated rules only", async () => {
  expect(guitarRule()).toEqual({
    apiGroups: ["kool.karmalabs.local"],
    resources: ["guitars"],
    verbs: ["list", "watch", "patch"],
  });
  const sa = await rbac.apply();
  expect(sa.username).toBe(`system:serviceaccount:${NS}:${SA}`);
  running = await cluster.run(guitarOperator(), { client: sa.client });

  for (const ns of ["rock", "jazz"]) {
    await cluster.client
      .resource(Guitar, ns)
      .create(Guitar.make({ metadata: { name: "strat", namespace: ns }, spec: { brand: "fender" } }));
  }
  for (const ns of ["rock", "jazz"]) {
    const g = await cluster.waitFor(Guitar, `${ns}/strat`, (g) => g.spec.review === true);
    expect(g.spec.comment).toBe(GOOD_COMMENT);
  }
  expect(running.logs.filter((r) => /forbidden/.test(JSON.stringify(r)))).toEqual([]);
});

it("without the generated rule on guitars, reviews nothing and logs the 403 naming the ServiceAccount", async () => {
  const sa = await rbac.apply(without("guitars"));
  running = await cluster.run(guitarOperator(), { client: sa.client });
  await cluster.client
    .resource(Guitar, "rock")
    .create(Guitar.make({ metadata: { name: "lespaul", namespace: "rock" }, spec: { brand: "gibson" } }));

  const expected = `guitars.kool.karmalabs.local is forbidden: User "system:serviceaccount:${NS}:${SA}" cannot list resource "guitars" in API group "kool.karmalabs.local" at the cluster scope`;
  const forbidden = await running.waitForLog(errorMessage(expected));
  expect(forbidden.level).toBeGreaterThanOrEqual(40); // warn: the informer keeps retrying
  expect(forbidden.err).toMatchObject({ code: 403, reason: "Forbidden" });
  const lespaul = await cluster.client.resource(Guitar, "rock").get("lespaul");
  expect(lespaul.spec.review).toBe(false);
  expect(lespaul.spec.comment).toBeUndefined();
});

it("without patch on guitars, cannot write the review and logs the 403 for it", async () => {
  const sa = await rbac.apply(withoutVerb("guitars", "patch"));
  running = await cluster.run(guitarOperator(), { client: sa.client });
  await cluster.client
    .resource(Guitar, "jazz")
    .create(Guitar.make({ metadata: { name: "x003", namespace: "jazz" }, spec: { brand: "yamaha" } }));

  const forbidden = await running.waitForLog(
    errorMessage(
      `guitars.kool.karmalabs.local "x003" is forbidden: User "system:serviceaccount:${NS}:${SA}" cannot patch resource "guitars" in API group "kool.karmalabs.local" in the namespace "jazz"`,
    ),
  );
  expect(forbidden.err).toMatchObject({ code: 403, reason: "Forbidden" });
  const x003 = await cluster.client.resource(Guitar, "jazz").get("x003");
  expect(x003.spec.review).toBe(false);
  expect(x003.metadata?.generation).toBe(1);
});
