/**
 * The exchange-rates operator driven with the real kubectl and the folder's sample manifests, as
 * the README tells a newcomer to do it: apply an ExchangeRate, read the rate from its ConfigMap,
 * change the currency, see a refused currency, read the Warning Events of a failing fetch, delete.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { toMilliseconds } from "capstan";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { exchangeRateOperator } from "./operator.ts";
import { type RatesServer, SAMPLE_RATES, startRatesServer } from "./rates-server.ts";

/** The examples' project: `capstan generate` run there puts each operator's build in the image. */
const EXAMPLES = fileURLToPath(new URL("..", import.meta.url));
const file = (name: string) => fileURLToPath(new URL(name, import.meta.url));

let cluster: TestCluster;
let rates: RatesServer;
beforeAll(async () => {
  rates = await startRatesServer();
  cluster = await startTestCluster();
  await cluster.run(exchangeRateOperator({ ratesUrl: rates.url, retryBackoff: "100ms" }));
});
afterAll(async () => {
  await cluster?.stop();
  await rates?.stop();
});

/** Runs kubectl and returns its stdout; a non-zero exit fails the test with kubectl's stderr. */
async function kubectl(...args: string[]): Promise<string> {
  const r = await cluster.kubectl(args);
  expect(r.code, `kubectl ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

it("publishes the rate of usd.yaml in a ConfigMap, follows a currency change, and goes with it on delete", async () => {
  expect(await kubectl("apply", "-f", file("usd.yaml"))).toContain(
    "exchangerate.operators.brennerm.github.io/usd created",
  );
  await kubectl("wait", `--for=jsonpath={.status.rate}=${SAMPLE_RATES.USD}`, "--timeout=10s", "er/usd");
  expect(await kubectl("get", "configmap", "usd", "-o", "jsonpath={.data.rate}")).toBe(String(SAMPLE_RATES.USD));
  expect(await kubectl("get", "configmap", "usd", "-o", "jsonpath={.metadata.ownerReferences[0].kind}")).toBe(
    "ExchangeRate",
  );

  // The printer columns, under the seed's short name.
  const table = await kubectl("get", "er");
  expect(table).toMatch(/^NAME\s+CURRENCY\s+RATE\s+FETCHED\s+AGE/);
  expect(table).toMatch(new RegExp(`usd\\s+USD\\s+${SAMPLE_RATES.USD}\\s`));

  await kubectl("patch", "er", "usd", "--type", "merge", "-p", '{"spec":{"currency":"CAD"}}');
  await kubectl("wait", "--for=jsonpath={.status.currency}=CAD", "--timeout=10s", "er/usd");
  expect(await kubectl("get", "configmap", "usd", "-o", "jsonpath={.data}")).toBe(
    JSON.stringify({ base: "EUR", currency: "CAD", rate: String(SAMPLE_RATES.CAD) }),
  );
  expect(
    await kubectl("get", "events", "--field-selector", "involvedObject.name=usd", "-o", "jsonpath={.items[*].reason}"),
  ).toContain("RatePublished");

  await kubectl("delete", "-f", file("usd.yaml"));
  // Garbage-collected: on a real cluster once its collector has learnt the ExchangeRate kind.
  const collected = `${toMilliseconds(cluster.timeouts.garbageCollection)}ms`;
  await kubectl("wait", "--for=delete", `--timeout=${collected}`, "configmap/usd");
  const gone = await cluster.kubectl(["get", "configmap", "usd"]);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toContain('configmaps "usd" not found');
});

it("refuses eur.yaml: EUR is not one of the currencies the CRD allows", async () => {
  const r = await cluster.kubectl(["apply", "-f", file("eur.yaml")]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('spec.currency: Unsupported value: "EUR"');
  expect((await cluster.kubectl(["get", "er", "eur"])).code).toBe(1);
});

it("shows the Warning Events of a failing rates server with kubectl, and the rate once it recovers", async () => {
  rates.fail("GBP", 503);
  await kubectl("apply", "-f", file("gbp.yaml"));
  const warnings = await vi.waitFor(
    async () => {
      const out = await kubectl(
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=gbp,type=Warning",
        "-o",
        'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}',
      );
      expect(out).toContain("HandlerRetrying");
      return out;
    },
    { timeout: 10_000, interval: 100 },
  );
  expect(warnings).toMatch(/HandlerRetrying: Handler 'publish-rate' failed .*fetching the GBP rate from .*: HTTP 503/);
  expect((await cluster.kubectl(["get", "configmap", "gbp"])).code).toBe(1);

  rates.recover("GBP");
  await kubectl("wait", `--for=jsonpath={.status.rate}=${SAMPLE_RATES.GBP}`, "--timeout=15s", "er/gbp");
  expect(await kubectl("get", "configmap", "gbp", "-o", "jsonpath={.data.rate}")).toBe(String(SAMPLE_RATES.GBP));
});

it("ships crd.yaml as `capstan generate` prints it, and the generated CRD, RBAC and Deployment apply cleanly", async () => {
  const generated = await cluster.capstan(
    [
      "generate",
      "all",
      file("operator.ts"),
      "--image",
      "registry.example.com/exchangerates:1.0",
      "--namespace",
      "exchangerate-system",
    ],
    { cwd: EXAMPLES },
  );
  expect(generated.code, generated.stderr).toBe(0);
  const docs = parseAllDocuments(generated.stdout).map((d) => d.toJS() as { kind: string });
  expect(docs.map((d) => d.kind)).toEqual([
    "CustomResourceDefinition",
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterRole", // exchangerates-metrics-reader: may scrape its HTTPS /metrics
    "Deployment",
    "Service", // exchangerates-metrics-service
  ]);
  const shipped = parse(await readFile(file("crd.yaml"), "utf8"));
  expect(shipped).toEqual(docs[0]);

  const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: generated.stdout });
  expect(applied.code, applied.stderr).toBe(0);
  expect(applied.stdout).toContain("deployment.apps/exchangerates created");
  expect(applied.stdout).toContain("clusterrole.rbac.authorization.k8s.io/exchangerates created");
  expect(await kubectl("apply", "-f", file("crd.yaml"))).toMatch(
    /customresourcedefinition.apiextensions.k8s.io\/exchangerates.operators.brennerm.github.io (unchanged|configured)/,
  );
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
