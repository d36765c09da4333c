import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { http } from "../kubectl/support/cluster.ts";

const cluster = fileFixture(() => startTestCluster());

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
    expect((await http(cluster, "POST", "/api/v1/namespaces", { metadata: { name: "doomed" } })).status).toBe(201);
    for (const body of [
      { metadata: { name: "plain" } },
      { metadata: { name: "held", finalizers: ["example.com/hold"] } },
    ]) {
      expect((await http(cluster, "POST", "/api/v1/namespaces/doomed/configmaps", body)).status).toBe(201);
    }
    expect((await http(cluster, "POST", "/api/v1/namespaces/doomed/secrets", { metadata: { name: "s" } })).status).toBe(
      201,
    );

    const del = await http(cluster, "DELETE", "/api/v1/namespaces/doomed");
    expect(del.status).toBe(200);
    expect((del.body as Ns).status?.phase).toBe("Terminating");

    const waiting = await waitUntil(async () => {
      const ns = (await http(cluster, "GET", "/api/v1/namespaces/doomed")).body as Ns;
      const remaining = ns.status?.conditions?.find((c) => c.type === "NamespaceContentRemaining");
      return remaining?.status === "True" &&
        (await http(cluster, "GET", "/api/v1/namespaces/doomed/secrets/s")).status === 404
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
    expect((await http(cluster, "GET", "/api/v1/namespaces/doomed/configmaps/plain")).status).toBe(404);

    // No new content while terminating.
    const refused = await http(cluster, "POST", "/api/v1/namespaces/doomed/configmaps", { metadata: { name: "late" } });
    expect(refused.status).toBe(403);

    const release = await http(
      cluster,
      "PATCH",
      "/api/v1/namespaces/doomed/configmaps/held",
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    expect(release.status, release.text).toBe(200);
    await waitUntil(async () => (await http(cluster, "GET", "/api/v1/namespaces/doomed")).status === 404);
  });

  it("removes an empty namespace at once after marking it", async () => {
    expect((await http(cluster, "POST", "/api/v1/namespaces", { metadata: { name: "empty" } })).status).toBe(201);
    expect((await http(cluster, "DELETE", "/api/v1/namespaces/empty")).status).toBe(200);
    await waitUntil(async () => (await http(cluster, "GET", "/api/v1/namespaces/empty")).status === 404);
  });
});
