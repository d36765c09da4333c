import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");
const capstanVersion = (
  JSON.parse(await readFile(join(repo, "packages/capstan/package.json"), "utf8")) as { version: string }
).version;
const devVersion = (
  JSON.parse(await readFile(join(repo, "packages/capstan-dev/package.json"), "utf8")) as { version: string }
).version;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function capstan(args: string[], options: { bin?: string; cwd?: string } = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [options.bin ?? bin, ...args],
      { cwd: options.cwd ?? repo, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

/** Expects exit 2, stderr = one line, a blank line, then the usage. */
function expectUsageError(outcome: Outcome, firstLine: string, usage: RegExp): void {
  expect(outcome.code).toBe(2);
  expect(outcome.stdout).toBe("");
  const [first, blank, ...rest] = outcome.stderr.split("\n");
  expect(first).toBe(firstLine);
  expect(blank).toBe("");
  expect(rest.join("\n")).toMatch(usage);
}

describe("capstan command", () => {
  it("lists its commands and options on --help, with the version", async () => {
    const { code, stdout } = await capstan(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: capstan <command>/);
    for (const command of ["apiserver", "dev", "run", "generate", "new", "version"]) expect(stdout).toContain(command);
    expect(stdout).toContain("-v, --version");
    expect(stdout.trimEnd().split("\n").at(-1)).toBe(`capstan ${capstanVersion}`);
  });

  it("prints capstan's and capstan-dev's versions for --version, -v and version", async () => {
    for (const args of [["--version"], ["-v"], ["version"]]) {
      const outcome = await capstan(args);
      expect(outcome).toEqual({
        code: 0,
        stdout: `capstan ${capstanVersion}\ncapstan-dev ${devVersion}\n`,
        stderr: "",
      });
    }
  });

  it("exits 2 with one line and the usage for an unknown command or option", async () => {
    expectUsageError(
      await capstan(["frobnicate"]),
      'capstan: unknown command "frobnicate"',
      /^Usage: capstan <command>/,
    );
    expectUsageError(
      await capstan(["--frobnicate"]),
      'capstan: unknown option "--frobnicate"',
      /^Usage: capstan <command>/,
    );
    expectUsageError(
      await capstan(["run", "op.ts", "--frobnicate"]),
      'capstan run: unknown option "--frobnicate"',
      /^Usage: capstan run <operator.ts>/,
    );
    expectUsageError(
      await capstan(["version", "extra"]),
      "capstan version: unexpected arguments: extra",
      /^Usage: capstan version/,
    );
  });
});

describe("capstan installed without capstan-dev", () => {
  let project: string;
  let installedBin: string;

  beforeAll(async () => {
    // A project whose node_modules has capstan (its bin, dist and package.json, copied: Node resolves
    // from a module's real path) and capstan's dependencies, but no capstan-dev anywhere above it.
    project = await mkdtemp(join(tmpdir(), "capstan-no-dev-"));
    const modules = join(project, "node_modules");
    const installed = join(modules, "capstan");
    await mkdir(installed, { recursive: true });
    for (const part of ["bin", "dist", "package.json"])
      await cp(join(repo, "packages/capstan", part), join(installed, part), { recursive: true });
    for (const name of await readdir(join(repo, "node_modules"))) {
      if (name === "capstan" || name === "capstan-dev") continue;
      await symlink(join(repo, "node_modules", name), join(modules, name));
    }
    installedBin = join(installed, "bin/capstan.js");
  });
  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it("prints capstan's version alone", async () => {
    expect(await capstan(["--version"], { bin: installedBin, cwd: project })).toEqual({
      code: 0,
      stdout: `capstan ${capstanVersion}\n`,
      stderr: "",
    });
  });

  it("says in one line how to install capstan-dev for a development command", async () => {
    const outcome = await capstan(["dev", "operator.ts"], { bin: installedBin, cwd: project });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe(
      `capstan: "capstan dev" is a development command, in the capstan-dev package: npm install --save-dev capstan-dev@${capstanVersion}\n`,
    );
  });
});
