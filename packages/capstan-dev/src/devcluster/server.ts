/**
 * The embedded Kubernetes API server: HTTPS, bearer-token authentication, the request pipeline, the
 * revisioned storage, the registry of served resources, discovery, and the in-process API for
 * server-side controllers.
 *
 * ## Expected flow
 * `startApiServer()` makes a CA and serving certificate, a token and kubeconfig, creates the storage and
 * the registry with the built-in kinds, creates the namespaces every cluster has, starts the plugins
 * (server-side controllers), then listens. `stop()` stops the plugins, ends every watch and connection
 * and closes the listener.
 *
 * ## Guarantees
 * - After `stop()` resolves, no socket, timer or watch of this server is left.
 * - No request, however malformed, crashes the process: every failure is answered with a Status.
 */
import { setMaxListeners } from "node:events";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { AdmissionChain } from "./admission/admission-chain.ts";
import { PolicyAdmission } from "./admission/policy-admission.ts";
import { admissionPolicyErrors } from "./admission/policy-spec-validation.ts";
import { podServiceAccountMutator } from "./admission/service-account-admission.ts";
import { WebhookAdmission } from "./admission/webhook-admission.ts";
import { writingAs } from "./apply/write-tracking.ts";
import { ACCESS_PATH, accessEndpoint } from "./auth/access-endpoint.ts";
import type { AccessRecorder } from "./auth/access-recorder.ts";
import { installAlwaysAllowReviews } from "./auth/always-allow.ts";
import { installRbac } from "./auth/rbac.ts";
import { controllersPlugin } from "./controllers/index.ts";
import { type KubeletHandle, type KubeletOptions, startWorkloads } from "./controllers/kubelet.ts";
import { ensureKubernetesService, serviceClusterIps, serviceNodePorts } from "./controllers/kubernetes-service.ts";
import { namespaceDefaultsPlugin } from "./controllers/namespace-defaults.ts";
import { ConversionWebhookCaller } from "./conversion/conversion-webhook.ts";
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from "./endpoints/discovery.ts";
import { openApiPlugin } from "./endpoints/openapi.ts";
import { handleResourceRequest, type ResourceHandlerDeps } from "./endpoints/resource-handler.ts";
import { DEFAULT_BOOKMARK_INTERVAL_MS, defaultWatchTimeoutMs, type WatchTimers } from "./endpoints/watch-handler.ts";
import { FAULTS_PATH, faultsEndpoint } from "./faults/admin-endpoint.ts";
import { FaultInjector } from "./faults/fault-injector.ts";
import { InProcessApi } from "./in-process-api.ts";
import { newBearerToken, renderKubeconfig, writeKubeconfig } from "./kubeconfig.ts";
import { resourceNotServed } from "./machinery/status.ts";
import { builtinResources } from "./registry/builtins.ts";
import { ResourceRegistry } from "./registry/registry.ts";
import { ADMIN_USER, authenticationStage, TokenAuthenticator } from "./request/authentication.ts";
import { pageNotFound } from "./request/page-not-found.ts";
import {
  composePipeline,
  HttpRequestContext,
  type RequestContext,
  type Stage,
  writeJson,
  writeRawJson,
} from "./request/pipeline.ts";
import { parseRequestInfo } from "./request/request-info.ts";
import { BuiltinDecoder } from "./rest/builtin-decoding.ts";
import { customObjectMutator, customObjectValidator } from "./rest/custom-objects.ts";
import { customObjectStatusValidator } from "./rest/custom-status-strategy.ts";
import { ObjectStore } from "./rest/object-store.ts";
import { defaultPatchTypes, type PatchTypes } from "./rest/patchers.ts";
import { openDataDir } from "./storage/data-dir.ts";
import { DEFAULT_HISTORY_SIZE, MemoryStorage } from "./storage/memory-storage.ts";
import type { Storage } from "./storage/storage.ts";
import { createServingCertificates } from "./tls.ts";
import { builtinKindErrors } from "./validation/builtin/builtin-validator.ts";

