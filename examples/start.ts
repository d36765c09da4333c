/**
 * `npm start`: the five example operators on the embedded API server, ready to poke with kubectl.
 *
 * Starts the exchangerate example's local rates server (these machines have no internet; the
 * operator's default is a public rates API), then `capstan dev` with every example operator,
 * pointing the ExchangeRate operator at the local server, and prints what to type once the API
 * server is up. Arguments are passed to `capstan dev` (`npm start -- --port 6443`).
 *
 * Ctrl-C reaches `capstan dev` too (same process group): it stops the operators and the server;
 * this script then stops the rates server and exits with `capstan dev`'s code.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { KubeClient } from "capstan";
import { CustomResourceDefinition } from "capstan/core";
import { isEstablished, waitFor } from "capstan-dev/testing";
import cronjob from "./cronjob/operator.ts";
import exchangerate from "./exchangerate/operator.ts";
import { RATES_URL_ENV, startRatesServer } from "./exchangerate/rates-server.ts";
import guitar from "./guitar/operator.ts";
import immortalcontainer from "./immortalcontainer/operator.ts";
import uselessMachine from "./useless-machine/operator.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const operators = ["exchangerate", "immortalcontainer", "useless-machine", "guitar", "cronjob"].map((name) =>
  relative(root, join(here, name, "operator.ts")),
);

const args = process.argv.slice(2);
const kubeconfigFlag = args.indexOf("--kubeconfig");
const kubeconfig = kubeconfigFlag >= 0 ? (args[kubeconfigFlag + 1] ?? ".capstan/kubeconfig") : ".capstan/kubeconfig";
/** The CRDs the operators register when they start: the examples are ready once all are served. */
const crdNames = [exchangerate, immortalcontainer, uselessMachine, guitar, cronjob].flatMap((op) =>
  op.requirements().crds.map((k) => k.crdName),
);

/** What to type once the API server is ready: one scenario per example. */
const TRY = `
Try them in another terminal (each example's README.md has more):
  export KUBECONFIG=${kubeconfig}

  # Guitar: an unreviewed guitar gets its review written into its spec
  kubectl apply -f examples/guitar/stratocaster.yaml -f examples/guitar/lespaul.yaml
  kubectl get guitars

  # ExchangeRate: a ConfigMap with the rate appears, follows the currency, goes with its owner
  kubectl apply -f examples/exchangerate/usd.yaml
  kubectl get exchangerates; kubectl get configmap usd -o jsonpath='{.data}'; echo
  kubectl patch er usd --type merge -p '{"spec":{"currency":"GBP"}}'

  # ImmortalContainer: delete its pod and it comes back, counting start times
  kubectl apply -f examples/immortalcontainer/example.yaml
  kubectl delete pod example-immortalcontainer-immortalpod
  kubectl get ic example-immortalcontainer -o jsonpath='{.status}'; echo

  # The useless machine: a switch turned up goes back down; Switches follow spec.switches
  kubectl apply -f examples/useless-machine/machine-1.yaml -f examples/useless-machine/machine-2.yaml
  kubectl get machines -w

  # CronJob (the kubebuilder tutorial's): a Job every minute; tcj, since cronjobs are the built-in ones
  kubectl apply -f examples/cronjob/cronjob.yaml
  kubectl get tcj; kubectl get jobs -w
`;

/** The `capstan` command of the installed package, as `npx capstan` runs it (built by `npm run build`). */
const capstanBin = join(dirname(createRequire(import.meta.url).resolve("capstan/package.json")), "bin", "capstan.js");

const rates = await startRatesServer({ port: 0 });
process.stdout.write(`rates server: ${rates.url} (fixed rates, for the ExchangeRate example)\n`);

const dev = spawn(process.execPath, [capstanBin, "dev", ...operators, ...args], {
  cwd: root,
  env: { ...process.env, [RATES_URL_ENV]: rates.url },
  stdio: ["inherit", "pipe", "inherit"],
});
let hinted = false;
dev.stdout.setEncoding("utf8");
dev.stdout.on("data", (chunk: string) => {
  process.stdout.write(chunk);
  if (!hinted && chunk.includes("API server ready")) {
    hinted = true;
    void hintWhenServed();
  }
});

/** Prints {@link TRY} once every example's CRD is served (the operators register them at start-up). */
async function hintWhenServed(): Promise<void> {
  const client = await KubeClient.load({ kubeconfig: resolve(root, kubeconfig) });
  try {
    for (const name of crdNames) {
      await waitFor(client, CustomResourceDefinition, name, isEstablished, { timeout: "60s" });
    }
    process.stdout.write(`\nThe five example operators are running.${TRY}\n`);
  } catch (err) {
    process.stdout.write(`examples: ${(err as Error).message}\n`);
  } finally {
    await client.close();
  }
}

// Ctrl-C signals the whole foreground group: `capstan dev` stops itself; this script waits for it.
// A SIGTERM sent to this script alone is passed on.
process.on("SIGINT", () => undefined);
process.on("SIGTERM", () => dev.kill("SIGTERM"));

const code = await new Promise<number>((resolve) => {
  dev.once("exit", (exitCode, signal) => resolve(exitCode ?? (signal === null ? 1 : 128)));
});
await rates.stop();
process.exit(code);
