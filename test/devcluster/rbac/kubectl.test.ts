/**
 * The real kubectl against an RBAC devcluster: `create token`, `auth can-i` under a ServiceAccount's
 * kubeconfig and with `--as` from the admin, `auth whoami`, and a Forbidden error as kubectl prints it.
 */

import { type KubectlOptions, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubectlAs, RBAC_CLUSTER } from "./support.ts";

let cluster: TestCluster;
let robot: KubectlOptions;
const SA = "system:serviceaccount:team:robot";

beforeAll(async () => {
  cluster = await startTestCluster(RBAC_CLUSTER);
  for (const args of [
    ["create", "namespace", "team"],
    ["create", "serviceaccount", "robot", "-n", "team"],
    ["create", "role", "cm-writer", "-n", "team", "--verb=create,get,list,watch", "--resource=configmaps"],
    ["create", "rolebinding", "robot-cm-writer", "-n", "team", "--role=cm-writer", "--serviceaccount=team:robot"],
  ]) {
    const res = await cluster.kubectl(args);
    if (res.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${res.stderr}`);
  }
  const token = await cluster.kubectl(["create", "token", "robot", "-n", "team"]);
  expect(token.stderr).toBe("");
  expect(token.code).toBe(0);
  robot = await kubectlAs(cluster, "robot", token.stdout.trim());
});
afterAll(async () => {
  await cluster.stop();
});

describe("kubectl with RBAC", () => {
  it("create token issues a token that authenticates as the ServiceAccount (auth whoami)", async () => {
    const res = await cluster.kubectl(["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], robot);
    expect(res.stderr).toBe("");
    expect(res.stdout).toBe(SA);
  });

  it("create token honours --duration and --audience (a token for another audience is not accepted here)", async () => {
    const res = await cluster.kubectl(["create", "token", "robot", "-n", "team", "--duration=20m", "--audience=vault"]);
    expect(res.code).toBe(0);
    const claims = JSON.parse(Buffer.from(res.stdout.trim().split(".")[1]!, "base64url").toString());
    expect(claims.exp - claims.iat).toBe(1200);
    expect(claims.aud).toEqual(["vault"]);
    expect(claims["kubernetes.io"].serviceaccount.name).toBe("robot");
    const other = await kubectlAs(cluster, "vault", res.stdout.trim());
    const denied = await cluster.kubectl(["auth", "whoami"], other);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("Unauthorized");
  });

  it("auth can-i under the ServiceAccount's kubeconfig says yes to what its Role allows", async () => {
    const res = await cluster.kubectl(["auth", "can-i", "create", "configmaps", "-n", "team"], robot);
    expect(res).toMatchObject({ code: 0, stdout: "yes\n" });
  });

  it("auth can-i says no (exit 1) to what it does not", async () => {
    const verb = await cluster.kubectl(["auth", "can-i", "delete", "configmaps", "-n", "team"], robot);
    expect(verb).toMatchObject({ code: 1, stdout: "no\n" });
    const elsewhere = await cluster.kubectl(["auth", "can-i", "create", "configmaps", "-n", "default"], robot);
    expect(elsewhere).toMatchObject({ code: 1, stdout: "no\n" });
  });

  it("auth can-i --as from the admin answers for the impersonated ServiceAccount", async () => {
    const yes = await cluster.kubectl(["auth", "can-i", "create", "configmaps", "-n", "team", `--as=${SA}`]);
    expect(yes).toMatchObject({ code: 0, stdout: "yes\n" });
    const no = await cluster.kubectl(["auth", "can-i", "create", "secrets", "-n", "team", `--as=${SA}`]);
    expect(no).toMatchObject({ code: 1, stdout: "no\n" });
    const admin = await cluster.kubectl(["auth", "can-i", "create", "secrets", "-n", "team"]);
    expect(admin).toMatchObject({ code: 0, stdout: "yes\n" });
  });

  it("prints the server's Forbidden message for a denied write", async () => {
    const res = await cluster.kubectl(["create", "configmap", "x", "-n", "default", "--from-literal=a=1"], robot);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `error: failed to create configmap: configmaps is forbidden: User "${SA}" cannot create resource "configmaps" in API group "" in the namespace "default"\n`,
    );
  });

  it("the ServiceAccount does what its Role allows through kubectl", async () => {
    const created = await cluster.kubectl(["create", "configmap", "mine", "-n", "team", "--from-literal=a=1"], robot);
    expect(created).toMatchObject({ code: 0, stdout: "configmap/mine created\n" });
    const got = await cluster.kubectl(["get", "configmap", "mine", "-n", "team", "-o", "jsonpath={.data.a}"], robot);
    expect(got).toMatchObject({ code: 0, stdout: "1" });
  });

  it("auth can-i on non-resource URLs follows the bootstrap discovery roles", async () => {
    expect(await cluster.kubectl(["auth", "can-i", "get", "/apis/apps"], robot)).toMatchObject({
      code: 0,
      stdout: "yes\n",
    });
    expect(await cluster.kubectl(["auth", "can-i", "get", "/metrics"], robot)).toMatchObject({
      code: 1,
      stdout: "no\n",
    });
  });

  it("auth can-i --list shows the Role's rules", async () => {
    const res = await cluster.kubectl(["auth", "can-i", "--list", "-n", "team"], robot);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^configmaps\s+\[\]\s+\[\]\s+\[create get list watch\]$/m);
    expect(res.stdout).toMatch(/^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
  });
});