/** A server-side controller or extension started with the server and stopped before it. */
export type ServerPlugin = (
  context: PluginContext,
) => void | (() => void | Promise<void>) | Promise<void | (() => void | Promise<void>)>;

export interface PluginContext {
  api: InProcessApi;
  registry: ResourceRegistry;
  store: ObjectStore;
  patchTypes: PatchTypes;
  /** Aborted when the server stops. */
  signal: AbortSignal;
  /** Adds a handler for a non-resource path prefix (e.g. `/openapi/`). */
  addRoute(prefix: string, handler: NonResourceHandler): void;
}

/** Answers a non-resource request (after authentication). */
export type NonResourceHandler = (ctx: RequestContext) => Promise<void> | void;

export interface ApiServerOptions {
  /** Address to bind; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** Port; 0 (the default) picks a free one. */
  port?: number;
  /** Where to write the kubeconfig (mode 0600). Not written when absent. */
  kubeconfigPath?: string;
  /** The admin bearer token; random when absent. */
  token?: string;
  /** How many changes the watch history keeps (see memory-storage.ts for the default's reason). */
  historySize?: number;
  /** BOOKMARK interval of watches with allowWatchBookmarks (ms). */
  bookmarkIntervalMs?: number;
  /**
   * Extra server-side controllers and extensions, started after the built-in ones. Default built-ins:
   * the OpenAPI v3 documents (endpoints/openapi.ts) and the controllers (CRD lifecycle, garbage collector,
   * namespace lifecycle; controllers/index.ts).
   */
  plugins?: ServerPlugin[];
  /** Run the built-in plugins (default true). Tests of the bare REST layer turn them off. */
  builtinPlugins?: boolean;
  /** A storage backend (part 2: persistent). Defaults to in-memory. */
  storage?: Storage;
  /**
   * Keep objects, the CA, serving certificate and token in this directory (docs/persistence.md): a
   * restart continues where the last run stopped, or was killed. Not with `storage`.
   */
  dataDir?: string;
  /**
   * The simulated kubelet, scheduler and Deployment/ReplicaSet controllers (docs/kubelet.md): one
   * Node, pods bound to it and run. On by default (with the built-in plugins); `false` turns them
   * all off (pods stay Pending, Deployments get no ReplicaSets). An object tunes the kubelet's delays.
   */
  kubelet?: boolean | KubeletOptions;
  /**
   * RBAC (docs/rbac.md), on unless `false`, as on every real cluster: ServiceAccount tokens
   * (TokenRequest), impersonation, Role/ClusterRole evaluation with real 403s, access reviews; the
   * admin token is in system:masters, a request without a token is system:anonymous.
   * `false` is kube-apiserver's `--authorization-mode=AlwaysAllow`, which no real cluster runs: every
   * valid token is then admin and a request without one is 401. Only for tests of the bare REST layer
   * and benchmarks measuring what RBAC costs; no command or test harness default uses it.
   */
  rbac?: boolean;
  /**
   * Every namespace's `default` ServiceAccount and `kube-root-ca.crt` ConfigMap (the CA in `ca.crt`),
   * kept by the serviceaccounts controller and root CA publisher of a real cluster
   * (controllers/namespace-defaults.ts). Off by default until the tests that count the objects of a
   * namespace expect them (docs/devcluster.md).
   */
  namespaceDefaults?: boolean;
}

/** A running API server. */
export interface ApiServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** The kubeconfig YAML (CA, URL, admin token). */
  kubeconfig: string;
  kubeconfigPath?: string;
  token: string;
  caPem: string;
  /** Server internals for in-process use (tests, controllers, fault injection). */
  internals: ServerInternals;
  /** The simulated kubelet (absent when started with `kubelet: false`): make containers exit. */
  kubelet?: KubeletHandle;
  /** Fault injection: failing, slow or dropped requests, compaction, restart (docs/faults.md). */
  faults: FaultInjector;
  /**
   * What each user (outside system:masters) was allowed and denied, as distinct requests
   * (docs/rbac.md, "Observed RBAC"); also `GET /capstan/access`. Absent with `rbac: false`.
   */
  access?: AccessRecorder;
  /** Stops serving: ends every watch and connection, stops plugins and timers. */
  stop(): Promise<void>;
}

