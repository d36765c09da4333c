/**
 * `capstan new`: the arguments it refuses (writing nothing) and the files it writes. The project
 * installed from the packed packages, tested, built and run from its image is in
 * test/packaging/new-project.test.ts.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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
      [
        ["new", "ok-operator", "--kind", "CronJob"],
        /--kind CronJob collides with batch\/v1 CronJob: `kubectl get cronjobs` would show the built-in kind, not yours\. Choose another kind \(e\.g\. --kind ExampleCronJob\), or pass --allow-builtin-name and name the resource with its group: cronjobs\.example\.com/,
      ],
      [["new", "job-operator"], /the kind Job \(from the directory name "job-operator"\) collides with batch\/v1 Job/],
      // Same resource name as v1 Endpoints, though not the same kind.
      [
        ["new", "ok-operator", "--kind", "Endpoint"],
        /--kind Endpoint collides with v1 Endpoints: `kubectl get endpoints`/,
      ],
      [
        ["new", "ok-operator", "--kind", "Pod", "--group", "pods.example.org"],
        /collides with v1 Pod.*pods\.pods\.example\.org/,
      ],
    ];
    for (const [args, message] of cases) {
      const res = await run(bin, [...args, "--skip-install"], dir);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr).toMatch(message);
    }
    expect(readdirSync(dir)).toEqual([]);

    mkdirSync(join(dir, "taken"));
    writeFileSync(join(dir, "taken", "keep.txt"), "mine");
    const taken = await run(bin, ["new", "taken", "--capstan", "^1.0.0", "--capstan-dev", "^1.0.0"], dir);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain("is not empty (keep.txt...): nothing written");
    expect(readdirSync(join(dir, "taken"))).toEqual(["keep.txt"]);
  });

  it("writes a project that builds into an image, depending on the given packages, without installing when asked", async () => {
    const created = await run(
      bin,
      [
        "new",
        "gadget-operator",
        "--group",
        "gadgets.example.org",
        "--capstan",
        "^9.1.0",
        "--capstan-dev",
        "^9.1.0",
        "--skip-install",
      ],
      dir,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain("kind Gadget (gadgets.example.org/v1alpha1), capstan ^9.1.0");
    expect(created.stdout).toContain("cd gadget-operator && npm install");
    const project = join(dir, "gadget-operator");
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(pkg.dependencies).toEqual({ capstan: "^9.1.0" });
    expect(pkg.devDependencies).toMatchObject({ "capstan-dev": "^9.1.0", tsx: expect.any(String) });
    expect(pkg.scripts).toMatchObject({ dev: "capstan dev src/operator.ts", build: "tsc -p tsconfig.build.json" });
    expect(readdirSync(project).sort()).toEqual([
      ".dockerignore",
      ".gitignore",
      "Dockerfile",
      "README.md",
      "manifests",
      "package.json",
      "src",
      "tsconfig.build.json",
      "tsconfig.json",
      "vitest.config.ts",
    ]);
    expect(existsSync(join(project, "package-lock.json"))).toBe(false);
    expect(readFileSync(join(project, "Dockerfile"), "utf8")).toContain('CMD ["dist/operator.js","--log-format=json"]');
    expect(readFileSync(join(project, "Dockerfile"), "utf8")).not.toContain("vendor");
    // npm 11 lists every dependency whose install script package.json has not allowed.
    expect(JSON.parse(readFileSync(join(project, "package.json"), "utf8")).allowScripts).toEqual({ esbuild: true });
  });

  it("copies given tarballs into vendor/ and depends on them there, so the project and its image need nothing outside it", async () => {
    const packs = join(dir, "packs");
    mkdirSync(packs);
    writeFileSync(join(packs, "capstan-9.2.0.tgz"), "capstan bytes");
    writeFileSync(join(packs, "capstan-dev-9.2.0.tgz"), "capstan-dev bytes");
    const created = await run(
      bin,
      [
        "new",
        "vendored-operator",
        "--capstan",
        "file:packs/capstan-9.2.0.tgz",
        "--capstan-dev",
        // A bare path ending in .tgz, which npm reads as a file too.
        "packs/capstan-dev-9.2.0.tgz",
        "--skip-install",
      ],
      dir,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(
      `Copied ${join(packs, "capstan-9.2.0.tgz")}, ${join(packs, "capstan-dev-9.2.0.tgz")} into its vendor/`,
    );
    const project = join(dir, "vendored-operator");
    expect(readFileSync(join(project, "vendor/capstan-9.2.0.tgz"), "utf8")).toBe("capstan bytes");
    expect(readFileSync(join(project, "vendor/capstan-dev-9.2.0.tgz"), "utf8")).toBe("capstan-dev bytes");
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies).toEqual({ capstan: "file:vendor/capstan-9.2.0.tgz" });
    expect(pkg.devDependencies["capstan-dev"]).toBe("file:vendor/capstan-dev-9.2.0.tgz");
    // Both stages that run npm ci get vendor/ first, with the manifests.
    const dockerfile = readFileSync(join(project, "Dockerfile"), "utf8");
    expect(
      dockerfile.match(/COPY package.json package-lock.json \.\/\nCOPY vendor \.\/vendor\nRUN npm ci/g),
    ).toHaveLength(2);
    expect(readFileSync(join(project, "README.md"), "utf8")).toContain("npx capstan vendor --from <checkout>");

    const missing = await run(
      bin,
      ["new", "other-operator", "--capstan", "file:packs/nope.tgz", "--skip-install"],
      dir,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("file:packs/nope.tgz: no such tarball");
    expect(existsSync(join(dir, "other-operator"))).toBe(false);
  });

  it("accepts a built-in kind's name with --allow-builtin-name, and names the resource with its group in the README", async () => {
    const created = await run(
      bin,
      [
        "new",
        "cron-operator",
        "--kind",
        "CronJob",
        "--group",
        "batch.tutorial.example.org",
        "--allow-builtin-name",
        "--capstan",
        "^9.1.0",
        "--capstan-dev",
        "^9.1.0",
        "--skip-install",
      ],
      dir,
    );
    expect(created.code, created.stderr).toBe(0);
    const readme = readFileSync(join(dir, "cron-operator", "README.md"), "utf8");
    expect(readme).toContain("kubectl get cronjobs.batch.tutorial.example.org ");
    expect(readme).not.toMatch(/kubectl get cronjobs /);
    expect(readme).not.toContain("vendor");
  });
});
