import type { ServerResponse } from "node:http";
import { connect, type TLSSocket } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import type { MemoryStorage } from "../../packages/capstan-dev/src/devcluster/storage/memory-storage.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";
let t: RawHttpCluster | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

/** Resolves once `condition` holds, polling; fails after `timeoutMs`. */
async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the bookmark before a watch's timeout", () => {
  it("comes 2 s before timeoutSeconds ends, with the default one-minute bookmark interval", async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    const created = await t.request("POST", CMS, { body: configMap("x") });
    const rv = created.body.metadata.resourceVersion;
    const w = await t.watch(`${CMS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=${rv}`);
    expect(await w.next(10_000)).toEqual({
      type: "BOOKMARK",
      object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: rv } },
    });
    // Then the stream ends at the timeout, without another bookmark.
    expect(await w.next(10_000)).toBeUndefined();
  });

  it("is not sent when the timeout leaves no 2 s for it, nor without allowWatchBookmarks", async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    const short = await t.watch(`${CMS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion=1`);
    const unasked = await t.watch(`${CMS}?watch=true&timeoutSeconds=3&resourceVersion=1`);
    expect(await short.next(10_000)).toBeUndefined();
    expect(await unasked.next(10_000)).toBeUndefined();
  });
});

describe("a watcher that stops reading", () => {
  it("is dropped and its socket destroyed, freeing what was buffered for it, while readers keep their events", async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    const watchResponses: ServerResponse[] = [];
    const stages = t.server.internals.stages;
    stages.splice(stages.length - 1, 0, (ctx, next) => {
      if (ctx.info.verb === "watch") watchResponses.push(ctx.res);
      return next();
    });
    const storage = t.server.internals.storage as MemoryStorage;
    const reader = await t.watch(`${CMS}?watch=true&resourceVersion=1`);
    const url = new URL(t.server.url);
    const paused: TLSSocket = await new Promise((resolve) => {
      const socket = connect({ host: url.hostname, port: Number(url.port), ca: t!.server.caPem }, () => {
        socket.write(
          `GET ${CMS}?watch=true&resourceVersion=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t!.server.token}\r\n\r\n`,
        );
        resolve(socket);
      });
    });
    paused.pause();
    paused.on("error", () => {});
    await until(() => watchResponses.length === 2, "both watches to be served");
    const stalled = watchResponses[1]!;
    const watchers = storage.watcherCount();

    // Up to 24 MiB of events: more than the kernel buffers of both ends, then more than the backlog limit.
    const data = { d: "x".repeat(512 * 1024) };
    let written = 0;
    for (; written < 48 && !stalled.destroyed; written++) {
      expect((await t.request("POST", CMS, { body: configMap(`big-${written}`, data) })).status).toBe(201);
    }
    await until(() => stalled.destroyed, "the stalled watch to be dropped");
    // The buffered events are released once the destroyed socket's pending write is cancelled.
    await until(() => stalled.writableLength === 0, "the dropped watch's buffer to be released");
    expect(stalled.socket?.destroyed ?? true).toBe(true);
    expect(storage.watcherCount()).toBe(watchers - 1);

    // The reading watcher was not dropped: it gets every event.
    let seen = 0;
    while (seen < written) {
      const e = await reader.next(20_000);
      if (e === undefined) break;
      if (e.type === "ADDED" && e.object.metadata.name.startsWith("big-")) seen++;
    }
    expect(seen).toBe(written);
    paused.destroy();
  });
});
