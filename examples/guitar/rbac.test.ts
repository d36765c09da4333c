/**
 * The guitar reviewer under RBAC: run as a ServiceAccount bound only to the rules
 * `capstan generate rbac` derives for it, it still reviews guitars; without one of those rules it
 * cannot, and its log says why with the API server's 403 message.
 */
import { fileURLToPath } from "node:url";
import { Namespace } from "capstan/core";
import { type RunningOperator, startTestCluster, type TestCluster } from "capstan/testing";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { GOOD_COMMENT, Guitar, guitarOperator } from "./operator.ts";

const NS = "guitar-system";
const SA = "guitar-reviewer"; // the operator's name: the generated ServiceAccount's
const OPERATOR = fileURLToPath(new URL("operator.ts", import.meta.url));

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
type Manifest = { kind: string; rules?: Rule[] } & Record<string, unknown>;

let cluster: TestCluster;
let manifests: Manifest[];
let running: RunningOperator | undefined;
beforeAll(async () => {
  cluster = await startTestCluster({ rbac: true });
  const generated = await cluster.capstan(["generate", "rbac", OPERATOR, "--namespace", NS]);
  expect(generated.code, generated.stderr).toBe(0);
  manifests = parseAllDocuments(generated.stdout).map((d) => d.toJS() as Manifest);
  for (const ns of ["rock", "jazz"]) await cluster.client.resource(Namespace).create({ metadata: { name: ns } });
}, 60_000);
afterEach(async () => {
  await running?.stop();
  running = undefined;
});
afterAll(() => cluster?.stop());

async function applyRbac(docs: Manifest[]): Promise<void> {
  const stdin = docs.map((d) => `---\n${stringify(d)}`).join("");
  const r = await cluster.kubectl(["apply", "-f", "-"], { stdin });
  expect(r.code, r.stderr).toBe(0);
}

/** The generated manifests with the ClusterRole's rule for `resource` removed. */
function without(resource: string): Manifest[] {
  return manifests.map((m) =>
    m.kind === "ClusterRole" ? { ...m, rules: m.rules?.filter((r) => !r.resources.includes(resource)) } : m,
  );
}

/** The generated manifests with `verb` taken out of the ClusterRole's rule for `resource`. */
function withoutVerb(resource: string, verb: string): Manifest[] {
  return manifests.map((m) =>
    m.kind === "ClusterRole"
      ? {
          ...m,
          rules: m.rules?.map((r) =>
            r.resources.includes(resource) ? { ...r, verbs: r.verbs.filter((v) => v !== verb) } : r,
          ),
        }
      : m,
  );
}

/** Waits until the operator logged an error whose message is `message`; returns that record. */
function loggedError(logs: RunningOperator["logs"], message: string) {
  return vi.waitFor(
    () => {
      const record = logs.find((r) => (r.err as { message?: string } | undefined)?.message === message);
      if (record === undefined) throw new Error(`not logged yet: ${message}`);
      return record;
    },
    { timeout: 10_000, interval: 50 },
  );
}

const guitarRule = () =>
  manifests.find((m) => m.kind === "ClusterRole")?.rules?.find((r) => r.resources.includes("guitars"));

it("reviews guitars in several namespaces as a ServiceAccount bound to the generated rules only", async () => {
  expect(guitarRule()).toEqual({
    apiGroups: ["kool.karmalabs.local"],
    resources: ["guitars"],
    verbs: ["list", "watch", "patch"],
  });
  await applyRbac(manifests);
  const sa = await cluster.serviceAccount(`${NS}/${SA}`);
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
  await applyRbac(without("guitars"));
  const sa = await cluster.serviceAccount(`${NS}/${SA}`);
  running = await cluster.run(guitarOperator(), { client: sa.client });
  await cluster.client
    .resource(Guitar, "rock")
    .create(Guitar.make({ metadata: { name: "lespaul", namespace: "rock" }, spec: { brand: "gibson" } }));

  const expected = `guitars.kool.karmalabs.local is forbidden: User "system:serviceaccount:${NS}:${SA}" cannot list resource "guitars" in API group "kool.karmalabs.local" at the cluster scope`;
  const forbidden = await loggedError(running.logs, expected);
  expect(forbidden.level).toBeGreaterThanOrEqual(40); // warn: the informer keeps retrying
  expect(forbidden.err).toMatchObject({ code: 403, reason: "Forbidden" });
  const lespaul = await cluster.client.resource(Guitar, "rock").get("lespaul");
  expect(lespaul.spec.review).toBe(false);
  expect(lespaul.spec.comment).toBeUndefined();
});

it("without patch on guitars, cannot write the review and logs the 403 for it", async () => {
  await applyRbac(withoutVerb("guitars", "patch"));
  const sa = await cluster.serviceAccount(`${NS}/${SA}`);
  running = await cluster.run(guitarOperator(), { client: sa.client });
  await cluster.client
    .resource(Guitar, "jazz")
    .create(Guitar.make({ metadata: { name: "x003", namespace: "jazz" }, spec: { brand: "yamaha" } }));

  const forbidden = await loggedError(
    running.logs,
    `guitars.kool.karmalabs.local "x003" is forbidden: User "system:serviceaccount:${NS}:${SA}" cannot patch resource "guitars" in API group "kool.karmalabs.local" in the namespace "jazz"`,
  );
  expect(forbidden.err).toMatchObject({ code: 403, reason: "Forbidden" });
  const x003 = await cluster.client.resource(Guitar, "jazz").get("x003");
  expect(x003.spec.review).toBe(false);
  expect(x003.metadata?.generation).toBe(1);
});
