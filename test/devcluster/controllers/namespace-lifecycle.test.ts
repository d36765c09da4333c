import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestCluster, type TestCluster } from "../kubectl/support/cluster.ts";

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster.stop();
});

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
type Ns = {
  metadata: { deletionTimestamp?: string };
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: Condition[] };
};

describe("namespace deletion", () => {
  it("terminates, deletes content, waits for content finalizers with the real conditions, then removes the namespace", async () => {
    expect((await cluster.http("POST", "/api/v1/namespaces", { metadata: { name: "doomed" } })).status).toBe(201);
    for (const body of [
      { metadata: { name: "plain" } },
      { metadata: { name: "held", finalizers: ["example.com/hold"] } },
    ]) {
      expect((await cluster.http("POST", "/api/v1/namespaces/doomed/configmaps", body)).status).toBe(201);
    }
    expect((await cluster.http("POST", "/api/v1/namespaces/doomed/secrets", { metadata: { name: "s" } })).status).toBe(
      201,
    );

    const del = await cluster.http("DELETE", "/api/v1/namespaces/doomed");
    expect(del.status).toBe(200);
    expect((del.body as Ns).status?.phase).toBe("Terminating");

    const waiting = await eventually(async () => {
      const ns = (await cluster.http("GET", "/api/v1/namespaces/doomed")).body as Ns;
      const remaining = ns.status?.conditions?.find((c) => c.type === "NamespaceContentRemaining");
      return remaining?.status === "True" &&
        (await cluster.http("GET", "/api/v1/namespaces/doomed/secrets/s")).status === 404
        ? ns
        : undefined;
    });
    expect(waiting.spec?.finalizers).toEqual(["kubernetes"]);
    const byType = Object.fromEntries((waiting.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType["NamespaceContentRemaining"]).toMatchObject({
      status: "True",
      reason: "SomeResourcesRemain",
      message: "Some resources are remaining: configmaps. has 1 resource instances",
    });
    expect(byType["NamespaceFinalizersRemaining"]).toMatchObject({
      status: "True",
      reason: "SomeFinalizersRemain",
      message: "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
    });
    expect(byType["NamespaceDeletionDiscoveryFailure"]).toMatchObject({
      status: "False",
      reason: "ResourcesDiscovered",
      message: "All resources successfully discovered",
    });
    expect(byType["NamespaceDeletionContentFailure"]).toMatchObject({ status: "False", reason: "ContentDeleted" });
    expect(byType["NamespaceDeletionGroupVersionParsingFailure"]).toMatchObject({
      status: "False",
      reason: "ParsedGroupVersions",
    });
    expect((await cluster.http("GET", "/api/v1/namespaces/doomed/configmaps/plain")).status).toBe(404);

    // No new content while terminating.
    const refused = await cluster.http("POST", "/api/v1/namespaces/doomed/configmaps", { metadata: { name: "late" } });
    expect(refused.status).toBe(403);

    const release = await cluster.http(
      "PATCH",
      "/api/v1/namespaces/doomed/configmaps/held",
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    expect(release.status, release.text).toBe(200);
    await eventually(async () => (await cluster.http("GET", "/api/v1/namespaces/doomed")).status === 404);
  });

  it("removes an empty namespace at once after marking it", async () => {
    expect((await cluster.http("POST", "/api/v1/namespaces", { metadata: { name: "empty" } })).status).toBe(201);
    expect((await cluster.http("DELETE", "/api/v1/namespaces/empty")).status).toBe(200);
    await eventually(async () => (await cluster.http("GET", "/api/v1/namespaces/empty")).status === 404);
  });
});
