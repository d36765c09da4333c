/**
 * The manager's HTTP endpoints (node:http): `/healthz` and `/readyz` answered from named checks,
 * as controller-runtime's healthz handler does (200 `ok`, or 500 listing the failing checks;
 * `?verbose` lists every check; `/readyz/<name>` runs one check), and `/metrics` in Prometheus
 * text format. Several endpoints may share one port.
 *
 * ## Guarantees
 * - `stop()` closes the listener and every connection (keep-alive included): no socket is left.
 * - A check that throws or rejects counts as failing; it never crashes the server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A named health or readiness check: healthy when it returns true. */
export type Check = () => boolean | Promise<boolean>;

/** Serves one route prefix. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, subPath: string) => void | Promise<void>;

/**
 * Answers `/healthz`-style requests from `checks`, or from the checks a function returns at each
 * request (checks that come and go, such as one per informer).
 */
export function checksHandler(
  checkSource: ReadonlyMap<string, Check> | (() => ReadonlyMap<string, Check>),
): RouteHandler {
  return async (req, res, subPath) => {
    const checks = typeof checkSource === "function" ? checkSource() : checkSource;
    const url = new URL(req.url ?? "/", "http://localhost");
    const verbose = url.searchParams.has("verbose");
    // Check names may hold characters a URL escapes (an informer's label selector: `app in (a, b)`).
    const only = safeDecode(subPath.replace(/^\/+/, ""));
    const selected = only === "" ? [...checks] : [...checks].filter(([name]) => name === only);
    if (only !== "" && selected.length === 0) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`no such check: ${only}\n`);
      return;
    }
    const results = await Promise.all(
      selected.map(async ([name, check]) => {
        try {
          return [name, (await check()) === true] as const;
        } catch {
          return [name, false] as const;
        }
      }),
    );
    const failed = results.filter(([, ok]) => !ok);
    const status = failed.length === 0 ? 200 : 500;
    let body: string;
    if (failed.length === 0 && !verbose) body = "ok";
    else {
      body = results.map(([name, ok]) => (ok ? `[+]${name} ok` : `[-]${name} failed`)).join("\n");
      body += failed.length === 0 ? "\nhealthz check passed\n" : "\nhealthz check failed\n";
    }
    res
      .writeHead(status, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" })
      .end(body);
  };
}

/** `decodeURIComponent`, or the text as it is when it is not valid percent-encoding. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** One listening HTTP server with a set of route prefixes. */
export class HttpEndpoints {
  private readonly server: Server;
  private readonly routes: [string, RouteHandler][];
  private listening = false;

  constructor(routes: Record<string, RouteHandler>) {
    // Longest prefix first, so `/readyz/x` never lands on a shorter route.
    this.routes = Object.entries(routes).sort((a, b) => b[0].length - a[0].length);
    this.server = createServer((req, res) => {
      void this.dispatch(req, res);
    });
  }

  /** Listens on `port` (0 = a free one) and resolves with the port. */
  async listen(port: number, host?: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.listening = true;
    return (this.server.address() as AddressInfo).port;
  }

  /** The address and port it listens on (undefined before `listen`). */
  address(): { host: string; port: number } | undefined {
    const bound = this.server.address() as AddressInfo | null;
    return bound === null ? undefined : { host: bound.address, port: bound.port };
  }

  /** Closes the listener and every open connection. */
  async stop(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
        return;
      }
      for (const [prefix, handler] of this.routes) {
        if (path === prefix || path.startsWith(`${prefix}/`)) {
          await handler(req, res, path.slice(prefix.length));
          return;
        }
      }
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("404 page not found\n");
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end(`internal error: ${(err as Error).message}\n`);
    }
  }
}
