/**
 * What a production operator's process loads: `capstan run` of compiled JavaScript loads neither
 * the TypeScript compiler (CRD descriptions come from it only in `capstan generate`) nor tsx.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");
const recorder = join(repo, "test/cli/fixtures/load-recorder/register.mjs");
const cluster = fileFixture(() => startTestCluster());

it("capstan run of a compiled operator loads neither typescript nor tsx", async () => {
  const dir = await mkdtemp(join(tmpdir(), "capstan-loads-"));
  try {
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await writeFile(
      join(dir, "operator.js"),
      'import { defineResource, operator, Type } from "capstan";\n' +
        "/** A kind documented only in a comment. */\n" +
        'const Thing = defineResource({ group: "loads.capstan.test", version: "v1", kind: "Thing", scope: "Namespaced",\n' +
        "  /** What the thing should be. */\n" +
        "  spec: Type.Object({ /** Its size. */ size: Type.Integer() }) });\n" +
        'const op = operator({ name: "loads" });\n' +
        "op.controller(Thing).reconcile(async () => {});\n" +
        "export default op;\n",
    );
    const log = join(dir, "loaded.txt");
    let out = "";
    const child = spawn(
      process.execPath,
      ["--import", recorder, bin, "run", "operator.js", "--kubeconfig", cluster.kubeconfigPath, "--log-format", "json"],
      { cwd: dir, env: { ...process.env, CAPSTAN_TEST_LOAD_LOG: log }, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await waitUntil(() => out.includes('"msg":"starting controllers"') || undefined, { timeout: "30s" });
    child.kill("SIGTERM");
    expect(await exited, out).toBe(0);
    const loaded = (await readFile(log, "utf8")).trim().split("\n");
    // The recorder saw the process's modules: capstan's CLI and the operator itself.
    expect(loaded.some((url) => url.endsWith("/packages/capstan/dist/cli/main.js"))).toBe(true);
    expect(loaded.some((url) => url.endsWith("/operator.js"))).toBe(true);
    expect(loaded.filter((url) => /\/node_modules\/(typescript|tsx)\//.test(url))).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);
