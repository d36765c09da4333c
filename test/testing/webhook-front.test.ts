import { connect, createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startWebhookFront, type WebhookFront } from "../../packages/capstan-dev/src/testing/webhook-front.ts";

/** A TCP server answering every line with its own name: which replica a connection reached. */
async function namedServer(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    socket.on("data", () => socket.end(name));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}

async function ask(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write("who?\n"));
    let answer = "";
    socket.on("data", (d) => {
      answer += d.toString();
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
  });
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("webhook front (cluster.runSharded's Service stand-in)", () => {
  it("forwards to the first target that accepts, skipping one that stopped listening", async () => {
    const a = await namedServer("a");
    const b = await namedServer("b");
    closers.push(() => new Promise((r) => b.server.close(() => r())));
    const front: WebhookFront = await startWebhookFront(() => [a.port, b.port]);
    closers.unshift(() => front.close());
    expect(await ask(front.port)).toBe("a");

    await new Promise<void>((r) => a.server.close(() => r()));
    expect(await ask(front.port)).toBe("b");
  });

  it("closes a connection no target accepts, and closes its listener on close()", async () => {
    const gone = await namedServer("gone");
    await new Promise<void>((r) => gone.server.close(() => r()));
    const front = await startWebhookFront(() => [gone.port]);
    expect(await ask(front.port)).toBe("");
    await front.close();
    await expect(ask(front.port)).rejects.toThrow(/ECONNREFUSED/);
  });
});
