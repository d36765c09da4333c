/**
 * The official Python client (Debian's python3-kubernetes, which .ci/run installs) against the
 * embedded API server: scripts of ours in test/compat/python/, written as a user of the seed articles
 * would write them, each printing one JSON line of what it saw. Two of them are controllers in the
 * style of seeds 001 and 004, driven with kubectl.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeObject, ResourceKind } from "capstan";
import { Pod } from "capstan/core";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SCRIPTS = fileURLToPath(new URL("./python/", import.meta.url));

/** The first interpreter that imports the client: Debian's /usr/bin/python3 ahead of a pyenv shim on PATH. */
function pythonWithClient(): string {
  for (const candidate of ["/usr/bin/python3", "python3"]) {
    try {
      execFileSync(candidate, ["-c", "import kubernetes"], { stdio: "ignore" });
      return candidate;
    } catch {}
  }
  throw new Error("no python3 here imports the kubernetes client: install Debian's python3-kubernetes (.ci/run does)");
}

const python = pythonWithClient();
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(() => cluster?.stop());

/** Runs a script to completion in a fresh namespace and returns the JSON of its last line. */
async function runScript(script: string): Promise<Record<string, unknown>> {
  const namespace = script.replace(/_/g, "-").replace(/\.py$/, "");
  const created = await cluster.kubectl(["create", "namespace", namespace]);
  expect(created.code, created.stderr).toBe(0);
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve) => {
      const child = spawn(python, [join(SCRIPTS, script), namespace], {
        env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath, PYTHONDONTWRITEBYTECODE: "1" },
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      child.on("close", (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
    },
  );
  expect(code, `${script} failed:\n${stderr}`).toBe(0);
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

describe("the official Python client", () => {
  it("lists, then watches and resumes across timeout_seconds, with bookmarks", async () => {
    const r = await runScript("watch_resume.py");
    expect(r.first).toEqual([["ADDED", "first"]]);
    expect(r.resumed).toEqual([["ADDED", "second"]]);
    expect(r.bookmarks).toContainEqual(["BOOKMARK", true]);
    expect(r.deleted).toEqual(["first"]);
  });

  it("sends each patch type and gets the server's answers", async () => {
    const r = await runScript("patches.py");
    expect(r.strategic).toEqual({ data: { a: "1", b: "2" }, labels: { x: "y" } });
    expect(r.json_patch).toEqual({ a: "10" });
    expect(r.failed_test).toMatchObject({ status: 422, reason: "Invalid" });
    expect(r.missing_path).toMatchObject({ status: 422, reason: "Invalid" });
    expect(r.applied).toEqual({ data: { k: "v" }, managers: ["python-compat"] });
    expect(r.merged).toEqual({ m: "n" });
    expect(r.conflict).toMatchObject({ status: 409, reason: "Conflict" });
    expect(r.forced).toEqual({ m: "other" });
  });

  it("deletes with orphan_dependents=True, a propagation policy, and preconditions", async () => {
    const r = await runScript("delete_options.py");
    expect(r.orphan_kept).toBe("orphan-me");
    expect(r.precondition).toMatchObject({ status: 409, reason: "Conflict" });
    expect(r.kept_gone).toBe(true);
  });

  it("creates a CRD and works its custom objects, status and watch", async () => {
    const r = await runScript("custom_objects.py");
    expect(r.created_generation).toBe(1);
    expect(r.invalid).toMatchObject({ status: 422, reason: "Invalid" });
    expect(r.listed_kind).toBe("GizmoList");
    expect(r.listed_names).toEqual(["g1"]);
    expect(r.status_phase).toBe("Ready");
    expect(r.spec_after_status_patch).toBe(2);
    expect(r.replaced_generation).toBe(2);
    expect(r.stale).toMatchObject({ status: 409, reason: "Conflict" });
    // Watched from the list after the create: the status patch, the replace, the delete (the ignored spec change wrote nothing).
    expect(r.seen).toEqual(["MODIFIED", "MODIFIED", "DELETED"]);
  });

  it("reads a pod's log and keeps a followed log open", async () => {
    const r = await runScript("pod_logs.py");
    expect(r).toEqual({ log: "", followed: "open" });
  });
});

/** Starts a long-running controller script; resolves once it printed "watching". */
async function startController(script: string): Promise<ChildProcess> {
  const child = spawn(python, [join(SCRIPTS, script)], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath, PYTHONDONTWRITEBYTECODE: "1" },
  });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => String(d).includes("watching") && resolve());
    child.on("exit", (code) => reject(new Error(`${script} exited with ${code}:\n${err}`)));
  });
  return child;
}

