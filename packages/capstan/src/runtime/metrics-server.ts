/**
 * The metrics endpoint as controller-runtime ≥ 0.16 serves it (`pkg/metrics/server`): `/metrics` on
 * its own listener, over plain HTTP or, with `secureServing`, over HTTPS, every request passed
 * through a filter first (by default, on HTTPS, TokenReview + SubjectAccessReview: metrics-auth.ts).
 *
 * ## Defaults ({@link resolveMetricsServing})
 * - In a pod (bind-address.ts `runningInCluster`): HTTPS with delegated authentication and
 *   authorization, on every interface, as kubebuilder's scaffolding runs it (`--metrics-secure`).
 * - Elsewhere: plain HTTP on 127.0.0.1, no authentication (only this machine can reach it).
 * - The certificate: `tls.crt`/`tls.key` (names configurable) in `certDir` (default
 *   `<temp dir>/k8s-metrics-server/serving-certs`, controller-runtime's) when both exist, read again
 *   when they change; else a self-signed one made at start (serving-certificate.ts).
 *
 * ## Guarantees
 * - Only `GET`/`HEAD /metrics` is answered (405 for other methods, 404 for other paths, both
 *   before any review).
 * - `stop()` closes the listener and every connection, clears the certificate check timer, and
 *   aborts pending reviews: nothing is left.
 */
