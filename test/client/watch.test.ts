import { spawn } from "node:child_process";
import { PassThrough, Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError, isForbidden, isGone } from "../../packages/capstan/src/client/errors.ts";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { WatchEvent } from "../../packages/capstan/src/client/types.ts";
import { decodeWatchStream } from "../../packages/capstan/src/client/watch-stream.ts";
import { type ConfigMap, ConfigMapKind, clientFor } from "./support/client.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "./support/recording-https-server.ts";

/** A body (a Readable, like the transport's response) that emits exactly the given chunks; `destroyed` says whether it was destroyed. */
function fakeBody(chunks: Buffer[]): Readable {
  // No autoDestroy: `destroyed` then proves the decoder destroyed the body, not that it ended.
  return Readable.from(chunks, { objectMode: false, autoDestroy: false });
}

const line = (type: string, name: string, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ type, object: { kind: "ConfigMap", metadata: { name, resourceVersion: "1" }, ...extra } })}\n`;

describe("watch stream decoding", () => {
  it("reassembles events split across chunks, including a multi-byte character cut in half", async () => {
    const text = line("ADDED", "a", { data: { k: "héllo ✓" } }) + line("MODIFIED", "b") + line("DELETED", "c");
    const bytes = Buffer.from(text, "utf8");
    const cut = bytes.indexOf(Buffer.from("✓", "utf8")) + 1; // inside the 3-byte character
    const chunks = [
      bytes.subarray(0, 5),
      bytes.subarray(5, cut),
      bytes.subarray(cut, cut + 1),
      bytes.subarray(cut + 1),
    ];
    const body = fakeBody(chunks);
    const events: WatchEvent<ConfigMap>[] = [];
    for await (const e of decodeWatchStream<ConfigMap>(body)) events.push(e);
    expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(["ADDED a", "MODIFIED b", "DELETED c"]);
    expect((events[0]!.object as ConfigMap).data?.k).toBe("héllo ✓");
    expect(body.destroyed).toBe(true);
  });

  it("decodes a last event that has no trailing newline and many events in one chunk", async () => {
    const text = line("ADDED", "a") + line("ADDED", "b") + line("BOOKMARK", "c").trimEnd();
    const events: string[] = [];
    for await (const e of decodeWatchStream(fakeBody([Buffer.from(text)]))) events.push(e.type);
    expect(events).toEqual(["ADDED", "ADDED", "BOOKMARK"]);
  });

  it("throws an ApiError with the Status of an ERROR event", async () => {
    const err = `${JSON.stringify({ type: "ERROR", object: status(410, "Expired", "too old resource version: 1 (5)") })}\n`;
    const body = fakeBody([Buffer.from(line("ADDED", "a") + err)]);
    const seen: string[] = [];
    const caught = await (async () => {
      for await (const e of decodeWatchStream(body)) seen.push(e.type);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["ADDED"]);
    expect(caught).toBeInstanceOf(ApiError);
    expect(isGone(caught)).toBe(true);
    expect(body.destroyed).toBe(true);
  });
  it("pauses the body while the consumer is far behind, and resumes it once the consumer caught up", async () => {
    const body = new PassThrough();
    const events = decodeWatchStream(body);
    // Written before anything is consumed: far more than the decoder keeps decoded ahead.
    for (let i = 0; i < 1500; i++) body.write(line("ADDED", `cm-${i}`));
    await delay(10);
    expect(body.isPaused()).toBe(true);
    let seen = 0;
    for (;;) {
      const r = await events.next();
      if (r.done) break;
      seen++;
      if (seen === 1500) {
        await delay(10);
        expect(body.isPaused()).toBe(false);
        body.end();
      }
    }
    expect(seen).toBe(1500);
  });

  it("ends quietly when the connection drops mid-stream, after the events that arrived", async () => {
    const body = new PassThrough();
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of decodeWatchStream(body)) seen.push(e.object.metadata?.name ?? "");
    })();
    body.write(line("ADDED", "a"));
    await delay(5);
    body.destroy(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
    await expect(done).resolves.toBeUndefined();
    expect(seen).toEqual(["a"]);
  });

  it("ends quietly when the body is destroyed without an error (its pool closed), after the events that arrived", async () => {
    const body = new PassThrough();
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of decodeWatchStream(body)) seen.push(e.object.metadata?.name ?? "");
    })();
    body.write(line("ADDED", "a") + line("MODIFIED", "a"));
    await delay(5);
    body.destroy(); // 'close' only: no 'end', no 'error'
    await expect(done).resolves.toBeUndefined();
    expect(seen).toEqual(["a", "a"]);
  });

  it("fails with other errors of the body, and stops and destroys the body when the consumer breaks", async () => {
    const failing = new PassThrough();
    const failed = (async () => {
      for await (const _ of decodeWatchStream(failing)) {
        // consume
      }
    })();
    failing.destroy(new Error("certificate has expired"));
    await expect(failed).rejects.toThrow("certificate has expired");

    const body = fakeBody([Buffer.from(line("ADDED", "a") + line("ADDED", "b"))]);
    for await (const _ of decodeWatchStream(body)) break;
    expect(body.destroyed).toBe(true);
  });
});

let server: RecordingHttpsServer;
let client: KubeClient;
beforeEach(async () => {
  server = await startRecordingHttpsServer();
  client = clientFor(server);
});
afterEach(async () => {
  await client.close();
  await server.close();
});

const path = "/api/v1/namespaces/ns1/configmaps";

describe("watch over HTTP", () => {
  it("sends the watch options as query parameters and yields events written in pieces", async () => {
    server.on("GET", path, async (_r, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const text = line("ADDED", "a") + line("MODIFIED", "a");
      for (let i = 0; i < text.length; i += 7) {
        res.write(text.slice(i, i + 7));
        await delay(1);
      }
      res.end();
    });
    const watch = await client.resource(ConfigMapKind, "ns1").watch({
      resourceVersion: "10",
      allowWatchBookmarks: true,
      labelSelector: "a=b",
      fieldSelector: "metadata.name=a",
      timeoutSeconds: 30,
    });
    const types: string[] = [];
    for await (const e of watch) types.push(e.type);
    expect(types).toEqual(["ADDED", "MODIFIED"]); // and the loop ended when the server closed the stream
    expect(Object.fromEntries(server.requests[0]!.query)).toEqual({
      watch: "true",
      resourceVersion: "10",
      allowWatchBookmarks: "true",
      labelSelector: "a=b",
      fieldSelector: "metadata.name=a",
      timeoutSeconds: "30",
    });
  });

  it("rejects the watch call itself with an ApiError when the server refuses it", async () => {
    server.on("GET", path, (_r, res) => json(res, 403, status(403, "Forbidden", "configmaps is forbidden")));
    const err = await client
      .resource(ConfigMapKind, "ns1")
      .watch({})
      .catch((e: unknown) => e);
    expect(isForbidden(err)).toBe(true);
  });

  it("releases the socket when the consumer breaks out early", async () => {
    server.on("GET", path, (_r, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line("ADDED", "a")); // and never ends
    });
    const watch = await client.resource(ConfigMapKind, "ns1").watch({});
    let closed = false;
    void server.requests[0]!.socketClosed.then(() => {
      closed = true;
    });
    for await (const e of watch) {
      expect(e.type).toBe("ADDED");
      expect(closed).toBe(false);
      break;
    }
    await server.requests[0]!.socketClosed; // hangs (test timeout) if the watch's connection stayed open
  });

  it("ends quietly, and frees the socket, when the signal aborts", async () => {
    server.on("GET", path, (_r, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line("ADDED", "a"));
    });
    const ac = new AbortController();
    const watch = await client.resource(ConfigMapKind, "ns1").watch({ signal: ac.signal });
    const types: string[] = [];
    for await (const e of watch) {
      types.push(e.type);
      setTimeout(() => ac.abort(), 5);
    }
    expect(types).toEqual(["ADDED"]);
    await server.requests[0]!.socketClosed;
  });

  it("ends a running watch when the client is closed", async () => {
    server.on("GET", path, (_r, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line("ADDED", "a"));
    });
    const watch = await client.resource(ConfigMapKind, "ns1").watch({});
    const done = (async () => {
      for await (const _ of watch) {
        // consume
      }
    })();
    await delay(5);
    await client.close();
    await expect(done).resolves.toBeUndefined();
  });
});

describe("close()", () => {
  it("leaves nothing open: a process that used the client and a watch exits on its own", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => json(res, 200, { metadata: { name: "a" } }));
    server.on("GET", path, (_r, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line("ADDED", "a"));
    });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", new URL("./support/close-child.ts", import.meta.url).pathname],
      {
        env: { ...process.env, TEST_SERVER_URL: server.url, TEST_SERVER_CA: server.pki.caPem },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => {
      // If close() leaked a socket or timer the child would never exit; give up well before the test timeout.
      const guard = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(-1);
      }, 20_000);
      child.on("exit", (c) => {
        clearTimeout(guard);
        resolve(c);
      });
    });
    expect(out).toContain("closed");
    expect(code).toBe(0);
  });
});
