/**
 * Capstan as a user installs it: the packed packages from a registry into an empty folder outside
 * this checkout, `capstan new` there, the project's `npm ci && npm test && npm run build`, then its
 * Dockerfile's stages run command by command (no Docker on these machines) and the image's command
 * started against the embedded API server, where the compiled operator does its work.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigMap, CustomResourceDefinition } from "capstan/core";
import { isEstablished, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listFiles, runDockerfile } from "../support/dockerfile-runner.ts";
import {
  type CommandResult,
  expectSuccess,
  newProject,
  type PackedPackages,
  packAndServe,
  runCommand,
} from "../support/packed-project.ts";

const repo = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

let packages: PackedPackages;
let work: string;
let project: string;
let created: CommandResult;
let cluster: TestCluster | undefined;
let operator: ChildProcess | undefined;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "capstan-packaging-"));
  packages = await packAndServe();
  ({ dir: project, created } = await newProject(packages, join(work, "home"), "widget-operator", [
    "--group",
    "widgets.example.org",
  ]));
}, 600_000);

afterAll(async () => {
  if (operator && operator.exitCode === null) operator.kill("SIGKILL");
  await cluster?.stop();
  await packages?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

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
  });

  it("passes npm ci, npm test (its own code type-checked against capstan's .d.ts) and npm run build", async () => {
    expectSuccess("npm ci", await runCommand("npm", ["ci"], project, packages.env));
    const test = expectSuccess("npm test", await runCommand("npm", ["test"], project, packages.env));
    expect(test.stdout).toMatch(/Tests\s+2 passed \(2\)/);
    expectSuccess("npm run build", await runCommand("npm", ["run", "build"], project, packages.env));
    const built = listFiles(join(project, "dist"));
    expect(built).toContain("operator.js");
    expect(built.filter((f) => f.includes(".test."))).toEqual([]);
  }, 300_000);

  it("builds, by its Dockerfile's own commands, an image of compiled JavaScript and production dependencies that runs as non-root", async () => {
    const dockerfile = readFileSync(join(project, "Dockerfile"), "utf8");
    const image = await runDockerfile(dockerfile, project, join(work, "image"), packages.env);
    expect(image.stages.map((s) => s.name)).toEqual(["build", "deps", undefined]);
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
    await cluster.waitFor(CustomResourceDefinition, "widgets.widgets.example.org", isEstablished, { timeout: "30s" });
    await cluster.kubectl(["apply", "-f", join(project, "manifests/widget.yaml")]);
    const cm = await cluster.waitFor(ConfigMap, "default/hello-message", (c) => c.data?.message !== undefined, {
      timeout: "30s",
    });
    expect(cm.data?.message).toBe("hello from widget-operator");
    expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Widget", name: "hello", controller: true });
    operator.kill("SIGTERM");
    expect(await exited, output).toBe(0);
  }, 300_000);
});
