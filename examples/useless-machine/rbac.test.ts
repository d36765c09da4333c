/**
 * The useless machine under RBAC, as a ServiceAccount bound only to what `capstan generate rbac`
 * prints for it: the scenario passes; with one rule taken away it does not, and the log says why
 * (a 403 naming the ServiceAccount, the verb and the resource).
 */
import { fileURLToPath } from "node:url";
import { Namespace } from "capstan/core";
import {
  type GeneratedRbac,
  type GeneratedRule,
  type RunningOperator,
  type ServiceAccountIdentity,
  startTestCluster,
  type TestCluster,
} from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREATED_BY_ANNOTATION, MACHINE_LABEL, Machine, Switch, uselessMachineOperator } from "./operator.ts";

const OPERATOR = fileURLToPath(new URL("./operator.ts", import.meta.url));
const SYSTEM_NS = "useless-system";
const SA_NAME = "useless-machine";
const USER = `system:serviceaccount:${SYSTEM_NS}:${SA_NAME}`;
const GROUP = "useless.container.training";

let cluster: TestCluster;
let rbac: GeneratedRbac<ServiceAccountIdentity>;

beforeAll(async () => {
  cluster = await startTestCluster();
  rbac = await cluster.generatedRbac(OPERATOR, { namespace: SYSTEM_NS });
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
afterAll(() => cluster?.stop());

/** Takes `verbs` away from the rule on `resource` of the operator's group. */
const without =
  (resource: string, verbs: readonly string[]) =>
  (rule: GeneratedRule): GeneratedRule =>
    rule.apiGroups.includes(GROUP) && rule.resources.includes(resource)
      ? { ...rule, verbs: rule.verbs.filter((v) => !verbs.includes(v)) }
      : rule;

/** Applies the generated RBAC (edited by `edit`) and runs the operator as its ServiceAccount. */
async function runAsServiceAccount(edit?: (rule: GeneratedRule) => GeneratedRule): Promise<RunningOperator> {
  const sa = await rbac.apply(edit);
  expect(sa.username).toBe(USER);
  return cluster.run(uselessMachineOperator({ flipDelay: "200ms" }), { client: sa.client });
}

/** A machine whose own switch is up, with two Switches, in a namespace of its own. */
async function createMachine(namespace: string): Promise<void> {
  await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: namespace } }));
  await cluster.client
    .resource(Machine, namespace)
    .create(Machine.make({ metadata: { name: "m", namespace }, spec: { switchPosition: "up", switches: 2 } }));
}

describe("useless machine under RBAC", () => {
  it("derives rules for machines (spec flips and the Switch check's get included), their status, owned switches, events and CRDs", () => {
    const rules = rbac.rules.map((r) => `${r.apiGroups.join(",")}/${r.resources.join(",")}: ${r.verbs.join(",")}`);
    expect(rules).toEqual(
      expect.arrayContaining([
        `${GROUP}/machines: get,list,watch,patch`,
        `${GROUP}/machines/status: patch`,
        `${GROUP}/switches: list,watch,create,patch,delete`,
        "apiextensions.k8s.io/customresourcedefinitions: create",
        "apiextensions.k8s.io/customresourcedefinitions: get,update",
        "/events: create,patch",
      ]),
    );
  });

  it("flips the machine's switch and its Switches as a ServiceAccount bound only to the generated rules", async () => {
    const running = await runAsServiceAccount();
    try {
      await createMachine("rbac-ok");
      await cluster.waitFor(
        Machine,
        "rbac-ok/m",
        (m) => m.spec.switchPosition === "down" && m.status?.positions === "dd",
      );
      const [sw] = (await cluster.client.resource(Switch, "rbac-ok").list({ labelSelector: `${MACHINE_LABEL}=m` }))
        .items;
      const name = sw?.metadata.name as string;
      await cluster.client.resource(Switch, "rbac-ok").patch(name, { spec: { position: "up" } }, { type: "merge" });
      await cluster.waitFor(Switch, `rbac-ok/${name}`, (s) => s.spec.position === "down");
      expect(running.logs.filter((r) => JSON.stringify(r).includes("forbidden"))).toEqual([]);
    } finally {
      await running.stop();
    }
  });

  it("checks Switches and records creators as the ServiceAccount: its get of the named Machine is allowed", async () => {
    const running = await runAsServiceAccount();
    try {
      await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: "rbac-admission" } }));
      const created = await cluster.client
        .resource(Machine, "rbac-admission")
        .create(Machine.make({ metadata: { name: "m" }, spec: {} }));
      // The machine's creator is the test's admin client, not the operator's ServiceAccount.
      const admin = await cluster.whoami();
      expect(admin.username).not.toBe(USER);
      expect(created.metadata.annotations?.[CREATED_BY_ANNOTATION]).toBe(admin.username);
      const switches = cluster.client.resource(Switch, "rbac-admission");
      const sw = (machine: string) =>
        Switch.make({ metadata: { name: machine, labels: { [MACHINE_LABEL]: machine } }, spec: { position: "down" } });
      await expect(switches.create(sw("ghost"))).rejects.toMatchObject({
        code: 403,
        message: expect.stringContaining('denied the request: no Machine "ghost" in namespace "rbac-admission"'),
      });
      await switches.create(sw("m"));
    } finally {
      await running.stop();
    }
  });

  it("without get on machines, refuses every labelled Switch with the 403 of the check's look-up", async () => {
    const running = await runAsServiceAccount(without("machines", ["get"]));
    try {
      await createMachine("rbac-no-get");
      // The operator's own Switches are refused too: the check cannot tell, so it fails closed.
      const refused = await cluster.client
        .resource(Switch, "rbac-no-get")
        .create(Switch.make({ metadata: { name: "s", labels: { [MACHINE_LABEL]: "m" } }, spec: { position: "down" } }))
        .catch((err: { code: number; message: string }) => err);
      expect(refused).toMatchObject({
        code: 500,
        message: `admission webhook "machine-exists.switches.useless-machine.capstan.dev" denied the request: handler "machine-exists" failed: machines.${GROUP} "m" is forbidden: User "${USER}" cannot get resource "machines" in API group "${GROUP}" in the namespace "rbac-no-get"`,
      });
    } finally {
      await running.stop();
    }
  });

  it("without patch on machines, keeps the machine's switch up and logs the 403 of its flip", async () => {
    const running = await runAsServiceAccount(without("machines", ["patch"]));
    try {
      await createMachine("rbac-no-patch");
      // Everything else still works: the Switches are made and the status written.
      await cluster.waitFor(Machine, "rbac-no-patch/m", (m) => m.status?.positions === "dd");
      await running.waitForLog(
        `machines.${GROUP} "m" is forbidden: User "${USER}" cannot patch resource "machines" in API group "${GROUP}" in the namespace "rbac-no-patch"`,
      );
      const machine = await cluster.client.resource(Machine, "rbac-no-patch").get("m");
      expect(machine.spec.switchPosition).toBe("up");
    } finally {
      await running.stop();
    }
  });

  it("without create on switches, makes no Switch and logs the 403 of creating one", async () => {
    const running = await runAsServiceAccount(without("switches", ["create"]));
    try {
      await createMachine("rbac-no-create");
      await running.waitForLog(
        `switches.${GROUP} is forbidden: User "${USER}" cannot create resource "switches" in API group "${GROUP}" in the namespace "rbac-no-create"`,
      );
      const switches = await cluster.client.resource(Switch, "rbac-no-create").list();
      expect(switches.items).toEqual([]);
    } finally {
      await running.stop();
    }
  });
});