export interface ServerInternals {
  api: InProcessApi;
  registry: ResourceRegistry;
  store: ObjectStore;
  storage: Storage;
  patchTypes: PatchTypes;
  authenticator: TokenAuthenticator;
  /** The pipeline stages in order; part 2 inserts its stages before the last (the handler). */
  stages: Stage[];
  /** Ends every open watch response at once, as a dropped connection would (fault injection). Returns how many. */
  closeAllWatches(): number;
}

/** What every server runs unless told otherwise: kubectl needs the OpenAPI documents, a cluster needs its controllers. */
const BUILTIN_PLUGINS: ServerPlugin[] = [openApiPlugin, controllersPlugin];

/** Placeholder until the request-info stage has parsed the URL. */
/**
 * Go's http.Server reads at most MaxHeaderBytes (kube-apiserver sets 1 MiB) plus 4 KiB of slack for the
 * request line and headers; Node's default is 16 KiB, which long label selectors pass.
 */
const MAX_HEADER_BYTES = (1 << 20) + 4096;

/** What Go's http.Server writes when a request's headers are over the limit. */
const HEADER_TOO_LARGE_RESPONSE =
  "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large";

/**
 * The request path as sent: Go serves the path without resolving `.`, `..` or their percent-encodings
 * (URL.Path), where WHATWG URL parsing would resolve them and address another object.
 */
