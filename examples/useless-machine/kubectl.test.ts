/**
 * The useless machine driven with the real kubectl and the folder's sample manifests, as the
 * README tells a newcomer to do it (with a 200 ms flip delay instead of 5 s).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { toMilliseconds } from "capstan";
import { missingCapability, type RunningOperator, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { uselessMachineOperator } from "./operator.ts";

/** The examples' project: `capstan generate` run there puts each operator's build in the image. */
const EXAMPLES = fileURLToPath(new URL("..", import.meta.url));
const manifest = (file: string) => fileURLToPath(new URL(file, import.meta.url));

let cluster: TestCluster;
let running: RunningOperator;
beforeAll(async () => {
  cluster = await startTestCluster();
  running = await cluster.run(uselessMachineOperator({ flipDelay: "200ms" }));
});
afterAll(() => cluster?.stop());

/** Runs kubectl and returns its stdout; a non-zero exit fails the test with kubectl's stderr. */
async function kubectl(args: string[], env?: Record<string, string>): Promise<string> {
  const r = await cluster.kubectl(args, env === undefined ? {} : { env });
  expect(r.code, `kubectl ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

const waitFor = (condition: string, target: string) =>
  kubectl(["wait", `--for=jsonpath=${condition}`, "--timeout=10s", target]);

it("moves machine-1's switch back down after kubectl apply", async () => {
  await kubectl(["apply", "-f", manifest("machine-1.yaml")]);
  // kubectl reads v1, the highest version, converted by the operator: the switch is `position` there.
  await waitFor("{.spec.position}=down", "machine/machine-1");
  const flipped = await kubectl(["get", "machine", "machine-1", "-o", "jsonpath={.status.lastFlipAt}"]);
  expect(Date.parse(flipped)).not.toBeNaN();
  const events = await kubectl(["get", "events", "--field-selector", "involvedObject.name=machine-1"]);
  expect(events).toMatch(/FlippedDown\s+machine\/machine-1\s+moved the machine's switch back down/);
});

it("shows SWITCHES and POSITIONS, flips patched and edited switches back down, scales, and collects", async () => {
  await kubectl(["apply", "-f", manifest("machine-2.yaml")]);
  await waitFor("{.status.positions}=ddd", "machine/machine-2");
  const table = await kubectl(["get", "machines"]);
  // As in the seed's slide: a CRD that lists its own columns gets no AGE column unless it asks.
  expect(table).toMatch(/^NAME\s+SWITCHES\s+POSITIONS\n/);
  expect(table).toMatch(/\nmachine-2\s+3\s+ddd\n/);

  const names = (await kubectl(["get", "switches", "-l", "machine=machine-2", "-o", "name"])).trim().split("\n");
  expect(names).toHaveLength(3);
  expect(names.every((n) => /^switch\.useless\.container\.training\/switch-[a-z0-9]+$/.test(n))).toBe(true);
  const [first, second] = names as [string, string];

  await kubectl(["patch", first, "--type", "merge", "-p", '{"spec":{"position":"up"}}']);
  await waitFor("{.spec.position}=down", first);
  expect(
    await kubectl(["get", first, "-o", `jsonpath={.metadata.annotations.useless\\.container\\.training/flipped-at}`]),
  ).not.toBe("");

  // kubectl edit with a scripted editor: what a user does by hand.
  await kubectl(["edit", second], { KUBE_EDITOR: "sed -i -e s/position:\\ down/position:\\ up/" });
  await waitFor("{.spec.position}=down", second);
  const edited = await kubectl([
    "get",
    second,
    "-o",
    `jsonpath={.metadata.annotations.useless\\.container\\.training/flipped-at}`,
  ]);
  expect(Date.parse(edited)).not.toBeNaN();
  await waitFor("{.status.positions}=ddd", "machine/machine-2");

  await kubectl(["patch", "machine", "machine-2", "--type", "merge", "-p", '{"spec":{"switches":1}}']);
  await waitFor("{.status.positions}=d", "machine/machine-2");
  expect((await kubectl(["get", "switches", "-l", "machine=machine-2", "-o", "name"])).trim().split("\n")).toHaveLength(
    1,
  );
  expect(await kubectl(["get", "machines", "machine-2"])).toMatch(/\nmachine-2\s+1\s+d\n/);

  await kubectl(["delete", "-f", manifest("machine-2.yaml"), "--wait=true"]);
  // Garbage-collected: on a real cluster once its collector has learnt the Machine kind.
  const collected = `${toMilliseconds(cluster.timeouts.garbageCollection)}ms`;
  await kubectl(["wait", "--for=delete", "switches", "-l", "machine=machine-2", `--timeout=${collected}`]);
  const left = await cluster.kubectl(["get", "switches", "-l", "machine=machine-2"]);
  expect(left.stdout).toBe("");
  expect(left.stderr).toContain(`No resources found in ${cluster.namespace} namespace`);
});

it("applies the generated CRDs, RBAC, webhooks and Deployment cleanly with kubectl", async (ctx) => {
  // A first deployment needs a cluster where the operator's CRDs are not registered yet, which a new
  // TestCluster is only where each is a cluster of its own (not on the kubeconfig backend's shared one).
  const shared = missingCapability("ownCluster", cluster.capabilities);
  ctx.skip(shared !== undefined, shared);
  // The embedded server has no cert-manager to make and inject the webhooks' certificate: give
  // a CA instead. A cluster without the operator, as a first deployment finds it: on this file's
  // cluster the running operator registered its CRD with a conversion by URL, which kubectl's
  // merge would keep beside the generated Service reference (the API server refuses both).
  const fresh = await startTestCluster();
  try {
    const caBundle = join(fresh.dir, "webhook-ca.pem");
    await writeFile(caBundle, running.webhookCa as string);
    const generated = await fresh.capstan(
      [
        "generate",
        "all",
        manifest("operator.ts"),
        "--image",
        "registry.example.com/useless-machine:1.0",
        "--namespace",
        "useless-system",
        "--ca-bundle",
        caBundle,
      ],
      { cwd: EXAMPLES },
    );
    expect(generated.stderr).toBe("");
    expect(generated.code).toBe(0);
    const applied = await fresh.kubectl(["apply", "-f", "-"], { stdin: generated.stdout });
    expect(applied.stderr).toBe("");
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(
      /customresourcedefinition.apiextensions.k8s.io\/machines.useless.container.training created/,
    );
    expect(applied.stdout).toMatch(/clusterrole.rbac.authorization.k8s.io\/useless-machine created/);
    expect(applied.stdout).toMatch(/service\/useless-machine-webhook created/);
    expect(applied.stdout).toMatch(
      /validatingwebhookconfiguration.admissionregistration.k8s.io\/useless-machine-validating created/,
    );
    expect(applied.stdout).toMatch(/deployment.apps\/useless-machine created/);
    // The CRD calls the operator's Service for conversions, with the CA given.
    const conversion = await fresh.kubectl([
      "get",
      "crd",
      "machines.useless.container.training",
      "-o",
      "jsonpath={.spec.conversion.strategy} {.spec.conversion.webhook.clientConfig.service.name} {.spec.conversion.webhook.clientConfig.service.path}",
    ]);
    expect(conversion.stdout).toBe("Webhook useless-machine-webhook /convert-useless-container-training-machine");
  } finally {
    await fresh.stop();
  }
});
