/**
 * Capstan as a user gets it, both ways: the packed packages from a registry into an empty folder
 * outside this checkout, and `capstan new` there (a project on version ranges); and `capstan new` run
 * from this checkout (a project holding the packed tarballs in vendor/), moved to another folder with
 * the checkout's tarballs hidden. The moved project runs `npm ci && npm test && npm run build`, then
 * its Dockerfile's stages run command by command (no Docker on these machines) and the image's
 * command is started against the embedded API server, where the compiled operator does its work.
 * The two projects differ only in their capstan and capstan-dev dependencies (and the Dockerfile's
 * `COPY vendor`), so the costly steps run once, on the one that can go wrong in more ways.
 *
 * Steps that do not depend on each other run at the same time (much of them waits on npm's network
 * and disk): the two `capstan new`, and the moved project's `npm ci && npm test && npm run build`
 * beside its Dockerfile's stages, which start in beforeAll from a copy of the project taken first (so
 * neither sees the other's node_modules or dist); the image's test awaits them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { cp, mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ConfigMap, CustomResourceDefinition } from "capstan/core";
import { isEstablished, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DockerfileRun, listFiles, runDockerfile } from "../support/dockerfile-runner.ts";
import {
  type CommandResult,
  expectSuccess,
  newProject,
  type PackedPackages,
  packAndServe,
  runCommand,
} from "../support/packed-project.ts";

const repo = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const packs = join(repo, ".packs");
/** Where .packs/ waits while the moved project runs, so nothing can reach the checkout's tarballs. */
const hiddenPacks = join(repo, `.packs-hidden-by-test-${process.pid}`);

let packages: PackedPackages;
let work: string;
let project: string;
let created: CommandResult;
/** The project `capstan new` made from the checkout, and where it was moved. */
let fromCheckout: { created: CommandResult; made: string; dir: string };
let cluster: TestCluster | undefined;
let operator: ChildProcess | undefined;
/** The moved project's Dockerfile's stages, run from a copy of it while the tests use the project itself. */
let imageBuild: Promise<DockerfileRun>;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "capstan-packaging-"));
  packages = await packAndServe();
  const fromRegistry = newProject(packages, join(work, "home"), "widget-operator", ["--group", "widgets.example.org"]);
  // The checkout's own capstan, as `npx capstan new` run in it; npm install (in capstan new) gets
  // everything but Capstan from the public registry, not from the one serving the packed packages.
  const made = join(work, "made");
  await mkdir(made);
  const env = { ...packages.env };
  delete env.npm_config_registry;
  const fromTheCheckout = runCommand(
    process.execPath,
    [join(repo, "packages/capstan/bin/capstan.js"), "new", "widget-operator", "--group", "widgets.example.org"],
    made,
    env,
  );
  const [registryProject, checkoutResult] = await Promise.allSettled([fromRegistry, fromTheCheckout]);
  if (registryProject.status === "rejected") throw registryProject.reason;
  if (checkoutResult.status === "rejected") throw checkoutResult.reason;
  ({ dir: project, created } = registryProject.value);
  const createdFromCheckout = expectSuccess("capstan new from the checkout", checkoutResult.value);
  const dir = join(work, "moved", "widget-operator");
  await mkdir(dirname(dir));
  await rename(join(made, "widget-operator"), dir);
  await rm(made, { recursive: true });
  fromCheckout = { created: createdFromCheckout, made: join(made, "widget-operator"), dir };
  renameSync(packs, hiddenPacks);

  // The image's build context, as the project is before anything ran in it.
  const context = join(work, "context", "widget-operator");
  await cp(dir, context, { recursive: true, verbatimSymlinks: true });
  imageBuild = runDockerfile(
    readFileSync(join(context, "Dockerfile"), "utf8"),
    context,
    join(work, "image"),
    packages.env,
  );
  // Awaited by its test; a failure is reported there, not as an unhandled rejection.
  imageBuild.catch(() => {});
}, 900_000);

