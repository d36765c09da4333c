/**
 * `startDashboard`: the web page `capstan dev` serves beside the terminal, showing what objects
 * exist, what the operator did to them (events, children, status) and what it logged.
 *
 * ## Expected flow
 * ```ts
 * const logs = new LogFeed();                       // fed by the operators' output
 * const dashboard = await startDashboard({ kubeconfigPath, logs });
 * console.log(dashboard.url);                       // http://127.0.0.1:7150/?token=...
 * await dashboard.stop();
 * ```
 *
 * ## Guarantees
 * - Listens on a loopback address only (a non-loopback `host` is refused) and answers only
 *   requests whose `Host` header names that address or `localhost` (DNS-rebinding guard).
 * - Answers only requests carrying its access token (access-token.ts): `url` carries it, a browser
 *   that opened `url` once keeps it in a cookie; anything else gets 401.
 * - The requests it sends to the cluster are list, watch and get, and the writes a user makes in
 *   the page (create, update, delete, with fieldManager `capstan-dashboard`); with `readOnly`, only
 *   list, watch and get.
 * - `stop()` (or the `signal` aborting) ends every page stream, closes the server and its
 *   connections, stops every watch and timer, and closes the client when the dashboard built it;
 *   afterwards nothing of it keeps the process alive. It may be called more than once.
 *
 * ## Caveats
 * - It holds every object of the watched kinds in memory (see object-feed.ts): made for a
 *   development cluster.
 */
import { once, setMaxListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeClient } from "capstan";
import { loadClientConfig } from "capstan/client";
import { AccessGuard, newAccessToken, tokenUrl } from "./access-token.ts";
import { ClusterView } from "./cluster-view.ts";
import { allowedHostHeaders, isLoopbackHost } from "./host-guard.ts";
import { LogFeed } from "./log-feed.ts";
import { RunStore } from "./run-store.ts";
import { dashboardRoutes } from "./server.ts";

/** The host the dashboard listens on unless told otherwise. */
export const DEFAULT_DASHBOARD_HOST = "127.0.0.1";

/** Options of {@link startDashboard}: a `client`, or a `kubeconfigPath` to build one from. */
export interface DashboardOptions {
  /** The cluster to show, through this client (left open by `stop()`). */
  client?: KubeClient;
  /** The cluster to show, through a client built from this kubeconfig (closed by `stop()`). */
  kubeconfigPath?: string;
  /** A loopback host name or address (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: a free one). A busy port rejects with the listen error (`EADDRINUSE`). */
  port?: number;
  /** Where the logs panel's lines come from (default: a new, empty feed, returned as `logs`). */
  logs?: LogFeed;
  /** Stops the dashboard when aborted, as `stop()` does. */
  signal?: AbortSignal;
  /**
   * Where the reconcile timeline's runs come from (default: a new, empty store, returned as `runs`):
   * `capstan dev` adds its operators' runs here.
   */
  runs?: RunStore;
  /** Refuse every write (403) and hide the page's write controls (`capstan dev --read-only`). */
  readOnly?: boolean;
  /**
   * The access token requests must carry (base64url, at least 128 bits; see access-token.ts).
   * Default: a new random one. `capstan dev` passes the one it keeps, so open tabs survive a restart.
   */
  token?: string;
}

/** A running dashboard. */
export interface Dashboard {
  /** `http://127.0.0.1:<port>/?token=<token>`: the address to open (the token in it lets it in). */
  readonly url: string;
  readonly port: number;
  /** The access token; scripts may send it as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** The feed of the logs panel: write operator output lines here. */
  readonly logs: LogFeed;
  /** The runs of the reconcile timeline: add operator runs here. */
  readonly runs: RunStore;
  /** Stops everything the dashboard started; see the module documentation. */
  stop(): Promise<void>;
}

/** Starts the dashboard's HTTP server and its watches; see the module documentation. */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const host = options.host ?? DEFAULT_DASHBOARD_HOST;
  if (!isLoopbackHost(host)) {
    throw new Error(`the dashboard listens on loopback only (127.0.0.1, ::1 or localhost), not "${host}"`);
  }
  if (options.client === undefined && options.kubeconfigPath === undefined) {
    throw new Error("startDashboard needs a client or a kubeconfigPath");
  }
  const token = options.token ?? newAccessToken();
  const access = new AccessGuard(token); // before anything starts: a bad token is a clear error
  const ownClient = options.client === undefined;
  const client = options.client ?? new KubeClient(loadClientConfig({ kubeconfig: options.kubeconfigPath }));
  const logs = options.logs ?? new LogFeed();
  const runs = options.runs ?? new RunStore();
  const abort = new AbortController();
  // One listener per watched kind and per open page stream: a dozen is normal, not a leak.
  setMaxListeners(0, abort.signal);
  const allowedHosts = new Set<string>();
  const view = new ClusterView(client);
  const readOnly = options.readOnly ?? false;
  const server = createServer(
    dashboardRoutes({ view, client, logs, runs, allowedHosts, access, signal: abort.signal, readOnly }),
  );
  try {
    server.listen(options.port ?? 0, host);
    await once(server, "listening");
  } catch (err) {
    if (ownClient) await client.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  for (const h of allowedHostHeaders(host, port)) allowedHosts.add(h);
  view.start(abort.signal);

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      options.signal?.removeEventListener("abort", onAbort);
      abort.abort(); // ends page streams and watches
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await view.stopped();
      if (ownClient) await client.close();
    })();
    return stopping;
  };
  const onAbort = () => void stop();
  if (options.signal?.aborted) await stop();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const shownHost = host.includes(":") ? `[${host}]` : host;
  return { url: tokenUrl(`http://${shownHost}:${port}/`, token), port, token, logs, runs, stop };
}
