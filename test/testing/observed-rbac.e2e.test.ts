/**
 * Least privilege from observed behaviour, end to end: the widget operator runs as the
 * ServiceAccount of its generated RBAC on the embedded server, which records what it does; the
 * report says exactly which generated grants it used and which it never did, and the report file
 * turns into `capstan generate rbac --observed` output granting only what was used.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigMap, Event, Secret } from "capstan/core";
import { describeGrants } from "capstan/resources";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  type GeneratedRbac,
  missingCapability,
  type ServiceAccountIdentity,
  startTestCluster,
  type TestCluster,
} from "../../packages/capstan-dev/src/testing/index.ts";
import op, { Widget } from "../cli/fixtures/widget-operator.ts";

const OPERATOR = "test/cli/fixtures/widget-operator.ts";
const USER = "system:serviceaccount:ops:widgets";
const repo = new URL("../..", import.meta.url).pathname;

let cluster: TestCluster;
let rbac: GeneratedRbac<ServiceAccountIdentity>;
beforeAll(async () => {
  cluster = await startTestCluster();
  rbac = await cluster.generatedRbac(OPERATOR, { namespace: "ops" });
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
afterAll(() => cluster?.stop());

it("records what the ServiceAccount did, and compares it with the generated rules", async (ctx) => {
  const missing = missingCapability("observedAccess", cluster.capabilities);
  ctx.skip(missing !== undefined, missing);
  // First without the rule on Events: a request the generated rules allow, denied because the test
  // took the rule away, still counts as a use of it. Listing Secrets: a request no rule allows.
  const edited = await rbac.apply((rule) => (rule.resources.includes("events") ? undefined : rule));
  const event = {
    metadata: { name: "probe", namespace: "default" },
    involvedObject: { kind: "Widget", name: "w", namespace: "default" },
    reason: "Probe",
    message: "probe",
  };
  await expect(edited.client.resource(Event, "default").create(event)).rejects.toThrow(
    /cannot create resource "events"/,
  );
  await expect(edited.client.resource(Secret, "default").list()).rejects.toThrow(/cannot list resource "secrets"/);

  const sa = await rbac.apply();
  const running = await cluster.run(op, { client: sa.client });
  await cluster.client
    .resource(Widget)
    .create(Widget.make({ metadata: { name: "w", namespace: "default" }, spec: { color: "red" } }));
  await cluster.waitFor(ConfigMap, "default/w-color", (cm) => cm.data?.color === "red");
  await cluster.waitFor(Widget, "default/w", (w) => w.status?.color === "red");
  await cluster.whenIdle();
  await running.stop();

  const observed = await cluster.observedAccess(USER);
  expect(observed.truncated).toBe(false);
  expect(observed.denied).toEqual([
    { verb: "create", apiGroup: "", resource: "events", subresource: "", namespace: "default", name: "" },
    { verb: "list", apiGroup: "", resource: "secrets", subresource: "", namespace: "default", name: "" },
  ]);
  // Informers list and watch across namespaces; CRD registration reads and creates its CRD.
  expect(observed.rules.cluster).toEqual([
    { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch"] },
    { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get", "create"] },
    { apiGroups: ["widgets.capstan.test"], resources: ["widgets"], verbs: ["list", "watch"] },
    // The manager's API server probe: allowed to everyone by the bootstrap policy.
    ...observed.rules.cluster.filter((r) => r.nonResourceURLs !== undefined),
  ]);
  // The reconciler creates the ConfigMap, and when its own write wakes it again, meets AlreadyExists
  // and reads and updates it.
  expect(observed.rules.namespaced).toEqual([
    {
      namespace: "default",
      rules: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "update"] },
        { apiGroups: ["widgets.capstan.test"], resources: ["widgets/status"], verbs: ["patch"] },
      ],
    },
  ]);

  const report = await cluster.rbacReport(rbac);
  expect(report.user).toBe(USER);
  expect(report.missing).toEqual([
    { verb: "list", apiGroup: "", resource: "secrets", subresource: "", namespace: "default", name: "" },
  ]);
  expect(report.everyone.every((r) => "nonResourceURL" in r)).toBe(true);
  expect(describeGrants(report.used)).toEqual([
    "get,list,watch,create,update configmaps",
    "create events",
    "create customresourcedefinitions.apiextensions.k8s.io",
    "get customresourcedefinitions.apiextensions.k8s.io [widgets.widgets.capstan.test]",
    "list,watch widgets.widgets.capstan.test",
    "patch widgets/status.widgets.capstan.test",
  ]);
  // Never used here: ctx.apply's patch (the reconciler writes through ctx.client), an Event's repeat,
  // the CRD's update (only when it differs), adopt's finalizers update (only where
  // OwnerReferencesPermissionEnforcement runs), the secure metrics endpoint's reviews.
  expect(describeGrants(report.unused)).toEqual([
    "patch configmaps",
    "patch events",
    "update customresourcedefinitions.apiextensions.k8s.io [widgets.widgets.capstan.test]",
    "create tokenreviews.authentication.k8s.io",
    "create subjectaccessreviews.authorization.k8s.io",
    "update widgets/finalizers.widgets.capstan.test",
  ]);
}, 60_000);

it("writes a report that capstan generate rbac --observed turns into the rules used", async (ctx) => {
  const missing = missingCapability("observedAccess", cluster.capabilities);
  ctx.skip(missing !== undefined, missing);
  const path = join(cluster.dir, "observed.json");
  await cluster.writeRbacReport(path, [USER]);
  const written = JSON.parse(await readFile(path, "utf8"));
  expect(written.kind).toBe("CapstanObservedAccess");
  expect(written.users.map((u: { user: string }) => u.user)).toEqual([USER]);

  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [
        join(repo, "packages/capstan/bin/capstan.js"),
        "generate",
        "rbac",
        OPERATOR,
        "--namespace",
        "ops",
        "--observed",
        path,
      ],
      { cwd: repo, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
  expect(out.code).toBe(0);
  const role = parseAllDocuments(out.stdout)
    .map((d) => d.toJS())
    .find((d) => d.kind === "ClusterRole" && d.metadata.name === "widgets");
  expect(role.rules).toEqual([
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "create", "update"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create"] },
    // Added: no generated rule allows it, and the operator's run above made the request.
    { apiGroups: [""], resources: ["secrets"], verbs: ["list"] },
    { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["create"] },
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      verbs: ["get"],
      resourceNames: ["widgets.widgets.capstan.test"],
    },
    { apiGroups: ["widgets.capstan.test"], resources: ["widgets"], verbs: ["list", "watch"] },
    { apiGroups: ["widgets.capstan.test"], resources: ["widgets/status"], verbs: ["patch"] },
  ]);
  expect(out.stderr).toContain("never used (left out");
  expect(out.stderr).toContain("  patch events");
  expect(out.stderr).toContain("missing (no generated rule allows it; added):\n  list secrets in default");
}, 60_000);
