/**
 * A server started with `rbac: false` (the explicit opt-out for tests of the bare REST layer; no real
 * cluster runs it) authorizes as kube-apiserver's AlwaysAllow mode does, and still answers the
 * self-review APIs kubectl uses: `auth can-i`, `auth can-i --list`, `auth whoami`.
 */

import { startTestCluster } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { http } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ server: { rbac: false } }));

describe("self reviews without RBAC (AlwaysAllow)", () => {
  it("auth can-i says yes to anything, exit code 0", async () => {
    for (const args of [
      ["create", "pods"],
      ["delete", "customresourcedefinitions", "--all-namespaces"],
      ["get", "/healthz"],
    ]) {
      const res = await cluster.kubectl(["auth", "can-i", ...args]);
      expect(res.stderr, args.join(" ")).toBe("");
      expect(res.stdout.trim()).toBe("yes");
      expect(res.code).toBe(0);
    }
  });

  it("auth can-i --list lists * on every resource and URL, as AlwaysAllow's RulesFor does", async () => {
    const res = await cluster.kubectl(["auth", "can-i", "--list"]);
    expect(res.code, res.stderr).toBe(0);
    const rows = res.stdout
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s{2,}/));
    expect(rows).toEqual([
      ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"],
      ["*.*", "[]", "[]", "[*]"],
      ["[*]", "[]", "[*]"],
    ]);
  });

  it("auth whoami names the kubeconfig's user", async () => {
    const res = await cluster.kubectl(["auth", "whoami", "-o", "json"]);
    expect(res.code, res.stderr).toBe(0);
    const review = JSON.parse(res.stdout) as { kind: string; status: { userInfo: Record<string, unknown> } };
    expect(review.kind).toBe("SelfSubjectReview");
    expect(review.status.userInfo).toEqual({
      username: "capstan-admin",
      groups: ["system:masters", "system:authenticated"],
    });
  });

  it("a review is create-only: listing one is 405 MethodNotAllowed", async () => {
    const res = await http(cluster, "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
    expect(res.status).toBe(405);
    expect((res.body as { reason: string }).reason).toBe("MethodNotAllowed");
  });
});
