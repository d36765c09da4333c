/**
 * The exchange-rates operator under RBAC: run as a ServiceAccount bound only to the rules
 * `capstan generate rbac` derives for it, it publishes rates; without one of those rules it cannot,
 * and its log (and, where it can still post them, its Warning Events) says why with the API
 * server's 403 message.
 */
import { fileURLToPath } from "node:url";
import { ConfigMap, CustomResourceDefinition, Event } from "capstan/core";
import {
  type GeneratedRbac,
  type GeneratedRule,
  type RunningOperator,
  type ServiceAccountIdentity,
  startTestCluster,
  type TestCluster,
} from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { ExchangeRate, exchangeRateOperator, OPERATOR_NAME } from "./operator.ts";
import { type RatesServer, SAMPLE_RATES, startRatesServer } from "./rates-server.ts";

const NS = "exchangerate-system";
const SA = OPERATOR_NAME; // the generated ServiceAccount is named after the operator
const USER = `system:serviceaccount:${NS}:${SA}`;
const OPERATOR = fileURLToPath(new URL("operator.ts", import.meta.url));

let cluster: TestCluster;
let rates: RatesServer;
let rbac: GeneratedRbac<ServiceAccountIdentity>;
let running: RunningOperator | undefined;
beforeAll(async () => {
  rates = await startRatesServer();
  cluster = await startTestCluster();
  rbac = await cluster.generatedRbac(OPERATOR, { namespace: NS });
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
afterEach(async () => {
  await running?.stop();
  running = undefined;
});
afterAll(async () => {
  await cluster?.stop();
  await rates?.stop();
});

/** Takes `resource` out of every rule (a rule left empty goes). */
const without =
  (resource: string) =>
  (rule: GeneratedRule): GeneratedRule | undefined => {
    const resources = rule.resources.filter((r) => r !== resource);
    return resources.length === 0 ? undefined : { ...rule, resources };
  };

/** Applies the generated RBAC (edited by `edit`); the operator and the ServiceAccount's client. */
const operatorAs = async (edit?: (rule: GeneratedRule) => GeneratedRule | undefined) => {
  const sa = await rbac.apply(edit);
  expect(sa.username).toBe(USER);
  return { client: sa.client, op: exchangeRateOperator({ ratesUrl: rates.url, retryBackoff: "100ms" }) };
};

it("grants exactly what the operator does: CRD registration, ExchangeRates and their status, ConfigMap writes, Events", () => {
  const rules = rbac.rules;
  const verbsOf = (group: string, resource: string) =>
    rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs);
  expect(verbsOf("", "configmaps")).toEqual(["create", "patch"]);
  expect(verbsOf("operators.brennerm.github.io", "exchangerates")).toEqual(["list", "watch", "patch"]);
  expect(verbsOf("operators.brennerm.github.io", "exchangerates/status")).toEqual(["patch"]);
  // create for the first start; get and update only on its own CRD (a rule with resourceNames).
  expect(verbsOf("apiextensions.k8s.io", "customresourcedefinitions")).toEqual(["create", "get", "update"]);
  expect(rules.find((r) => r.verbs.includes("update") && r.resources.includes("customresourcedefinitions"))).toEqual({
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    verbs: ["get", "update"],
    resourceNames: [ExchangeRate.crdName],
  });
  expect(verbsOf("", "events")).toEqual(["create", "patch"]);
});

it("publishes rates as a ServiceAccount bound to the generated rules only", async () => {
  const { client, op } = await operatorAs();
  running = await cluster.run(op, { client });
  await cluster.client
    .resource(ExchangeRate)
    .create(ExchangeRate.make({ metadata: { name: "usd", namespace: "default" }, spec: { currency: "USD" } }));
  const cm = await cluster.waitFor(ConfigMap, "default/usd", (c) => c.data?.rate !== undefined, { timeout: "10s" });
  expect(cm.data?.rate).toBe(String(SAMPLE_RATES.USD));
  await cluster.waitFor(ExchangeRate, "default/usd", (o) => o.status?.rate === SAMPLE_RATES.USD);
  // Its Events are posted as the ServiceAccount too.
  await vi.waitFor(
    async () => {
      const events = await cluster.client.resource(Event, "default").list();
      expect(events.items.some((e) => e.involvedObject?.name === "usd" && e.reason === "RatePublished")).toBe(true);
    },
    { timeout: 10_000, interval: 50 },
  );
  expect(running.logs.filter((r) => JSON.stringify(r).includes("forbidden"))).toEqual([]);
});

it("without the generated rule on configmaps, publishes nothing and logs the 403 naming the ServiceAccount", async () => {
  const { client, op } = await operatorAs(without("configmaps"));
  running = await cluster.run(op, { client });
  await cluster.client
    .resource(ExchangeRate)
    .create(ExchangeRate.make({ metadata: { name: "cad", namespace: "default" }, spec: { currency: "CAD" } }));

  const forbidden = `configmaps "cad" is forbidden: User "${USER}" cannot patch resource "configmaps" in API group "" in the namespace "default"`;
  await running.waitForLog(forbidden);
  // The Warning Event carries the same message (events are still allowed).
  await vi.waitFor(
    async () => {
      const events = await cluster.client.resource(Event, "default").list();
      const warning = events.items.find((e) => e.involvedObject?.name === "cad" && e.reason === "HandlerRetrying");
      expect(warning?.message).toContain(forbidden);
    },
    { timeout: 10_000, interval: 50 },
  );
  const cms = await cluster.client.resource(ConfigMap, "default").list();
  expect(cms.items.some((c) => c.metadata?.name === "cad")).toBe(false);
  const cad = await cluster.client.resource(ExchangeRate, "default").get("cad");
  expect(cad.status?.rate).toBeUndefined();
});

it("without the generated rule on customresourcedefinitions, fails to start with the 403", async () => {
  const { client, op } = await operatorAs(without("customresourcedefinitions"));
  // A cluster that has never seen the operator: the CRD is not there until the operator registers it.
  await cluster.client.resource(CustomResourceDefinition).delete(ExchangeRate.crdName);
  await cluster.waitForDeletion(CustomResourceDefinition, ExchangeRate.crdName, { timeout: "10s" });
  await expect(cluster.run(op, { client })).rejects.toThrow(
    `customresourcedefinitions.apiextensions.k8s.io "${ExchangeRate.crdName}" is forbidden: User "${USER}" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope`,
  );
});