function rawPathname(requestUrl: string | undefined, parsed: URL): string {
  if (requestUrl === undefined || !requestUrl.startsWith("/")) return parsed.pathname;
  const end = requestUrl.search(/[?#]/);
  return end < 0 ? requestUrl : requestUrl.slice(0, end);
}

const EMPTY_INFO = parseRequestInfo("GET", "/", new URLSearchParams());

/** Namespaces every cluster starts with. */
const INITIAL_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** Starts an API server. Resolves once it accepts connections. */
export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const host = options.host ?? "127.0.0.1";
  if (options.dataDir !== undefined && options.storage) throw new Error("dataDir and storage exclude each other");
  const dataDir =
    options.dataDir === undefined
      ? undefined
      : await openDataDir(options.dataDir, { host, token: options.token, historySize: options.historySize });
  const certsPromise = dataDir ? Promise.resolve(dataDir.certs) : createServingCertificates(host);
  const token = dataDir?.token ?? options.token ?? newBearerToken();

  const storage = options.storage ?? dataDir?.storage ?? new MemoryStorage(options.historySize ?? DEFAULT_HISTORY_SIZE);
  const registry = new ResourceRegistry();
  // The allocators ask the store which cluster IPs and node ports are taken (a closure: `api` exists once services do).
  const builtins = builtinResources({
    serviceIpsInUse: () => serviceClusterIps(api),
    serviceNodePortsInUse: () => serviceNodePorts(api),
  });
  for (const served of builtins) registry.add(served);
  const store = new ObjectStore(storage);
  store.decoders.push(new BuiltinDecoder());
  store.mutators.push(customObjectMutator, podServiceAccountMutator);
  // On every create and update: the stored ValidatingAdmissionPolicies, then the webhooks of the stored
  // Validating/MutatingWebhookConfigurations (kube-apiserver's plugin order).
  const webhookAdmission = new WebhookAdmission(storage, registry, () => store.converter);
  store.admission = new AdmissionChain([new PolicyAdmission(storage, registry), webhookAdmission]);
  // CRDs with conversion strategy Webhook: their webhooks convert objects between versions.
  const conversionWebhooks = new ConversionWebhookCaller();
  store.converter = conversionWebhooks;
  store.validators.push(customObjectValidator(), builtinKindErrors, admissionPolicyErrors);
  store.statusValidators.push(customObjectStatusValidator());
  const patchTypes = defaultPatchTypes();
  const api = new InProcessApi(registry, store, patchTypes);
  const nsRef = { group: "", version: "v1", plural: "namespaces" };
  for (const name of INITIAL_NAMESPACES) {
    // kube-apiserver creates these itself, and managedFields say so.
    if (!api.tryGet(nsRef, "", name))
      await writingAs("kube-apiserver", () => api.create(nsRef, "", { metadata: { name } }));
  }

  const authenticator = new TokenAuthenticator();
  authenticator.add(token, ADMIN_USER);
  const watchTimers: WatchTimers = {
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS,
    defaultTimeoutMs: defaultWatchTimeoutMs,
  };
  const openWatches = new Set<ServerResponse>();
  const routes = new Map<string, NonResourceHandler>();
  const deps: ResourceHandlerDeps = { registry, store, patchTypes, watchTimers, openWatches };
  let serverAddress = "";

  // Stages that never await return the next stage's promise instead of wrapping it in another async
  // frame (runFrom turns their synchronous throws into rejections): each frame is a promise, a
  // resolution job and an async-hooks callback per request on the create path.
  const handler: Stage = (ctx) => {
    if (ctx.info.isResourceRequest) return handleResourceRequest(ctx, deps);
    return handleNonResource(ctx, registry, routes, serverAddress);
  };
  const requestInfoStage: Stage = (ctx, next) => {
    ctx.info = parseRequestInfo(ctx.req.method ?? "GET", rawPathname(ctx.req.url, ctx.url), ctx.url.searchParams);
    return next();
  };
  const abort = new AbortController();
  const faults = new FaultInjector({ storage, signal: abort.signal });
  routes.set(FAULTS_PATH, faultsEndpoint(faults));
  const stages: Stage[] = [requestInfoStage, authenticationStage(authenticator), faults.stage, handler];
  let access: AccessRecorder | undefined;
  if (options.rbac !== false) {
    ({ access } = await installRbac({ api, registry, authenticator, stages, adminToken: token }));
    routes.set(ACCESS_PATH, accessEndpoint(access));
  } else installAlwaysAllowReviews({ registry, stages });
  const pipeline = composePipeline(stages);

  // Every open watch listens for the server's stop: thousands of watchers are normal, not a leak.
  setMaxListeners(0, abort.signal);
  const certs = await certsPromise;
  const serverOptions = { cert: certs.certPem, key: certs.keyPem, maxHeaderSize: MAX_HEADER_BYTES };
  const server: Server = createServer(serverOptions, (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "https://localhost");
    } catch {
      url = new URL("https://localhost/");
    }
    void pipeline(new HttpRequestContext(req, res, url, EMPTY_INFO, abort.signal));
  });
  // Keep-alive clients (benchmarks, informers) reuse connections; Node's default 5 s is too short for them.
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  // Sockets answered with the 431: the parser keeps failing on the rest of their headers, and destroying
  // them then would drop the answer before it is flushed.
  const answeredTooLarge = new WeakSet<Duplex>();
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (answeredTooLarge.has(socket)) return;
    if (err.code !== "HPE_HEADER_OVERFLOW" || !socket.writable) {
      socket.destroy();
      return;
    }
    // Go's server answers in plain text and hangs up; what the client still sends is read and dropped.
    answeredTooLarge.add(socket);
    socket.end(HEADER_TOO_LARGE_RESPONSE);
    socket.resume();
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch(async (err: unknown) => {
    await dataDir?.close();
    throw err;
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const urlHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  const url = `https://${urlHost}:${port}`;
  serverAddress = `${urlHost}:${port}`;
  await ensureKubernetesService(api, port);
  const kubeconfig = renderKubeconfig({ server: url, caPem: certs.caPem, token });
  if (options.kubeconfigPath) await writeKubeconfig(options.kubeconfigPath, kubeconfig);

  const pluginStops: (() => void | Promise<void>)[] = [];
  const pluginContext: PluginContext = {
    api,
    registry,
    store,
    patchTypes,
    signal: abort.signal,
    addRoute: (prefix, route) => routes.set(prefix, route),
  };
  let kubelet: KubeletHandle | undefined;
  const kubeletOptions =
    options.builtinPlugins === false || options.kubelet === false
      ? undefined
      : typeof options.kubelet === "object"
        ? options.kubelet
        : {};
  const kubeletPlugin: ServerPlugin = async (context) => {
    const workloads = await startWorkloads(context, kubeletOptions);
    kubelet = workloads.kubelet;
    return workloads.stop;
  };
  const plugins = [
    ...(options.builtinPlugins === false ? [] : BUILTIN_PLUGINS),
    ...(options.builtinPlugins !== false && options.namespaceDefaults ? [namespaceDefaultsPlugin(certs.caPem)] : []),
    ...(kubeletOptions ? [kubeletPlugin] : []),
    ...(options.plugins ?? []),
  ];
  for (const plugin of plugins) {
    const stopPlugin = await plugin(pluginContext);
    if (typeof stopPlugin === "function") pluginStops.push(stopPlugin);
  }

  let stopped: Promise<void> | undefined;
  return {
    url,
    kubeconfig,
    kubeconfigPath: options.kubeconfigPath,
    token,
    caPem: certs.caPem,
    kubelet,
    faults,
    ...(access === undefined ? {} : { access }),
    internals: {
      api,
      registry,
      store,
      storage,
      patchTypes,
      authenticator,
      stages,
      closeAllWatches: () => {
        const count = openWatches.size;
        for (const res of [...openWatches]) res.end();
        return count;
      },
    },
    stop: () => {
      stopped ??= (async () => {
        abort.abort();
        for (const stopPlugin of pluginStops.reverse()) await stopPlugin();
        for (const res of openWatches) res.end();
        openWatches.clear();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        await closed;
        webhookAdmission.close();
        conversionWebhooks.close();
        storage.close();
        await dataDir?.close();
      })();
      return stopped;
    },
  };
}

async function handleNonResource(
  ctx: RequestContext,
  registry: ResourceRegistry,
  routes: Map<string, NonResourceHandler>,
  serverAddress: string,
): Promise<void> {
  const path = ctx.url.pathname.replace(/\/+$/, "") || "/";
  for (const [prefix, route] of routes) if (path.startsWith(prefix)) return route(ctx);
  const parts = path.split("/").filter(Boolean);
  // Under /api the legacy discovery web service answers a JSON Status; elsewhere Go's mux its text 404.
  const notServed = () => (parts[0] === "api" ? resourceNotServed() : pageNotFound());
  if (ctx.req.method !== "GET" && ctx.req.method !== "HEAD") throw notServed();
  if (path === "/healthz" || path === "/livez" || path === "/readyz" || /^\/(healthz|livez|readyz)\/\w+/.test(path)) {
    ctx.res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" });
    ctx.res.end("ok");
    return;
  }
  if (path === "/version") return writeRawJson(ctx.res, 200, versionInfo());
  if (path === "/api") return writeJson(ctx.res, 200, JSON.stringify(apiVersions(serverAddress)));
  if (path === "/apis") return writeJson(ctx.res, 200, JSON.stringify(apiGroupList(registry)));
  let doc: object | undefined;
  if (parts[0] === "api" && parts.length === 2) doc = apiResourceList(registry, "", parts[1]!);
  else if (parts[0] === "apis" && parts.length === 2) doc = apiGroup(registry, parts[1]!);
  else if (parts[0] === "apis" && parts.length === 3) doc = apiResourceList(registry, parts[1]!, parts[2]!);
  if (doc) return writeJson(ctx.res, 200, JSON.stringify(doc));
  throw notServed();
}

/** The package version, for the CLI's banner. */
export function capstanVersion(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL("../../../../package.json", import.meta.url), "utf8")) as { version: string }
    ).version;
  } catch {
    return "0.0.0";
  }
}
