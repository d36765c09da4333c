/**
 * `capstan new`: the arguments it refuses (writing nothing), and a generated project that
 * typechecks and passes its own end-to-end test against this checkout of Capstan.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kindFromName } from "../../packages/capstan/src/cli/new.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, timeout = 60_000): Promise<Result> {
  return new Promise((resolve) => {
    // NO_COLOR: the assertions read vitest's summary as plain text.
    const env = { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" };
    execFile(process.execPath, [file, ...args], { cwd, timeout, env }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-new-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("capstan new", () => {
  it("names the kind after the directory", () => {
    expect(kindFromName("backup-operator")).toBe("Backup");
    expect(kindFromName("my-db")).toBe("MyDb");
    expect(kindFromName("operator")).toBe("Widget");
    expect(kindFromName("x9-controller")).toBe("X9");
  });

  it("refuses bad arguments and a non-empty directory, writing nothing", async () => {
    const cases: [string[], RegExp][] = [
      [["new", "Bad_Name"], /must be a DNS label/],
      [["new", "ok-operator", "--kind", "lower"], /--kind "lower" must be PascalCase/],
      [["new", "ok-operator", "--group", "nodot"], /--group "nodot" must be a DNS subdomain with a dot/],
      [["new", "ok-operator", "--version", "1"], /--version "1" must look like v1/],
      [["new", "ok-operator", "--group", "widgets.k8s.io"], /group "widgets.k8s.io" is reserved for Kubernetes APIs/],
      [["new"], /expected one directory/],
    ];
    for (const [args, message] of cases) {
      const res = await run(bin, args, dir);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr).toMatch(message);
    }
    expect(readdirSync(dir)).toEqual([]);

    mkdirSync(join(dir, "taken"));
    writeFileSync(join(dir, "taken", "keep.txt"), "mine");
    const taken = await run(bin, ["new", "taken"], dir);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain("is not empty (keep.txt...): nothing written");
    expect(readdirSync(join(dir, "taken"))).toEqual(["keep.txt"]);
  });

  it("generates a project that typechecks and passes its own end-to-end test", async () => {
    const created = await run(bin, ["new", "gadget-operator", "--group", "gadgets.example.org"], dir);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain("kind Gadget (gadgets.example.org/v1alpha1), capstan file:");
    const project = join(dir, "gadget-operator");
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(pkg.dependencies["capstan"]).toBe(`file:${repo.replace(/\/$/, "")}`);
    expect(pkg.scripts["dev"]).toBe("capstan dev src/operator.ts");
    expect(existsSync(join(project, "manifests/gadget.yaml"))).toBe(true);

    // What `npm install` would give it, without the network: this checkout's packages, and capstan itself.
    const modules = join(project, "node_modules");
    mkdirSync(modules);
    for (const entry of readdirSync(join(repo, "node_modules"))) {
      if (entry !== ".bin") symlinkSync(join(repo, "node_modules", entry), join(modules, entry));
    }
    symlinkSync(repo, join(modules, "capstan"));

    const typecheck = await run(join(repo, "node_modules/typescript/bin/tsc"), ["--noEmit", "-p", project], project);
    expect(typecheck.code, typecheck.stdout + typecheck.stderr).toBe(0);
    const tests = await run(join(repo, "node_modules/vitest/vitest.mjs"), ["run", "--root", project], project, 120_000);
    expect(tests.code, tests.stdout + tests.stderr).toBe(0);
    expect(tests.stdout).toMatch(/Tests\s+2 passed \(2\)/);

    const crds = await run(bin, ["generate", "crds", "src/operator.ts"], project);
    expect(crds.code, crds.stderr).toBe(0);
    expect(crds.stdout).toContain("name: gadgets.gadgets.example.org");
  }, 180_000);
});
