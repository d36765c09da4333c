/**
 * A Capstan project as a user gets one, outside this checkout: the packages are packed
 * (`npm run pack`), served by a local registry under their names and versions, installed into an
 * empty folder, and `capstan new` is run there. Used by the packaging test and by
 * `npm run bench:footprint`.
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type LocalRegistry, startLocalRegistry } from "./local-registry.ts";

const repo = new URL("../..", import.meta.url).pathname;

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `command` in `cwd`; never rejects (the result carries the exit code). */
export function runCommand(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 300_000,
): Promise<CommandResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Throws with the command's output unless it exited 0. */
export function expectSuccess(what: string, result: CommandResult): CommandResult {
  if (result.code !== 0) {
    throw new Error(`${what} exited ${result.code}\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`);
  }
  return result;
}

export interface PackedPackages {
  registry: LocalRegistry;
  /** The environment npm commands run with: the local registry, no colours, no update notices. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** Builds and packs both packages, and serves them from a local registry. */
export async function packAndServe(): Promise<PackedPackages> {
  const packed = expectSuccess(
    "npm run pack",
    await runCommand(process.execPath, ["scripts/pack.js"], repo, process.env),
  );
  const tarballs = packed.stdout.trim().split("\n");
  const registry = await startLocalRegistry(tarballs);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_registry: registry.url,
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    NO_COLOR: "1",
    FORCE_COLOR: "0",
  };
  // A project's own test must not inherit this workspace's vitest or Capstan test settings.
  for (const key of Object.keys(env)) if (key.startsWith("VITEST") || key === "CAPSTAN_TEST_LOG") delete env[key];
  delete env.NODE_OPTIONS;
  return { registry, env, close: () => registry.close() };
}

/**
 * Installs the packed capstan and capstan-dev into `home` (an empty folder, as `npm install` in a
 * fresh directory would), then runs `capstan new <name>` there, which installs the project.
 */
export async function newProject(
  packages: PackedPackages,
  home: string,
  name: string,
  args: string[] = [],
): Promise<{ dir: string; created: CommandResult }> {
  await mkdir(home, { recursive: true });
  await writeFile(join(home, "package.json"), `${JSON.stringify({ name: "home", private: true }, null, 2)}\n`);
  const versions = packages.registry.packages;
  expectSuccess(
    "npm install capstan capstan-dev",
    await runCommand(
      "npm",
      ["install", `capstan@${versions.capstan}`, `capstan-dev@${versions["capstan-dev"]}`],
      home,
      packages.env,
    ),
  );
  const created = expectSuccess(
    "capstan new",
    await runCommand("npx", ["--no-install", "capstan", "new", name, ...args], home, packages.env),
  );
  return { dir: join(home, name), created };
}
