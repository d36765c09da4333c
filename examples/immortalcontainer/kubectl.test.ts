/**
 * The seed's walk-through with the real kubectl: apply the sample, see the pod, delete it, see it
 * come back with startTimes incremented.
 */
import { fileURLToPath } from "node:url";
import { toMilliseconds } from "capstan";
import { missingCapability, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { immortalContainerOperator } from "./operator.ts";

/** The examples' project: `capstan generate` run there puts each operator's build in the image. */
const EXAMPLES = fileURLToPath(new URL("..", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("./example.yaml", import.meta.url));
const OPERATOR = fileURLToPath(new URL("./operator.ts", import.meta.url));
const NAME = "example-immortalcontainer";
const POD = `${NAME}-immortalpod`;

let cluster: TestCluster;
/** Why pods do not run here (envtest has no kubelet); `undefined` where they do. */
let noPods: string | undefined;

beforeAll(async () => {
  cluster = await startTestCluster();
  noPods = missingCapability("runningPods", cluster.capabilities);
  await cluster.run(immortalContainerOperator({ restartDelay: 0, recheckInterval: "200ms" }));
});
afterAll(() => cluster.stop());

/** Runs kubectl and expects it to succeed; returns its stdout. */
async function kubectl(...args: string[]): Promise<string> {
  const result = await cluster.kubectl(args);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout;
}

describe("ImmortalContainer with kubectl", () => {
  it("creates the pod of the sample manifest and shows both in kubectl get", async () => {
    expect(await kubectl("apply", "-f", EXAMPLE)).toBe(
      `immortalcontainer.immortalcontainer.flugel.it/${NAME} created\n`,
    );
    await kubectl("wait", `immortalcontainer/${NAME}`, "--for=jsonpath={.status.startTimes}=1", "--timeout=10s");

    const pods = await kubectl(
      "get",
      "pods",
      "-l",
      `immortalcontainer.flugel.it/name=${NAME}`,
      "-o",
      'jsonpath={range .items[*]}{.metadata.name} {.spec.containers[0].image} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}{"\\n"}{end}',
    );
    expect(pods).toBe(`${POD} nginx:latest ImmortalContainer/${NAME}\n`);
    const ics = await kubectl("get", "ic");
    expect(ics.split("\n")[0]).toMatch(/^NAME\s+IMAGE\s+POD\s+STARTS\s+AGE$/);
    expect(ics).toMatch(new RegExp(`^${NAME}\\s+nginx:latest\\s+${POD}\\s+1\\s`, "m"));
  });

  it("gets the pod Ready, Running in kubectl get", async (ctx) => {
    ctx.skip(noPods !== undefined, noPods);
    await kubectl("wait", `pod/${POD}`, "--for=condition=Ready", "--timeout=30s");
    const pods = await kubectl("get", "pods", "-l", `immortalcontainer.flugel.it/name=${NAME}`);
    expect(pods).toMatch(new RegExp(`^${POD}\\s+1/1\\s+Running\\s+0\\s`, "m"));
  });

  it("brings the pod back after kubectl delete pod, with startTimes incremented", async () => {
    const before = await kubectl("get", "pod", POD, "-o", "jsonpath={.metadata.uid}");
    expect(await kubectl("delete", "pod", POD)).toBe(`pod "${POD}" deleted\n`);

    await kubectl("wait", `immortalcontainer/${NAME}`, "--for=jsonpath={.status.startTimes}=2", "--timeout=10s");
    const after = await kubectl("get", "pod", POD, "-o", "jsonpath={.metadata.uid}");
    expect(after).not.toBe(before);

    const status = await kubectl("get", "immortalcontainer", NAME, "-o", "jsonpath={.status}");
    expect(JSON.parse(status)).toEqual({ currentPod: POD, startTimes: 2 });
    const owner = await kubectl(
      "get",
      "pod",
      POD,
      "-o",
      "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}",
    );
    expect(owner).toBe(`ImmortalContainer/${NAME}`);
    const describe = await kubectl("describe", "immortalcontainer", NAME);
    expect(describe).toMatch(
      /Normal\s+Started\s+.*started pod example-immortalcontainer-immortalpod running nginx:latest \(start 2\)/,
    );
  });

  it("refuses an ImmortalContainer without an image, with the API server's message", async () => {
    const result = await cluster.kubectl(["apply", "-f", "-"], {
      stdin:
        "apiVersion: immortalcontainer.flugel.it/v1alpha1\nkind: ImmortalContainer\nmetadata:\n  name: no-image\nspec: {}\n",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("spec.image: Required value");
  });

  it("deletes the pod with the ImmortalContainer (kubectl delete -f)", async () => {
    expect(await kubectl("delete", "-f", EXAMPLE)).toBe(
      `immortalcontainer.immortalcontainer.flugel.it "${NAME}" deleted\n`,
    );
    // Garbage-collected: on a real cluster once its collector has learnt the ImmortalContainer kind.
    const collected = `${toMilliseconds(cluster.timeouts.garbageCollection)}ms`;
    await kubectl("wait", `pod/${POD}`, "--for=delete", `--timeout=${collected}`);
    const left = await cluster.kubectl(["get", "pod", POD]);
    expect(left.code).toBe(1);
    expect(left.stderr).toContain(`pods "${POD}" not found`);
  });
});

describe("the generated manifests", () => {
  let fresh: TestCluster | undefined;
  afterAll(() => fresh?.stop());
  const IMAGE = "registry.example.com/immortalcontainer:1.0";

  it("apply cleanly with kubectl: CRD, namespace, ServiceAccount, RBAC and the operator's Deployment", async (ctx) => {
    // A first deployment: on a shared cluster this file's operator has registered the CRD already.
    const shared = missingCapability("ownCluster", cluster.capabilities);
    ctx.skip(shared !== undefined, shared);
    fresh = await startTestCluster();
    const all = await fresh.capstan(["generate", "all", OPERATOR, "--image", IMAGE, "--namespace", "immortal-system"], {
      cwd: EXAMPLES,
    });
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);

    const applied = await fresh.kubectl(["apply", "-f", "-"], { stdin: all.stdout });
    expect(applied.stderr).toBe("");
    expect(applied.stdout.trim().split("\n")).toEqual([
      "customresourcedefinition.apiextensions.k8s.io/immortalcontainers.immortalcontainer.flugel.it created",
      "namespace/immortal-system created",
      "serviceaccount/immortalcontainers created",
      "clusterrole.rbac.authorization.k8s.io/immortalcontainers created",
      "clusterrolebinding.rbac.authorization.k8s.io/immortalcontainers created",
      "clusterrole.rbac.authorization.k8s.io/immortalcontainers-metrics-reader created",
      "deployment.apps/immortalcontainers created",
      "service/immortalcontainers-metrics-service created",
    ]);
    const deployment = await fresh.kubectl([
      "get",
      "deployment/immortalcontainers",
      "-n",
      "immortal-system",
      "-o",
      "jsonpath={.spec.template.spec.serviceAccountName} {.spec.template.spec.containers[0].image}",
    ]);
    expect(deployment.stdout).toBe(`immortalcontainers ${IMAGE}`);
    const established = await fresh.kubectl([
      "wait",
      "crd/immortalcontainers.immortalcontainer.flugel.it",
      "--for=condition=Established",
      "--timeout=10s",
    ]);
    expect(established.code).toBe(0);
  });

  it("rolls the operator's Deployment out", async (ctx) => {
    // Its image exists nowhere: only a kubelet that runs no container runs it.
    const noKubelet = missingCapability("simulatedKubelet", cluster.capabilities);
    ctx.skip(noKubelet !== undefined, `${noKubelet}; the Deployment's image exists nowhere, only that kubelet runs it`);
    if (fresh === undefined) throw new Error("the manifests were not applied: see the test above");
    const rollout = await fresh.kubectl([
      "rollout",
      "status",
      "deployment/immortalcontainers",
      "-n",
      "immortal-system",
      "--timeout=10s",
    ]);
    expect(rollout.stdout).toContain('deployment "immortalcontainers" successfully rolled out');
  });
});
