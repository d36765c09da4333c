/**
 * The operator under RBAC, as a ServiceAccount bound only to what `capstan generate rbac` prints
 * for it: the scenario passes; with one rule removed it does not, and the log says why (a 403
 * naming the ServiceAccount, the verb and the resource).
 */
import { fileURLToPath } from "node:url";
import type { ObjectOf } from "capstan";
import { Event, Namespace, Pod } from "capstan/core";
import {
  type GeneratedRbac,
  type GeneratedRule,
  missingCapability,
  type RunningOperator,
  type ServiceAccountIdentity,
  startTestCluster,
  type TestCluster,
} from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ImmortalContainer, immortalContainerOperator } from "./operator.ts";

const OPERATOR = fileURLToPath(new URL("./operator.ts", import.meta.url));
const SYSTEM_NS = "immortal-system";
const SA_NAME = "immortalcontainers";
const USER = `system:serviceaccount:${SYSTEM_NS}:${SA_NAME}`;

let cluster: TestCluster;
let rbac: GeneratedRbac<ServiceAccountIdentity>;
/** Why pods do not run here (envtest has no kubelet); `undefined` where they do. */
let noPods: string | undefined;

beforeAll(async () => {
  cluster = await startTestCluster();
  noPods = missingCapability("runningPods", cluster.capabilities);
  rbac = await cluster.generatedRbac(OPERATOR, { namespace: SYSTEM_NS });
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
afterAll(() => cluster.stop());

/** Applies the generated RBAC (edited by `edit`) and starts the operator as its ServiceAccount. */
async function runAsServiceAccount(
  edit?: (rule: GeneratedRule) => GeneratedRule | undefined,
): Promise<RunningOperator> {
  const sa = await rbac.apply(edit);
  expect(sa.username).toBe(USER);
  return cluster.run(immortalContainerOperator({ restartDelay: 0, recheckInterval: "200ms" }), { client: sa.client });
}

/** Drops the rules on `resource`. */
const withoutRule =
  (resource: string) =>
  (rule: GeneratedRule): GeneratedRule | undefined =>
    rule.resources.includes(resource) ? undefined : rule;

/**
 * The operator's pod is there (not the one with `previousUid`), and running where pods run: what the
 * operator does under RBAC is create and replace it, the same with or without a kubelet.
 */
const started =
  (previousUid?: string) =>
  (p: ObjectOf<typeof Pod>): boolean =>
    p.metadata?.uid !== previousUid &&
    p.metadata?.deletionTimestamp === undefined &&
    (noPods !== undefined || p.status?.phase === "Running");

async function createImmortalContainer(namespace: string, name: string): Promise<void> {
  await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: namespace } }));
  await cluster.client
    .resource(ImmortalContainer, namespace)
    .create(ImmortalContainer.make({ metadata: { name, namespace }, spec: { image: "nginx" } }));
}

describe("ImmortalContainer operator under RBAC", () => {
  it("derives rules for its pods, its ImmortalContainers and their status, events and CRD registration", () => {
    const rules = rbac.rules.map((r) => `${r.apiGroups.join(",")}/${r.resources.join(",")}: ${r.verbs.join(",")}`);
    expect(rules).toEqual(
      expect.arrayContaining([
        "/pods: get,list,watch,create,patch,delete",
        "immortalcontainer.flugel.it/immortalcontainers: get,list,watch",
        "immortalcontainer.flugel.it/immortalcontainers/status: patch",
        "apiextensions.k8s.io/customresourcedefinitions: create",
        "apiextensions.k8s.io/customresourcedefinitions: get,update",
      ]),
    );
    expect(rbac.manifests.map((m) => m.kind)).toEqual(
      expect.arrayContaining(["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]),
    );
  });

  it("starts and restarts the pod as a ServiceAccount bound only to the generated rules", async () => {
    const running = await runAsServiceAccount();
    try {
      await createImmortalContainer("rbac-ok", "web");
      const first = await cluster.waitFor(Pod, "rbac-ok/web-immortalpod", started());
      await cluster.client.resource(Pod, "rbac-ok").delete("web-immortalpod");
      await cluster.waitFor(Pod, "rbac-ok/web-immortalpod", started(first.metadata?.uid));
      const ic = await cluster.waitFor(ImmortalContainer, "rbac-ok/web", (o) => o.status?.startTimes === 2);
      expect(ic.status?.currentPod).toBe("web-immortalpod");
      expect(running.logs.filter((r) => JSON.stringify(r).includes("forbidden"))).toEqual([]);
    } finally {
      await running.stop();
    }
  });

  it("without the rule on immortalcontainers/status, creates the pod but logs the 403 of its status write", async () => {
    const running = await runAsServiceAccount(withoutRule("immortalcontainers/status"));
    try {
      await createImmortalContainer("rbac-no-status", "web");
      await cluster.waitFor(Pod, "rbac-no-status/web-immortalpod", started());
      await running.waitForLog(
        `immortalcontainers.immortalcontainer.flugel.it "web" is forbidden: User "${USER}" cannot patch resource "immortalcontainers/status" in API group "immortalcontainer.flugel.it" in the namespace "rbac-no-status"`,
      );
      const ic = await cluster.client.resource(ImmortalContainer, "rbac-no-status").get("web");
      expect(ic.status?.startTimes).toBeUndefined();
    } finally {
      await running.stop();
    }
  });

  it("without create on pods, says why on the ImmortalContainer: a FailedCreate Warning event with the 403", async () => {
    const running = await runAsServiceAccount((r) =>
      r.resources.includes("pods") ? { ...r, verbs: r.verbs.filter((v) => v !== "create") } : r,
    );
    try {
      await createImmortalContainer("rbac-no-create", "web");
      // A create names no object: the message says "pods is forbidden", as kube-apiserver's does.
      const forbidden = `pods is forbidden: User "${USER}" cannot create resource "pods" in API group "" in the namespace "rbac-no-create"`;
      await running.waitForLog(forbidden);
      const event = await vi.waitFor(
        async () => {
          const events = await cluster.client.resource(Event, "rbac-no-create").list();
          const found = events.items.find((e) => e.reason === "FailedCreate");
          expect(found).toBeDefined();
          return found;
        },
        { timeout: 5_000, interval: 50 },
      );
      expect(event?.type).toBe("Warning");
      expect(event?.involvedObject).toMatchObject({ kind: "ImmortalContainer", name: "web" });
      expect(event?.message).toContain(forbidden);
    } finally {
      await running.stop();
    }
  });

  it("without the rule on pods, never starts a pod and logs the 403 of listing pods", async () => {
    const running = await runAsServiceAccount(withoutRule("pods"));
    try {
      await createImmortalContainer("rbac-no-pods", "web");
      await running.waitForLog(
        `pods is forbidden: User "${USER}" cannot list resource "pods" in API group "" at the cluster scope`,
      );
      const pods = await cluster.client.resource(Pod, "rbac-no-pods").list();
      expect(pods.items).toEqual([]);
    } finally {
      await running.stop();
    }
  });
});
