import { afterEach, describe, expect, it } from "vitest";
import { type ApiServer, type ClusterChange, startApiServer } from "../../packages/capstan-dev/src/devcluster/index.ts";

let server: ApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const CM = { group: "", version: "v1", plural: "configmaps" };

describe("in-process API", () => {
  it("creates, reads, lists and updates with HTTP semantics (409 on a stale resourceVersion)", async () => {
    server = await startApiServer({ builtinPlugins: false });
    const api = server.internals.api;
    const created = await api.create(CM, "default", { metadata: { name: "a", labels: { x: "1" } }, data: { k: "v" } });
    expect(created.metadata?.["uid"]).toBeDefined();
    expect(api.get(CM, "default", "a").data).toEqual({ k: "v" });
    expect(api.list(CM, "default", { labelSelector: "x=1" }).items).toHaveLength(1);
    expect(api.tryGet(CM, "default", "missing")).toBeUndefined();
    const updated = await api.update(CM, "default", "a", { ...created, data: { k: "v2" } });
    await expect(api.update(CM, "default", "a", { ...created, data: { k: "v3" } })).rejects.toMatchObject({
      code: 409,
    });
    expect(updated.data).toEqual({ k: "v2" });
  });

  it("modify() retries a read-modify-write that lost a race, and leaves the object when told to", async () => {
    server = await startApiServer({ builtinPlugins: false });
    const api = server.internals.api;
    await api.create(CM, "default", { metadata: { name: "race" }, data: { n: "0" } });
    let raced = false;
    const result = await api.modify(CM, "default", "race", (current) => {
      if (!raced) {
        raced = true;
        // Another writer gets in between this read and its write.
        void api.patch(CM, "default", "race", "application/merge-patch+json", { data: { other: "1" } });
      }
      return { ...current, data: { ...(current["data"] as object), n: "1" } };
    });
    expect(result?.["data"]).toEqual({ n: "1", other: "1" });
    expect(await api.modify(CM, "default", "race", () => undefined)).toBeUndefined();
  });

  it("subscribe() sees every change of every resource in revision order with old and new objects", async () => {
    server = await startApiServer({ builtinPlugins: false });
    const api = server.internals.api;
    const seen: ClusterChange[] = [];
    const stop = api.subscribe((c) => seen.push(c));
    const cm = await api.create(CM, "default", { metadata: { name: "s" } });
    await api.patch(CM, "default", "s", "application/merge-patch+json", { data: { a: "1" } });
    await api.create({ group: "", version: "v1", plural: "secrets" }, "default", { metadata: { name: "sec" } });
    await api.delete(CM, "default", "s");
    stop();
    expect(seen.map((c) => `${c.type} ${c.bucket} ${c.object.metadata?.["name"]}`)).toEqual([
      "ADDED /configmaps s",
      "MODIFIED /configmaps s",
      "ADDED /secrets sec",
      "DELETED /configmaps s",
    ]);
    expect(seen[1]!.old?.metadata?.["resourceVersion"]).toBe(cm.metadata?.["resourceVersion"]);
    const revisions = seen.map((c) => c.revision);
    expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
  });

  it("plugins start with the server and are stopped before it closes", async () => {
    const events: string[] = [];
    server = await startApiServer({
      builtinPlugins: false,
      plugins: [
        (ctx) => {
          events.push(`started with ${ctx.registry.all().length} resources`);
          ctx.signal.addEventListener("abort", () => events.push("signal aborted"));
          return () => {
            events.push("stopped");
          };
        },
      ],
    });
    expect(events[0]).toMatch(/^started with \d+ resources$/);
    await server.stop();
    server = undefined;
    expect(events.slice(1)).toEqual(["signal aborted", "stopped"]);
  });
});
