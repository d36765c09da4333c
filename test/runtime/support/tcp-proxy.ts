/**
 * A loopback TCP proxy in front of the API server that a test can take down or freeze, for what
 * the server's own fault injection cannot do in process (docs/faults.md): a server that is gone
 * (connections reset, new ones refused, as after kill -9) and one that is frozen (connections
 * stay open, nothing is answered, as a SIGSTOPped process or a partition).
 *
 * - `down()`: every connection is destroyed and the port refuses new ones.
 * - `freeze()`: connections stay open and new ones are accepted, but no byte goes either way.
 * - `up()`: listens again on the same port; frozen traffic flows on.
 * - `stop()`: closes everything; nothing is left listening.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

type Mode = "up" | "down" | "frozen";

/** One client connection and its upstream, with what waits while frozen. */
interface Pair {
  client: Socket;
  upstream: Socket | undefined;
  toUpstream: Buffer[];
  toClient: Buffer[];
}

export class TcpProxy {
  private mode: Mode = "up";
  private readonly pairs = new Set<Pair>();
  private server: Server;
  port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = this.newServer();
  }

  /** Starts a proxy on a free loopback port to `target` (a URL such as `https://127.0.0.1:6443`). */
  static async start(target: string): Promise<TcpProxy> {
    const url = new URL(target);
    const proxy = new TcpProxy(url.hostname, Number(url.port));
    await proxy.listen(0);
    return proxy;
  }

  /** `https://127.0.0.1:<port>`: the server URL a client should use. */
  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Like a killed API server: connections reset, new ones refused. */
  async down(): Promise<void> {
    this.mode = "down";
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    this.pairs.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Like a frozen API server: connections stay open (new ones too), nothing is answered. */
  freeze(): void {
    this.mode = "frozen";
  }

  /** Serves again on the same port; what waited while frozen is delivered. */
  async up(): Promise<void> {
    const wasDown = this.mode === "down";
    this.mode = "up";
    if (wasDown) {
      this.server = this.newServer();
      await this.listen(this.port);
    }
    for (const p of this.pairs) this.flush(p);
  }

  /** Closes the listener and every connection. */
  async stop(): Promise<void> {
    if (this.mode !== "down") await this.down();
  }

  private newServer(): Server {
    return createServer((client) => this.accept(client));
  }

  private async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    const address = this.server.address();
    if (address !== null && typeof address === "object") this.port = address.port;
  }

  private accept(client: Socket): void {
    // Accepted as the listener closes: refused like the rest, or close() would wait for it to end.
    if (this.mode === "down") {
      client.destroy();
      return;
    }
    const pair: Pair = { client, upstream: undefined, toUpstream: [], toClient: [] };
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on("data", (chunk) => {
      pair.toUpstream.push(chunk);
      this.flush(pair);
    });
    client.on("close", end);
    client.on("error", end);
    this.flush(pair);
  }

  /** Connects upstream if needed and moves the queued bytes, unless frozen. */
  private flush(pair: Pair): void {
    if (this.mode !== "up") return;
    if (pair.upstream === undefined) {
      const upstream = connect(this.targetPort, this.targetHost);
      pair.upstream = upstream;
      const end = () => {
        this.pairs.delete(pair);
        pair.client.destroy();
        upstream.destroy();
      };
      upstream.on("data", (chunk) => {
        pair.toClient.push(chunk);
        this.flush(pair);
      });
      upstream.on("close", end);
      upstream.on("error", end);
    }
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
  }
}
