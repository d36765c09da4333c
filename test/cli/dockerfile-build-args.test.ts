/**
 * The generated Dockerfile's `NODE_IMAGE` build argument, as `docker build --build-arg` gives it,
 * through the runner the packaging test builds images with (test/support/dockerfile-runner.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_IMAGE, dockerfile } from "../../packages/capstan/src/cli/dockerfile.ts";
import { runDockerfile } from "../support/dockerfile-runner.ts";

const machineMajor = process.versions.node.split(".")[0];

let context: string;
let into: string;

beforeAll(async () => {
  context = await mkdtemp(join(tmpdir(), "capstan-build-args-"));
  into = await mkdtemp(join(tmpdir(), "capstan-build-args-image-"));
  // A JavaScript operator whose one dependency is a folder of the project: `npm ci` fetches nothing.
  await mkdir(join(context, "lib"));
  await writeFile(join(context, "lib", "package.json"), JSON.stringify({ name: "lib", version: "1.0.0" }));
  const manifest = { name: "op", version: "1.0.0", type: "module", dependencies: { lib: "file:lib" } };
  await writeFile(join(context, "package.json"), JSON.stringify(manifest));
  const lock = {
    name: "op",
    version: "1.0.0",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "op", version: "1.0.0", dependencies: { lib: "file:lib" } },
      lib: { version: "1.0.0" },
      "node_modules/lib": { resolved: "lib", link: true },
    },
  };
  await writeFile(join(context, "package-lock.json"), JSON.stringify(lock));
  await writeFile(join(context, "operator.js"), "export default {};\n");
});

afterAll(async () => {
  await rm(context, { recursive: true, force: true });
  await rm(into, { recursive: true, force: true });
});

const text = () => dockerfile({ sourcePath: "operator.js", imagePath: "operator.js", outDir: undefined }, ["lib"]);

describe("the Dockerfile's NODE_IMAGE build argument", () => {
  it("puts every stage on its default without a build argument, and on the image given with one", async () => {
    const byDefault = await runDockerfile(text(), context, join(into, "default"));
    expect(byDefault.stages.map((s) => s.base)).toEqual([BASE_IMAGE, BASE_IMAGE]);
    const chosen = `node:${machineMajor}-bookworm`;
    const withArg = await runDockerfile(text(), context, join(into, "chosen"), process.env, { NODE_IMAGE: chosen });
    expect(withArg.stages.map((s) => s.base)).toEqual([chosen, chosen]);
    expect(withArg.command).toEqual([
      "node",
      "node_modules/capstan/bin/capstan.js",
      "run",
      "operator.js",
      "--log-format=json",
    ]);
  }, 120_000);

  it("refuses an image of another Node major than the machine's, which stands in for it", async () => {
    const other = `node:${Number(machineMajor) + 2}-bookworm-slim`;
    await expect(
      runDockerfile(text(), context, join(into, "other"), process.env, { NODE_IMAGE: other }),
    ).rejects.toThrow(`FROM ${other} is Node ${Number(machineMajor) + 2}, but this machine runs Node ${machineMajor}`);
  });
});
