/**
 * `kubectl logs` against the simulated kubelet: the apiserver's and the kubelet's answers (which
 * container, refusals with their messages), and an empty log for the containers that print nothing.
 */

import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, spawnKubectl } from "./support/cluster.ts";

let cluster: TestCluster;
let pod: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  const manifest = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "two", namespace: "default" },
    spec: {
      initContainers: [{ name: "setup", image: "busybox" }],
      containers: [
        { name: "app", image: "nginx" },
        { name: "sidecar", image: "busybox" },
      ],
    },
  };
  const created = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(manifest) });
  if (created.code !== 0) throw new Error(created.stderr);
  pod = "two";
  await waitUntil(async () => {
    const res = await cluster.kubectl(["get", "pod", pod, "-o", "jsonpath={.status.phase}"]);
    return res.stdout === "Running";
  });
});
afterAll(async () => {
  await cluster.stop();
});

describe("kubectl logs", () => {
  it("prints the (empty) log of a running container, picking the first one as kubectl does", async () => {
    const res = await cluster.kubectl(["logs", pod]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain('Defaulted container "app" out of: app, sidecar, setup (init)');
    const sidecar = await cluster.kubectl(["logs", pod, "-c", "sidecar"]);
    expect(sidecar.code, sidecar.stderr).toBe(0);
  });

  it("without a container, the API asks for one, naming the containers and init containers", async () => {
    const res = await cluster.kubectl(["get", "--raw", `/api/v1/namespaces/default/pods/${pod}/log`]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      "a container name must be specified for pod two, choose one of: [app sidecar] or one of the init containers: [setup]",
    );
    const status = await http(cluster, "GET", `/api/v1/namespaces/default/pods/${pod}/log`);
    expect(status.status).toBe(400);
    expect(status.body).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
  });

  it("refuses an unknown container and a previous container that never terminated", async () => {
    const unknown = await http(cluster, "GET", `/api/v1/namespaces/default/pods/${pod}/log?container=zz`);
    expect(unknown.status).toBe(400);
    expect((unknown.body as { message: string }).message).toBe("container zz is not valid for pod two");
    const previous = await cluster.kubectl(["logs", pod, "-c", "app", "--previous"]);
    expect(previous.code).not.toBe(0);
    expect(previous.stderr).toContain(
      'Error from server (BadRequest): previous terminated container "app" in pod "two" not found',
    );
  });

  it("answers 404 for a pod that does not exist", async () => {
    const res = await cluster.kubectl(["logs", "nope"]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('pods "nope" not found');
  });

  it("says a container is waiting to start, with the kubelet's reason", async () => {
    // A pod on a node the simulated kubelet does not run, its status written as a kubelet would.
    const manifest = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "waiting", namespace: "default" },
      spec: { nodeName: "elsewhere", containers: [{ name: "app", image: "nginx" }] },
    };
    expect((await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(manifest) })).code).toBe(0);
    const waitingStatus = (reason: string) =>
      JSON.stringify({
        status: {
          containerStatuses: [
            { name: "app", image: "nginx", imageID: "", ready: false, restartCount: 0, state: { waiting: { reason } } },
          ],
        },
      });
    for (const [reason, says] of [
      ["ContainerCreating", "ContainerCreating"],
      ["ImagePullBackOff", "trying and failing to pull image"],
    ]) {
      const patched = await cluster.kubectl([
        "patch",
        "pod",
        "waiting",
        "--subresource=status",
        "--type=merge",
        "-p",
        waitingStatus(reason!),
      ]);
      expect(patched.code, patched.stderr).toBe(0);
      const res = await cluster.kubectl(["logs", "waiting"]);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain(
        `Error from server (BadRequest): container "app" in pod "waiting" is waiting to start: ${says}`,
      );
    }
  });

  it("follows a running container until the client goes away", async () => {
    const follow = spawnKubectl(cluster, ["logs", "-f", pod, "-c", "app"]);
    const outcome = await Promise.race([
      follow.exited.then(() => "exited"),
      new Promise((resolve) => setTimeout(() => resolve("following"), 1_000)),
    ]);
    expect(outcome).toBe("following");
    follow.kill();
    await follow.exited;
  });

  it("is read-only: writing to pods/log is 405", async () => {
    const res = await http(cluster, "POST", `/api/v1/namespaces/default/pods/${pod}/log`, {});
    expect(res.status).toBe(405);
  });
});
