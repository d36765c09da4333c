import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const exec = promisify(execFile);
const bin = new URL("../../packages/capstan/bin/capstan.js", import.meta.url).pathname;

describe("capstan command", () => {
  it("lists its commands on --help", async () => {
    const { stdout } = await exec(process.execPath, [bin, "--help"]);
    expect(stdout).toMatch(/^Usage: capstan <command>/);
    for (const command of ["apiserver", "dev", "run", "generate"]) expect(stdout).toContain(command);
  });

  it("exits 2 and names an unknown command", async () => {
    const err = await exec(process.execPath, [bin, "frobnicate"]).catch((e: { code: number; stderr: string }) => e);
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr).toContain('unknown command "frobnicate"');
  });
});