afterAll(async () => {
  if (operator && operator.exitCode === null) operator.kill("SIGKILL");
  await cluster?.stop();
  await imageBuild?.catch(() => {}); // its npm commands use the registry and write under work/
  await packages?.close();
  // .packs/ back where it was, unless something packed a new one meanwhile.
  if (existsSync(hiddenPacks)) {
    if (existsSync(packs)) rmSync(hiddenPacks, { recursive: true, force: true });
    else renameSync(hiddenPacks, packs);
  }
  if (work) await rm(work, { recursive: true, force: true });
}, 120_000); // four projects' node_modules to remove

describe("a project made by capstan new from the packed packages", () => {
  it("depends on version ranges, with a complete lock file, and nothing points into the checkout", () => {
    const version = packages.registry.packages.capstan!;
    expect(created.stdout).toContain(`kind Widget (widgets.example.org/v1alpha1), capstan ^${version}`);
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies).toEqual({ capstan: `^${version}` });
    expect(pkg.devDependencies["capstan-dev"]).toBe(`^${version}`);
    const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string; dev?: boolean; dependencies?: Record<string, string> }>;
    };
    // Capstan's own dependencies are in the lock, so `npm ci --omit=dev` can install them.
    expect(lock.packages["node_modules/capstan"]?.version).toBe(version);
    expect(lock.packages["node_modules/capstan"]?.dev).toBeUndefined();
    for (const dep of Object.keys(lock.packages["node_modules/capstan"]?.dependencies ?? {})) {
      expect(lock.packages[`node_modules/${dep}`], dep).toBeDefined();
    }
    expect(lock.packages["node_modules/capstan-dev"]?.dev).toBe(true);
    for (const file of listFiles(project, (p) => p === "node_modules")) {
      const text = readFileSync(join(project, file), "utf8");
      expect(text.includes(repo), `${file} mentions ${repo}`).toBe(false);
      expect(/"file:/.test(text), `${file} has a file: dependency`).toBe(false);
    }
    expect(readFileSync(join(project, "Dockerfile"), "utf8")).not.toContain("vendor");
    // capstan new's npm install: esbuild's install script is allowed by the project's package.json.
    expect(created.stderr).not.toContain("install-scripts");
  });
});