async function stopController(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

interface ImmortalContainer extends KubeObject {
  spec: { image: string };
  status?: { currentPod?: string; startTimes?: number };
}
const ImmortalContainerKind: ResourceKind<ImmortalContainer> = {
  group: "immortalcontainer.flugel.it",
  version: "v1alpha1",
  kind: "ImmortalContainer",
  plural: "immortalcontainers",
  namespaced: true,
};

interface Guitar extends KubeObject {
  spec: { brand: string; review?: boolean; comment?: string };
}
const GuitarKind: ResourceKind<Guitar> = {
  group: "kool.karmalabs.local",
  version: "v1",
  kind: "Guitar",
  plural: "guitars",
  namespaced: true,
};

describe("controllers written with the Python client", () => {
  it("seed 001's ImmortalContainer: creates the pod, records it in status, recreates it when deleted", async () => {
    const crd = await cluster.kubectl(["apply", "-f", join(SCRIPTS, "immortalcontainer-crd.yaml")]);
    expect(crd.code, crd.stderr).toBe(0);
    await cluster.kubectl([
      "wait",
      "--for=condition=Established",
      "crd/immortalcontainers.immortalcontainer.flugel.it",
    ]);
    const controller = await startController("immortal_controller.py");
    try {
      const manifest = join(cluster.dir, "immortal.yaml");
      writeFileSync(
        manifest,
        "apiVersion: immortalcontainer.flugel.it/v1alpha1\nkind: ImmortalContainer\nmetadata:\n  name: example\n  namespace: default\nspec:\n  image: nginx:latest\n",
      );
      const created = await cluster.kubectl(["apply", "-f", manifest]);
      expect(created.code, created.stderr).toBe(0);
      const first = await cluster.waitFor(
        ImmortalContainerKind,
        "default/example",
        (ic) => ic.status?.startTimes === 1,
        {
          timeout: "20s",
        },
      );
      expect(first.status?.currentPod).toBe("example-immortalpod");
      const pod = await cluster.waitFor(Pod, "default/example-immortalpod", (p) => p.status?.phase === "Running");
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "ImmortalContainer", name: "example" });

      const deleted = await cluster.kubectl(["delete", "pod", "example-immortalpod", "--wait=false"]);
      expect(deleted.code, deleted.stderr).toBe(0);
      await cluster.waitFor(ImmortalContainerKind, "default/example", (ic) => ic.status?.startTimes === 2, {
        timeout: "20s",
      });
      const again = await cluster.waitFor(
        Pod,
        "default/example-immortalpod",
        (p) => p.metadata?.uid !== pod.metadata?.uid,
      );
      expect(again.spec?.containers[0]?.image).toBe("nginx:latest");
    } finally {
      await stopController(controller);
    }
  });

  it("seed 004's Guitar: creates its CRD, then reviews every guitar it watches", async () => {
    const controller = await startController("guitar_controller.py");
    try {
      const manifest = join(cluster.dir, "guitars.yaml");
      writeFileSync(
        manifest,
        [
          ["stratocaster", "fender"],
          ["lespaul", "gibson"],
        ]
          .map(
            ([name, brand]) =>
              `apiVersion: kool.karmalabs.local/v1\nkind: Guitar\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  brand: ${brand}\n  review: false\n`,
          )
          .join("---\n"),
      );
      const created = await cluster.kubectl(["create", "-f", manifest]);
      expect(created.code, created.stderr).toBe(0);
      const strat = await cluster.waitFor(GuitarKind, "default/stratocaster", (g) => g.spec.review === true, {
        timeout: "20s",
      });
      expect(strat.spec.comment).toBe("Excellent guitar. Strats are the best");
      const lespaul = await cluster.waitFor(GuitarKind, "default/lespaul", (g) => g.spec.review === true, {
        timeout: "20s",
      });
      expect(lespaul.spec.comment).toBe("Classy guitar, but heavy");
      const listed = await cluster.kubectl(["get", "guit", "-o", "jsonpath={.items[*].spec.comment}"]);
      expect(listed.stdout).toBe("Classy guitar, but heavy Excellent guitar. Strats are the best");
    } finally {
      await stopController(controller);
    }
  });
});