import { type FSWatcher, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { KubeClient } from "../client/resource-client.ts";
import { type BindAddress, formatBindAddress, resolveBindAddress } from "./bind-address.ts";
import type { RouteHandler } from "./health.ts";
import { type MetricsFilter, type MetricsFilterProvider, withAuthenticationAndAuthorization } from "./metrics-auth.ts";
import {
  type CertificateFiles,
  type CertificatePair,
  certificatePaths,
  DEFAULT_METRICS_CERT_DIR,
  readCertificatePair,
  selfSignedCertificate,
} from "./serving-certificate.ts";

/** The metrics server's options, controller-runtime's `metricsserver.Options` (manager option `metricsServer`). */
export interface MetricsServerOptions {
  /**
   * `":8443"`, `"127.0.0.1:8080"`, `"[::1]:8080"`, or `"0"`: not served. Excludes the manager's
   * `metricsPort` (which binds `bindHost`, default loopback outside a cluster, every interface in one).
   */
  bindAddress?: string;
  /** Serve over HTTPS (default: true in a pod, false elsewhere). */
  secureServing?: boolean;
  /** Where the serving certificate is looked for (default `<temp dir>/k8s-metrics-server/serving-certs`). */
  certDir?: string;
  /** Certificate file name in `certDir` (default `tls.crt`). */
  certName?: string;
  /** Key file name in `certDir` (default `tls.key`). */
  keyName?: string;
  /**
   * Wraps `/metrics` (controller-runtime's `FilterProvider`). Default: with `secureServing`,
   * {@link withAuthenticationAndAuthorization}; otherwise none. `null`: none even on HTTPS (unlike
   * controller-runtime, secure serving authorizes unless told not to).
   */
  filterProvider?: MetricsFilterProvider | null;
  /** How often `certDir` is checked for a renewed pair (default 10 s, controller-runtime's certwatcher). */
  certReloadMs?: number;
}

/** How the metrics endpoint is served, once the defaults are applied. */
export interface MetricsServing {
  address: BindAddress;
  secure: boolean;
  /** Where the certificate is read from (secure only). */
  certificate?: CertificateFiles;
  filterProvider?: MetricsFilterProvider;
  certReloadMs?: number;
}

/** The manager's options that decide the metrics endpoint. */
export interface MetricsServingOptions {
  metricsServer?: MetricsServerOptions;
  metricsPort?: number;
  bindHost?: string;
  inCluster: boolean;
}

/**
 * Applies the defaults (see the module documentation); `undefined` when metrics are not served.
 * Throws for contradictory options, naming them.
 */
export function resolveMetricsServing(options: MetricsServingOptions): MetricsServing | undefined {
  const server = options.metricsServer ?? {};
  const address = resolveBindAddress(
    { bindAddress: "metricsServer.bindAddress", port: "metricsPort" },
    {
      bindAddress: server.bindAddress,
      port: options.metricsPort,
      host: options.bindHost,
      inCluster: options.inCluster,
    },
  );
  if (address === undefined) return undefined;
  const secure = server.secureServing ?? options.inCluster;
  if (!secure) {
    for (const key of ["certDir", "certName", "keyName"] as const) {
      if (server[key] !== undefined) {
        throw new Error(
          `metricsServer.${key} is set but metrics are served over plain HTTP; set metricsServer.secureServing (--metrics-secure)`,
        );
      }
    }
  }
  const filterProvider =
    server.filterProvider === null
      ? undefined
      : (server.filterProvider ?? (secure ? withAuthenticationAndAuthorization() : undefined));
  return {
    address,
    secure,
    ...(secure
      ? {
          certificate: {
            dir: server.certDir ?? DEFAULT_METRICS_CERT_DIR,
            ...(server.certName !== undefined ? { certName: server.certName } : {}),
            ...(server.keyName !== undefined ? { keyName: server.keyName } : {}),
          },
        }
      : {}),
    ...(filterProvider !== undefined ? { filterProvider } : {}),
    ...(server.certReloadMs !== undefined ? { certReloadMs: server.certReloadMs } : {}),
  };
}

/** controller-runtime's certwatcher polls every 10 s besides file system events (which miss some Secret updates). */
const CERT_RELOAD_MS = 10_000;

/** Where a started metrics server listens. */
export interface MetricsEndpoint {
  host: string;
  port: number;
  secure: boolean;
  /** `http(s)://host:port/metrics`. */
  url: string;
}

/** Serves `/metrics`; see the module documentation. */
export class MetricsServer {
  private server: Server | HttpsServer | undefined;
  private readonly stopAbort = new AbortController();
  private certTimer: ReturnType<typeof setInterval> | undefined;
  private certWatcher: FSWatcher | undefined;
  private loadedPair: CertificatePair | undefined;

  constructor(
    private readonly serving: MetricsServing,
    private readonly handler: RouteHandler,
    private readonly context: { client: KubeClient; logger: Logger },
  ) {}

  /** Listens; resolves with the address (rejects when the port is taken or the certificate unreadable). */
  async start(): Promise<MetricsEndpoint> {
    if (this.server !== undefined) throw new Error("the metrics server was already started");
    const { serving } = this;
    const filter: MetricsFilter | undefined = serving.filterProvider?.({
      ...this.context,
      signal: this.stopAbort.signal,
    });
    const metrics = filter === undefined ? this.handler : filter(this.handler);
    const onRequest = (req: IncomingMessage, res: ServerResponse) => void dispatch(metrics, req, res);
    if (serving.secure) {
      const files = serving.certificate ?? { dir: DEFAULT_METRICS_CERT_DIR };
      this.loadedPair = await readCertificatePair(files);
      const pair = this.loadedPair ?? selfSignedCertificate();
      this.server = createHttpsServer({ cert: pair.cert, key: pair.key }, onRequest);
    } else {
      this.server = createHttpServer(onRequest);
    }
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(serving.address.port, serving.address.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    if (this.loadedPair !== undefined) this.watchCertificates();
    const bound = server.address() as AddressInfo;
    const endpoint: MetricsEndpoint = {
      host: bound.address,
      port: bound.port,
      secure: serving.secure,
      url: `${serving.secure ? "https" : "http"}://${formatBindAddress({ host: bound.address, port: bound.port })}/metrics`,
    };
    this.context.logger.info(
      {
        bindAddress: formatBindAddress(serving.address),
        url: endpoint.url,
        secure: serving.secure,
        authorized: filter !== undefined,
        certificate: serving.secure
          ? this.loadedPair === undefined
            ? "self-signed"
            : certificatePaths(serving.certificate ?? { dir: DEFAULT_METRICS_CERT_DIR }).cert
          : undefined,
      },
      "serving metrics",
    );
    return endpoint;
  }

  /** Closes the listener and every connection; aborts pending reviews. */
  async stop(): Promise<void> {
    this.stopAbort.abort();
    clearInterval(this.certTimer);
    this.certWatcher?.close();
    const server = this.server;
    if (server === undefined || !server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private watchCertificates(): void {
    const files = this.serving.certificate ?? { dir: DEFAULT_METRICS_CERT_DIR };
    const reload = () => void this.reloadCertificates(files);
    this.certTimer = setInterval(reload, this.serving.certReloadMs ?? CERT_RELOAD_MS);
    try {
      // A mounted Secret is updated by swapping a symlink in the directory: watch the directory.
      this.certWatcher = watch(files.dir, { persistent: false }, reload);
      this.certWatcher.on("error", () => this.certWatcher?.close());
    } catch {
      // No file system events here: the timer alone notices renewals.
    }
  }

  private async reloadCertificates(files: CertificateFiles): Promise<void> {
    const paths = certificatePaths(files);
    let pair: CertificatePair;
    try {
      pair = { cert: await readFile(paths.cert, "utf8"), key: await readFile(paths.key, "utf8") };
    } catch {
      return; // mid-swap, or removed: keep serving the pair we have
    }
    if (pair.cert === this.loadedPair?.cert && pair.key === this.loadedPair.key) return;
    const server = this.server as HttpsServer | undefined;
    if (server === undefined || this.stopAbort.signal.aborted) return;
    try {
      server.setSecureContext({ cert: pair.cert, key: pair.key });
      this.loadedPair = pair;
      this.context.logger.info({ cert: paths.cert }, "metrics serving certificate reloaded");
    } catch (err) {
      // A certificate written before its key: the next check picks up the matching pair.
      this.context.logger.warn({ err, cert: paths.cert }, "metrics serving certificate not reloaded");
    }
  }
}

async function dispatch(metrics: RouteHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("404 page not found\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    await metrics(req, res, "");
  } catch (err) {
    if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
    res.end(`internal error: ${(err as Error).message}\n`);
  }
}