describe("a project made by capstan new from this checkout, moved elsewhere with the checkout's tarballs hidden", () => {
  it("holds the packed tarballs in vendor/, named by relative paths in package.json and the lock file", () => {
    const version = packages.registry.packages.capstan!;
    const { created, dir } = fromCheckout;
    expect(created.stdout).toContain(`capstan file:vendor/capstan-${version}.tgz`);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies).toEqual({ capstan: `file:vendor/capstan-${version}.tgz` });
    expect(pkg.devDependencies["capstan-dev"]).toBe(`file:vendor/capstan-dev-${version}.tgz`);
    for (const name of ["capstan", "capstan-dev"]) {
      const tarball = `${name}-${version}.tgz`;
      expect(readFileSync(join(dir, "vendor", tarball)).equals(readFileSync(join(hiddenPacks, tarball))), tarball).toBe(
        true,
      );
    }
    const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as {
      packages: Record<string, { resolved?: string; dev?: boolean }>;
    };
    expect(lock.packages["node_modules/capstan"]?.resolved).toBe(`file:vendor/capstan-${version}.tgz`);
    expect(lock.packages["node_modules/capstan-dev"]).toMatchObject({
      resolved: `file:vendor/capstan-dev-${version}.tgz`,
      dev: true,
    });
    // Nothing names the checkout, nor the folder the project was made in.
    for (const file of listFiles(dir, (p) => p === "node_modules" || p === "vendor")) {
      const text = readFileSync(join(dir, file), "utf8");
      expect(text.includes(repo), `${file} mentions ${repo}`).toBe(false);
      expect(text.includes(fromCheckout.made), `${file} mentions ${fromCheckout.made}`).toBe(false);
      expect(text.includes(".packs"), `${file} mentions .packs`).toBe(false);
      for (const spec of text.match(/"file:[^"]*"/g) ?? []) expect(spec, file).toMatch(/^"file:vendor\//);
    }
    expect(existsSync(packs)).toBe(false);
  });

  it("passes npm ci (esbuild's install script allowed: no npm warning), npm test and npm run build", async () => {
    const dir = fromCheckout.dir;
    // An empty npm cache: npm answers a lock file's file: tarball from its cache by integrity even
    // when the file is gone, so the shared cache (which holds the checkout's tarballs) would hide a
    // path into the checkout.
    const cold = { ...packages.env, npm_config_cache: join(work, "npm-cache") };
    const ci = expectSuccess("npm ci", await runCommand("npm", ["ci"], dir, cold));
    expect(existsSync(join(dir, "node_modules/esbuild"))).toBe(true);
    expect(ci.stderr).not.toContain("install-scripts");
    const test = expectSuccess("npm test", await runCommand("npm", ["test"], dir, packages.env));
    expect(test.stdout).toMatch(/Tests\s+2 passed \(2\)/);
    expectSuccess("npm run build", await runCommand("npm", ["run", "build"], dir, packages.env));
    const built = listFiles(join(dir, "dist"));
    expect(built).toContain("operator.js");
    expect(built.filter((f) => f.includes(".test."))).toEqual([]);
  }, 600_000); // beside the image's build, on a shared 2-core machine

  it("builds, by its Dockerfile's own commands, an image of compiled JavaScript and production dependencies that runs as non-root", async () => {
    const dir = fromCheckout.dir;
    const image = await imageBuild;
    expect(image.stages.map((s) => s.name)).toEqual(["build", "deps", undefined]);
    // The build argument's default, the same image for every stage.
    expect(image.stages.map((s) => s.base)).toEqual(Array(3).fill("node:20-bookworm-slim"));
    expect(image.final.user).toBe("1000:1000");
    expect(image.command).toEqual([
      "node",
      "node_modules/capstan/bin/capstan.js",
      "run",
      "dist/operator.js",
      "--log-format=json",
    ]);
    const files = listFiles(
      image.finalDir,
      (p) => /^node_modules\/[^/]+\/./.test(p) && !p.startsWith("node_modules/capstan/"),
    );
    expect(files).toContain("dist/operator.js");
    expect(files).toContain("node_modules/capstan/bin/capstan.js");
    // The tarballs were needed by npm ci only: the runtime stage does not carry them.
    expect(files.some((f) => f.startsWith("vendor/"))).toBe(false);
    expect(files.filter((f) => !f.startsWith("node_modules/") && /\.ts$/.test(f))).toEqual([]);
    expect(files.some((f) => f.startsWith("src/"))).toBe(false);
    const modules = readdirSync(join(image.finalDir, "node_modules"));
    expect(modules).toContain("pino");
    for (const dev of ["tsx", "typescript", "vitest", "capstan-dev", "esbuild", "@types"]) {
      expect(modules, `${dev} in the image`).not.toContain(dev);
    }

    // The image's command, against the embedded API server.
    cluster = await startTestCluster();
    const [entry, ...args] = image.command;
    let output = "";
    operator = spawn(entry === "node" ? process.execPath : entry!, args, {
      cwd: image.finalDir,
      env: { ...packages.env, ...image.final.env, KUBECONFIG: cluster.kubeconfigPath },
      stdio: ["ignore", "pipe", "pipe"],
    });
    operator.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    operator.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => operator?.once("exit", (code) => resolve(code)));
    await cluster.waitFor(CustomResourceDefinition, "widgets.widgets.example.org", isEstablished, { timeout: "60s" });
    await cluster.kubectl(["apply", "-f", join(dir, "manifests/widget.yaml")]);
    const cm = await cluster.waitFor(ConfigMap, "default/hello-message", (c) => c.data?.message !== undefined, {
      timeout: "60s", // a compiled operator starting on a loaded 2-core machine
    });
    expect(cm.data?.message).toBe("hello from widget-operator");
    expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Widget", name: "hello", controller: true });
    operator.kill("SIGTERM");
    expect(await exited, output).toBe(0);
  }, 600_000); // the image's build (started in beforeAll) may still be running
});
