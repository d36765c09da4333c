/**
 * `capstan apiserver` authorizes with RBAC, as every real cluster does (kubectl auth can-i --as answers
 * no for a bare ServiceAccount); `--rbac`, which once turned it on, is still accepted.
 */
import { type ChildProcess, execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startApiserverProcess, stopApiserverProcess } from "../support/apiserver-process.ts";

/** kubectl answers in well under a second; one that runs this long is stuck. */
const KUBECTL_TIMEOUT_MS = 20_000;

let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  await stopApiserverProcess(child);
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: `${kubeconfig}.cache`, HOME: dir! };
    execFile("kubectl", args, { env, timeout: KUBECTL_TIMEOUT_MS }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

async function start(args: string[]): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), "capstan-rbac-cli-"));
  const kubeconfig = join(dir, "kc");
  await startApiserverProcess(kubeconfig, args, (spawned) => {
    child = spawned;
  });
  return kubeconfig;
}

describe("capstan apiserver", () => {
  it.each<[string, string[]]>([
    ["without flags", []],
    ["with the old --rbac", ["--rbac"]],
  ])(
    "authorizes with RBAC %s: a ServiceAccount without bindings may not create configmaps, the admin may",
    async (_, args) => {
      const kubeconfig = await start(args);
      const sa = await kubectl(kubeconfig, [
        "auth",
        "can-i",
        "create",
        "configmaps",
        "-n",
        "default",
        "--as=system:serviceaccount:default:nobody",
      ]);
      expect(sa).toMatchObject({ code: 1, stdout: "no\n" });
      const admin = await kubectl(kubeconfig, ["auth", "can-i", "create", "configmaps", "-n", "default"]);
      expect(admin).toMatchObject({ code: 0, stdout: "yes\n" });
    },
  );
});
