/**
 * An "existing cluster" for the kubeconfig backend's tests: `capstan apiserver` in a child process,
 * started once per test file, with the kubeconfig file it wrote and an admin client that looks from
 * outside at what the test clusters leave. Its fields are set in `beforeAll`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "capstan";
import { loadClientConfig } from "capstan/client";
import { afterAll, beforeAll } from "vitest";
import {
  type ApiserverProcess,
  startApiserverProcess,
  stopApiserverProcess,
} from "../../devcluster/support/apiserver-process.ts";

export interface ExternalCluster {
  dir: string;
  kubeconfig: string;
  apiserver: ApiserverProcess;
  admin: KubeClient;
}

export function externalCluster(prefix: string): ExternalCluster {
  const external = {} as ExternalCluster;
  beforeAll(async () => {
    external.dir = await mkdtemp(join(tmpdir(), prefix));
    external.kubeconfig = join(external.dir, "kubeconfig");
    external.apiserver = await startApiserverProcess(external.kubeconfig);
    external.admin = new KubeClient(loadClientConfig({ kubeconfig: external.kubeconfig }));
  });
  afterAll(async () => {
    await external.admin?.close();
    await stopApiserverProcess(external.apiserver?.child);
    if (external.dir) await rm(external.dir, { recursive: true, force: true });
  });
  return external;
}
