/**
 * `capstan vendor`: how a project on a checkout's packages takes a newer checkout's, and how a
 * project pointing into a checkout is fixed; the npm install it runs, with tiny stand-in packages (a
 * vendored project's npm ci, build and image are in test/packaging/new-project.test.ts).
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function capstan(args: string[], cwd: string): Promise<Result> {
  return new Promise((resolve) => {
    const env = {
      ...process.env,
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
    };
    execFile(process.execPath, [bin, ...args], { cwd, timeout: 120_000, env }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

function packs(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

/** A tarball as npm pack lays one out (`package/...`), of a package exporting `build`. */
function tarball(into: string, name: string, version: string, build: string): void {
  const src = join(into, `${name}-src`, "package");
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, "package.json"), JSON.stringify({ name, version, main: "index.js" }));
  writeFileSync(join(src, "index.js"), `module.exports = ${JSON.stringify(build)};\n`);
  execFileSync("tar", ["-czf", join(into, `${name}-${version}.tgz`), "-C", join(into, `${name}-src`), "package"]);
  rmSync(join(into, `${name}-src`), { recursive: true });
}

function manifest(project: string): { dependencies: Record<string, string>; devDependencies: Record<string, string> } {
  return JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-vendor-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("capstan vendor", () => {
  it("replaces the vendored tarballs with a newer checkout's and points package.json at them", async () => {
    const old = packs(join(dir, "old"), { "capstan-9.0.0.tgz": "old capstan", "capstan-dev-9.0.0.tgz": "old dev" });
    const created = await capstan(
      [
        "new",
        "upgraded-operator",
        "--capstan",
        `file:${old}/capstan-9.0.0.tgz`,
        "--capstan-dev",
        `file:${old}/capstan-dev-9.0.0.tgz`,
        "--skip-install",
      ],
      dir,
    );
    expect(created.code, created.stderr).toBe(0);
    const project = join(dir, "upgraded-operator");
    const newer = packs(join(dir, "newer"), { "capstan-9.1.0.tgz": "new capstan", "capstan-dev-9.1.0.tgz": "new dev" });

    const vendored = await capstan(["vendor", "--from", newer, "--skip-install"], project);
    expect(vendored.code, vendored.stderr).toBe(0);
    expect(vendored.stdout).toContain("Vendored capstan and capstan-dev 9.1.0");
    expect(vendored.stdout).toContain(
      "Next: npm install capstan@file:vendor/capstan-9.1.0.tgz capstan-dev@file:vendor/capstan-dev-9.1.0.tgz",
    );
    // The Dockerfile capstan new wrote already copies vendor/: nothing to regenerate.
    expect(vendored.stdout).not.toContain("regenerate");
    expect(readdirSync(join(project, "vendor")).sort()).toEqual(["capstan-9.1.0.tgz", "capstan-dev-9.1.0.tgz"]);
    expect(readFileSync(join(project, "vendor/capstan-9.1.0.tgz"), "utf8")).toBe("new capstan");
    const pkg = manifest(project);
    expect(pkg.dependencies).toEqual({ capstan: "file:vendor/capstan-9.1.0.tgz" });
    expect(pkg.devDependencies["capstan-dev"]).toBe("file:vendor/capstan-dev-9.1.0.tgz");
    expect(pkg.devDependencies.vitest).toBeDefined();
  });

  it("moves a project that points into a checkout into vendor/, and says when its Dockerfile needs regenerating", async () => {
    const checkout = join(dir, "checkout");
    mkdirSync(join(checkout, "packages/capstan"), { recursive: true });
    writeFileSync(join(checkout, "packages/capstan/package.json"), '{ "name": "capstan", "version": "9.3.0" }\n');
    // An older version left in .packs/ is not taken: the checkout's packages say which.
    packs(join(checkout, ".packs"), {
      "capstan-9.2.0.tgz": "older",
      "capstan-9.3.0.tgz": "capstan",
      "capstan-dev-9.3.0.tgz": "dev",
    });
    const project = join(dir, "pointing");
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      `${JSON.stringify(
        {
          name: "pointing",
          dependencies: { capstan: `file:${checkout}/.packs/capstan-9.2.0.tgz` },
          devDependencies: { "capstan-dev": `file:${checkout}/.packs/capstan-dev-9.2.0.tgz` },
        },
        null,
        4,
      )}\n`,
    );
    writeFileSync(join(project, "Dockerfile"), "FROM node:20\nCOPY package.json package-lock.json ./\nRUN npm ci\n");
    const vendored = await capstan(["vendor", "--from", checkout, "--skip-install"], project);
    expect(vendored.code, vendored.stderr).toBe(0);
    expect(vendored.stdout).toContain("The Dockerfile does not copy vendor/ before npm ci: regenerate it");
    expect(readdirSync(join(project, "vendor")).sort()).toEqual(["capstan-9.3.0.tgz", "capstan-dev-9.3.0.tgz"]);
    const text = readFileSync(join(project, "package.json"), "utf8");
    expect(text).toContain('\n    "dependencies"');
    expect(JSON.parse(text).dependencies).toEqual({ capstan: "file:vendor/capstan-9.3.0.tgz" });
    // Files outside the project are never removed.
    expect(existsSync(join(checkout, ".packs/capstan-9.2.0.tgz"))).toBe(true);
  });

  it("installs the new tarballs, updating the lock file even for a rebuild of the same version", async () => {
    const project = join(dir, "installed");
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      `${JSON.stringify({ name: "installed", private: true, dependencies: { capstan: "^9.0.0" }, devDependencies: { "capstan-dev": "^9.0.0" } }, null, 2)}\n`,
    );
    const first = join(dir, "build-1");
    const second = join(dir, "build-2");
    for (const [folder, build] of [
      [first, "first build"],
      [second, "second build"],
    ] as const) {
      mkdirSync(folder);
      tarball(folder, "capstan", "9.0.0", build);
      tarball(folder, "capstan-dev", "9.0.0", build);
    }
    const installed = () => ({
      capstan: readFileSync(join(project, "node_modules/capstan/index.js"), "utf8"),
      dev: readFileSync(join(project, "node_modules/capstan-dev/index.js"), "utf8"),
      lock: JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")).packages as Record<
        string,
        { resolved?: string; integrity?: string; dev?: boolean }
      >,
    });

    const one = await capstan(["vendor", "--from", first], project);
    expect(one.code, one.stderr).toBe(0);
    const before = installed();
    expect(before.capstan).toContain("first build");
    expect(before.lock["node_modules/capstan"]?.resolved).toBe("file:vendor/capstan-9.0.0.tgz");
    expect(before.lock["node_modules/capstan-dev"]).toMatchObject({
      resolved: "file:vendor/capstan-dev-9.0.0.tgz",
      dev: true,
    });

    // Same version, same file names, other contents: npm install without the specs would keep the
    // lock's integrity and install the first build again from npm's cache.
    const two = await capstan(["vendor", "--from", second], project);
    expect(two.code, two.stderr).toBe(0);
    const after = installed();
    expect(after.capstan).toContain("second build");
    expect(after.dev).toContain("second build");
    expect(after.lock["node_modules/capstan"]?.integrity).not.toBe(before.lock["node_modules/capstan"]?.integrity);
    expect(after.lock["node_modules/capstan-dev"]?.dev).toBe(true);
    expect(manifest(project).devDependencies).toEqual({ "capstan-dev": "file:vendor/capstan-dev-9.0.0.tgz" });
  }, 120_000);

  it("refuses a folder without one tarball of each package at one version, and a folder without a project, changing nothing", async () => {
    const project = join(dir, "upgraded-operator");
    const before = readFileSync(join(project, "package.json"), "utf8");
    const mixed = packs(join(dir, "mixed"), { "capstan-9.4.0.tgz": "a", "capstan-dev-9.5.0.tgz": "b" });
    const refused = await capstan(["vendor", "--from", mixed, "--skip-install"], project);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "must hold one capstan-<version>.tgz and one capstan-dev-<version>.tgz of the same version (found: capstan-9.4.0.tgz, capstan-dev-9.5.0.tgz)",
    );
    const unpacked = join(dir, "unpacked-checkout");
    mkdirSync(join(unpacked, "packages/capstan"), { recursive: true });
    writeFileSync(join(unpacked, "packages/capstan/package.json"), '{ "name": "capstan", "version": "9.6.0" }\n');
    const notPacked = await capstan(["vendor", "--from", unpacked, "--skip-install"], project);
    expect(notPacked.code).toBe(1);
    expect(notPacked.stderr).toContain(`has not packed its packages`);
    expect(notPacked.stderr).toContain(`run "npm run pack" there first`);
    expect(readFileSync(join(project, "package.json"), "utf8")).toBe(before);

    const nowhere = join(dir, "empty");
    mkdirSync(nowhere);
    const noProject = await capstan(["vendor", "--from", mixed], nowhere);
    expect(noProject.code).toBe(2);
    expect(noProject.stderr).toContain("no package.json");
    expect(readdirSync(nowhere)).toEqual([]);
  });
});
