import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigMap } from "../../src/resources/builtins.ts";
import { CRD_KIND } from "../../src/runtime/crd-registration.ts";
import { startTestCluster, type TestCluster } from "../../src/testing/index.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "bin/capstan.js");
const src = (path: string) => JSON.stringify(pathToFileURL(join(repo, "src", path)).href);

/** An operator as a user writes it, in its own folder: Gadgets get a ConfigMap with their size. */
const OPERATOR = `
import { Type } from "typebox";
import { isAlreadyExists } from ${src("client/errors.ts")};
import { operator } from ${src("operator/index.ts")};
import { ConfigMap } from ${src("resources/builtins.ts")};
import { defineResource } from ${src("resources/define-resource.ts")};
import { isDeleted } from ${src("runtime/reconcile.ts")};

export const Gadget = defineResource({
  group: "gadgets.capstan.test", version: "v1", kind: "Gadget", scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
});

const op = operator({ name: "gadgets" });
op.controller(Gadget).owns(ConfigMap).reconcile(async (gadget, ctx) => {
  if (isDeleted(gadget)) return;
  const data = { size: String(gadget.spec.size) };
  const name = gadget.metadata.name + "-size";
  const cms = ctx.client.resource(ConfigMap, gadget.metadata.namespace);
  try {
    await cms.create(ctx.adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data }));
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    await cms.update({ ...(await cms.get(name)), data });
  }
});
export { op as operator };
`;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

describe("capstan run", () => {
  let cluster: TestCluster;
  let dir: string;
  let child: ChildProcess | undefined;
  let exited: Promise<Exit> | undefined;

  beforeAll(async () => {
    cluster = await startTestCluster();
    dir = await mkdtemp(join(tmpdir(), "capstan-run-"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    // The operator's own dependencies (typebox) resolve as in a user's project.
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await writeFile(join(dir, "operator.ts"), OPERATOR);
  });
  afterEach(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    child = undefined;
    exited = undefined;
  });
  afterAll(async () => {
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function start(args: string[]): { output: () => string } {
    let out = "";
    const proc = spawn(process.execPath, [bin, "run", ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child = proc;
    exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
    return { output: () => out };
  }

  it("runs the operator module against the kubeconfig's cluster, and stops gracefully on SIGTERM", async () => {
    const run = start([
      "operator.ts",
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--namespace",
      "default",
      "--log-format",
      "json",
    ]);
    await cluster.waitFor(
      CRD_KIND,
      "gadgets.gadgets.capstan.test",
      (crd) => crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false,
      { timeout: "20s" },
    );
    await cluster.client
      .resource({
        group: "gadgets.capstan.test",
        version: "v1",
        kind: "Gadget",
        plural: "gadgets",
        namespaced: true,
      })
      .create({
        apiVersion: "gadgets.capstan.test/v1",
        kind: "Gadget",
        metadata: { name: "g1", namespace: "default" },
        spec: { size: 3 },
      } as never);
    const cm = await cluster.waitFor(ConfigMap, "default/g1-size", (c) => c.data?.size === "3", { timeout: "20s" });
    expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Gadget", name: "g1", controller: true });

    child?.kill("SIGTERM");
    const exit = await exited;
    expect(exit).toEqual({ code: 0, signal: null });
    const lines = run
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { msg: string; namespaces?: unknown });
    expect(lines.find((l) => l.msg === "starting operator")?.namespaces).toEqual(["default"]);
    expect(lines.map((l) => l.msg)).toContain("operator stopped");
  });

  it("exits 2 for contradicting flags", async () => {
    const bad = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [bin, "run", "operator.ts", "--namespace", "a", "--all-namespaces"],
        { cwd: dir, timeout: 30_000 },
        (err, _stdout, stderr) => resolve({ code: typeof err?.code === "number" ? err.code : 0, stderr }),
      );
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--namespace and --all-namespaces exclude each other");
  });

  it("exits 1 with the reason when the kubeconfig is missing", async () => {
    const run = start(["operator.ts", "--kubeconfig", join(dir, "absent-kubeconfig"), "--log-format", "pretty"]);
    const exit = await exited;
    expect(exit?.code).toBe(1);
    expect(run.output()).toMatch(/ERROR cannot start: no usable cluster configuration err=".*absent-kubeconfig/);
  });
});
