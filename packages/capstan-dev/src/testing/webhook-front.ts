/**
 * A loopback stand-in for the Service in front of a sharded operator's webhook servers: the API
 * server calls one address, and each connection goes to a replica still serving, as a Service's
 * endpoints follow the live pods. Used by `cluster.runSharded` (sharded-run.ts).
 *
 * ## Guarantees
 * - Bytes are forwarded as they are (TLS passes through): every replica serves the same
 *   certificate, so the API server sees one server whichever replica answers.
 * - A connection goes to the first replica `targets()` names that accepts it; one refused moves on
 *   to the next, so a replica stopping between the choice and the connect costs no request.
 * - `close()` ends every connection and the listener; afterwards nothing of it holds a socket.
 */
import { connect, createServer, type Socket } from "node:net";

/** A running front; see the module documentation. */
export interface WebhookFront {
  /** The port it listens on, on 127.0.0.1. */
  readonly port: number;
  close(): Promise<void>;
}

/** Starts a front forwarding to the ports `targets()` names at each connection (in order of preference). */
export async function startWebhookFront(targets: () => readonly number[]): Promise<WebhookFront> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const server = createServer((inbound) => {
    track(inbound);
    inbound.pause();
    const ports = [...targets()];
    const tryNext = (): void => {
      const port = ports.shift();
      if (port === undefined) {
        inbound.destroy();
        return;
      }
      const outbound = connect({ host: "127.0.0.1", port });
      track(outbound);
      // Not connected: that replica is gone; the next one is tried.
      outbound.once("error", () => {
        outbound.destroy();
        tryNext();
      });
      outbound.once("connect", () => {
        outbound.removeAllListeners("error");
        const end = () => {
          inbound.destroy();
          outbound.destroy();
        };
        outbound.on("error", end);
        inbound.on("error", end);
        outbound.once("close", end);
        inbound.once("close", end);
        inbound.pipe(outbound);
        outbound.pipe(inbound);
        inbound.resume();
      });
    };
    tryNext();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("webhook front: no port");
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
