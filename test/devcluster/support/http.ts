/**
 * A test cluster of `capstan-dev/testing` reached over raw HTTPS, for tests of the devcluster's own
 * REST behaviour: requests with the server's CA and admin token (or another token, or none), raw
 * bodies, JSON decoding, and a line-by-line watch reader. Talks to the server only over HTTP, as
 * kubectl would.
 */
import { startTestCluster, type TestCluster, type TestClusterOptions } from "capstan-dev/testing";
import { Agent, request } from "undici";

type ApiServer = TestCluster["server"];
type ApiServerOptions = NonNullable<TestClusterOptions["server"]>;

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  body: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body, sent as is (for malformed-input tests). */
  raw?: string | Buffer;
  contentType?: string;
  accept?: string;
  token?: string | null;
  /** Further request headers (e.g. a User-Agent). */
  headers?: Record<string, string>;
}

export interface WatchEventLine {
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  object: any;
}

export interface WatchStream {
  status: number;
  /** The next event, or undefined when the stream ended. Rejects after `timeoutMs` without an event. */
  next(timeoutMs?: number): Promise<WatchEventLine | undefined>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** A cluster and its raw HTTPS client. */
export interface RawHttpCluster {
  /** The test cluster itself (its typed client, kubectl, faults). */
  cluster: TestCluster;
  server: ApiServer;
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  watch(path: string, options?: { accept?: string; headers?: Record<string, string> }): Promise<WatchStream>;
  stop(): Promise<void>;
}

/**
 * Starts a test cluster with `options` as its server's options (`builtinPlugins: false` for the bare
 * REST layer, `historySize`, `dataDir`, ...) and returns a raw HTTPS client for it. Stop it in
 * afterEach/afterAll.
 */
export async function startRawHttpCluster(options: ApiServerOptions = {}): Promise<RawHttpCluster> {
  const cluster = await startTestCluster({ server: options });
  const server = cluster.server;
  const agent = new Agent({ connect: { ca: server.caPem }, connections: 64 });
  const openWatches = new Set<WatchStream>();

  const send = async (method: string, path: string, o: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? server.token : o.token;
    if (token !== null) headers["authorization"] = `Bearer ${token}`;
    if (o.accept) headers["accept"] = o.accept;
    let body: string | Buffer | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
    if (body !== undefined) headers["content-type"] = o.contentType ?? "application/json";
    const res = await request(`${server.url}${path}`, { method: method as "GET", headers, body, dispatcher: agent });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, headers: res.headers, text, body: parsed };
  };

  const watch = async (
    path: string,
    o: { accept?: string; headers?: Record<string, string> } = {},
  ): Promise<WatchStream> => {
    const controller = new AbortController();
    const headers: Record<string, string> = { ...o.headers, authorization: `Bearer ${server.token}` };
    if (o.accept) headers["accept"] = o.accept;
    const res = await request(`${server.url}${path}`, {
      method: "GET",
      headers,
      dispatcher: agent,
      signal: controller.signal,
    });
    const queue: WatchEventLine[] = [];
    const waiters: ((e: WatchEventLine | undefined) => void)[] = [];
    let done = false;
    let buffer = "";
    let resolveEnded!: () => void;
    const ended = new Promise<void>((r) => {
      resolveEnded = r;
    });
    const finish = () => {
      done = true;
      resolveEnded();
      for (const w of waiters.splice(0)) w(undefined);
    };
    (async () => {
      try {
        for await (const chunk of res.body) {
          buffer += (chunk as Buffer).toString("utf8");
          let nl = buffer.indexOf("\n");
          while (nl >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim() !== "") {
              const event = JSON.parse(line) as WatchEventLine;
              const waiter = waiters.shift();
              if (waiter) waiter(event);
              else queue.push(event);
            }
            nl = buffer.indexOf("\n");
          }
        }
      } catch {
        // aborted by close()
      }
      finish();
    })();
    const stream: WatchStream = {
      status: res.statusCode,
      ended,
      next: (timeoutMs = 5000) => {
        const queued = queue.shift();
        if (queued) return Promise.resolve(queued);
        if (done) return Promise.resolve(undefined);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => {
            const i = waiters.indexOf(waiter);
            if (i >= 0) waiters.splice(i, 1);
            reject(new Error(`no watch event within ${timeoutMs} ms`));
          }, timeoutMs);
          const waiter = (e: WatchEventLine | undefined) => {
            clearTimeout(timer);
            resolve(e);
          };
          waiters.push(waiter);
        });
      },
      close: () => {
        controller.abort();
        openWatches.delete(stream);
      },
    };
    openWatches.add(stream);
    return stream;
  };

  return {
    cluster,
    server,
    request: send,
    watch,
    stop: async () => {
      for (const w of openWatches) w.close();
      await cluster.stop();
      await agent.close();
    },
  };
}

/** A ConfigMap body. */
export function configMap(
  name: string,
  data: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): object {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...extra }, data };
}
