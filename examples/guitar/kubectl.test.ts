/**
 * The guitar reviewer driven with the real kubectl and the folder's sample manifests, as the
 * README tells a newcomer to do it.
 */
import { fileURLToPath } from "node:url";
import { missingCapability, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import op, { BAD_COMMENT, GOOD_COMMENT, UNKNOWN_COMMENT } from "./operator.ts";

/** The examples' project: `capstan generate` run there puts each operator's build in the image. */
const EXAMPLES = fileURLToPath(new URL("..", import.meta.url));
const manifest = (file: string) => fileURLToPath(new URL(file, import.meta.url));

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.run(op);
});
afterAll(() => cluster?.stop());

/** Runs kubectl and returns its stdout; a non-zero exit fails the test with kubectl's stderr. */
async function kubectl(...args: string[]): Promise<string> {
  const r = await cluster.kubectl(args);
  expect(r.stderr, `kubectl ${args.join(" ")}`).not.toMatch(/error/i);
  expect(r.code, `kubectl ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

const waitReviewed = (...args: string[]) =>
  kubectl("wait", "--for=jsonpath={.spec.review}=true", "--timeout=10s", ...args);

it("reviews the sample guitars applied with kubectl apply, in every namespace", async () => {
  await kubectl(
    "apply",
    ...["stratocaster.yaml", "lespaul.yaml", "x003.yaml", "studio.yaml"].flatMap((f) => ["-f", manifest(f)]),
  );
  await waitReviewed("guitar/stratocaster", "guitar/lespaul", "guitar/x003");
  await waitReviewed("-n", "studio", "guitar/homemade");

  const comments = await kubectl(
    "get",
    "guitars",
    "--all-namespaces",
    "-o",
    'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}: {.spec.comment}{"\\n"}{end}',
  );
  // On a shared cluster other test files' guitars are listed too: only this file's namespaces count.
  const ours = comments
    .trim()
    .split("\n")
    .filter((line) => line.startsWith(`${cluster.namespace}/`) || line.startsWith("studio/"));
  expect(ours.sort()).toEqual(
    [
      `${cluster.namespace}/lespaul: ${GOOD_COMMENT}`,
      `${cluster.namespace}/stratocaster: ${GOOD_COMMENT}`,
      `${cluster.namespace}/x003: ${BAD_COMMENT}`,
      `studio/homemade: ${UNKNOWN_COMMENT}`,
      "studio/martin-d15: my first guitar, not for sale",
    ].sort(),
  );

  // The printer columns, under the seed's short name.
  const table = await kubectl("get", "guit", "-n", "studio");
  expect(table).toMatch(/^NAME\s+BRAND\s+REVIEWED\s+COMMENT\s+AGE/);
  expect(table).toMatch(new RegExp(`homemade\\s+acme\\s+true\\s+${UNKNOWN_COMMENT}`));
});

it("leaves the guitar that was applied reviewed untouched", async () => {
  // studio.yaml lists martin-d15 before homemade: homemade's review (awaited above) came after it.
  const martin = JSON.parse(
    await kubectl("get", "guitar", "martin-d15", "-n", "studio", "-o", "json", "--show-managed-fields"),
  );
  expect(martin.metadata.generation).toBe(1);
  // No handler state, in status (where the operator keeps it for a kind with a status) or annotations.
  expect(martin.status ?? {}).not.toHaveProperty("capstan");
  expect(martin.metadata.annotations ?? {}).not.toHaveProperty([
    "guitar-reviewer.capstan.dev/last-handled-configuration",
  ]);
  // One writer only: kubectl's create (an operator's patch would add its own entry).
  expect(martin.metadata.managedFields.map((f: { manager: string }) => f.manager)).toEqual([
    "kubectl-client-side-apply",
  ]);
  expect(martin.spec).toEqual({ brand: "martin", review: true, comment: "my first guitar, not for sale" });
});

it("reviews again after kubectl patch sets review back to false", async () => {
  await kubectl("patch", "guitar", "x003", "--type=merge", "-p", '{"spec":{"brand":"martin","review":false}}');
  await waitReviewed("guitar/x003");
  expect(await kubectl("get", "guitar", "x003", "-o", "jsonpath={.spec.comment}")).toBe(GOOD_COMMENT);

  // Events are written in the background, beside the review: wait until both are listed.
  await vi.waitFor(
    async () => {
      const events = await kubectl(
        "get",
        "events",
        "-o",
        'jsonpath={range .items[?(@.reason=="Reviewed")]}{.involvedObject.name}: {.message}{"\\n"}{end}',
      );
      expect(events).toContain(`x003: yamaha: ${BAD_COMMENT}`);
      expect(events).toContain(`x003: martin: ${GOOD_COMMENT}`);
    },
    { timeout: 5_000, interval: 100 },
  );
});

it("deletes the guitars with kubectl delete -f", async () => {
  await kubectl(
    "delete",
    "-f",
    manifest("stratocaster.yaml"),
    "-f",
    manifest("lespaul.yaml"),
    "-f",
    manifest("x003.yaml"),
  );
  expect(await kubectl("get", "guitars", "-o", "name")).toBe("");
});

it("applies the generated CRD, RBAC and Deployment with kubectl", async () => {
  const generated = await cluster.capstan(
    [
      "generate",
      "all",
      manifest("operator.ts"),
      "--image",
      "registry.example.com/guitar-reviewer:1.0",
      "--namespace",
      "guitar-system",
    ],
    { cwd: EXAMPLES },
  );
  expect(generated.code, generated.stderr).toBe(0);
  // The Deployment runs the operator as the examples' build compiles it, not its TypeScript source.
  expect(generated.stdout).toMatch(/- dist\/guitar\/operator\.js\n/);
  const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: generated.stdout });
  // kubectl warns that the CRD the operator registered has no last-applied annotation: expected.
  expect(applied.code, applied.stderr).toBe(0);
  expect(applied.stderr).not.toMatch(/error/i);
  expect(applied.stdout.trim().split("\n").sort()).toEqual([
    "clusterrole.rbac.authorization.k8s.io/guitar-reviewer created",
    // Who may scrape its HTTPS /metrics (bind it to Prometheus's ServiceAccount).
    "clusterrole.rbac.authorization.k8s.io/guitar-reviewer-metrics-reader created",
    "clusterrolebinding.rbac.authorization.k8s.io/guitar-reviewer created",
    // Registered by the running operator already; the generated one is the same CRD.
    "customresourcedefinition.apiextensions.k8s.io/guitars.kool.karmalabs.local configured",
    "deployment.apps/guitar-reviewer created",
    "namespace/guitar-system created",
    "service/guitar-reviewer-metrics-service created",
    "serviceaccount/guitar-reviewer created",
  ]);
  const deployment = await kubectl(
    "get",
    "deployment/guitar-reviewer",
    "-n",
    "guitar-system",
    "-o",
    "jsonpath={.spec.template.spec.serviceAccountName} {.spec.template.spec.containers[0].image}",
  );
  expect(deployment).toBe("guitar-reviewer registry.example.com/guitar-reviewer:1.0");
}, 60_000);

it("rolls the generated Deployment out", async (ctx) => {
  // Its image exists nowhere: only a kubelet that runs no container runs it.
  const noKubelet = missingCapability("simulatedKubelet", cluster.capabilities);
  ctx.skip(noKubelet !== undefined, `${noKubelet}; the Deployment's image exists nowhere, only that kubelet runs it`);
  await kubectl("rollout", "status", "deployment/guitar-reviewer", "-n", "guitar-system", "--timeout=20s");
});
