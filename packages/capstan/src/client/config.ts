/**
 * Client configuration: where the API server is, how to trust it, how to authenticate, which namespace
 * is the default. Loaded from kubeconfig files (kubeconfig.ts reads them) or from the in-cluster service
 * account.
 *
 * Source order when nothing is forced (controller-runtime's `GetConfig` order): the `kubeconfig` option,
 * the KUBECONFIG environment variable, the in-cluster service account, `~/.kube/config`.
 *
 * How a kubeconfig user authenticates, as client-go decides it (clientcmd `ClientConfig`, rest and
 * transport):
 * - `token` / `tokenFile` -> a bearer token (a token file is re-read, credentials.ts);
 * - `username` / `password` -> basic auth (never together with a token);
 * - `client-certificate(-data)` / `client-key(-data)` -> mutual TLS, alongside any of the others;
 * - `exec` -> an exec credential plugin (exec-credential.ts), only when none of the above is set;
 * - `auth-provider: oidc` -> the id-token, refreshed (oidc-credential.ts), unless a token or basic auth
 *   is set; `gcp` and `azure` were removed from client-go and are refused with what to use instead;
 * - `as`, `as-uid`, `as-groups`, `as-user-extra` -> impersonation headers (impersonation.ts).
 * Like client-go, no credentials at all are sent to an `http://` server.
 *
 * Every problem is a `ConfigError` whose one-line message names the kubeconfig file, the context, the
 * cluster and its server, and the user at fault.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { describeClientCertificate } from "./client-certificate.ts";
import { ConfigError } from "./config-error.ts";
import { type Credentials, FileTokenCredentials, type HeaderRecord, StaticCredentials } from "./credentials.ts";
import { type ExecClusterInfo, ExecCredentials, execConfigProblems } from "./exec-credential.ts";
import { impersonationHeaders } from "./impersonation.ts";
import {
  type Entry,
  type KubeCluster,
  type KubeUser,
  parseCluster,
  parseContext,
  parseUser,
  readKubeconfigs,
} from "./kubeconfig.ts";
import { OidcCredentials, oidcConfigProblems } from "./oidc-credential.ts";

export { ConfigError } from "./config-error.ts";

/** TLS material for the connection to the API server (PEM strings). */
export interface TlsConfig {
  ca?: string;
  cert?: string;
  key?: string;
  insecureSkipTLSVerify: boolean;
  /** SNI and certificate name to verify, when it differs from the server URL's host. */
  servername?: string;
}

/** Everything the transport needs to reach and authenticate to one API server. */
export interface ClientConfig {
  /** Base URL, e.g. `https://127.0.0.1:6443` (a path prefix is kept). */
  server: string;
  tls: TlsConfig;
  credentials: Credentials;
  /** Namespace of the context (or of the service account), `"default"` when it names none. */
  namespace: string;
  /** Where this came from, for messages: `kubeconfig <paths> context <name>` or `in-cluster`. */
  source: string;
}

/** Options of `loadClientConfig`. */
export interface LoadConfigOptions {
  /** kubeconfig path, or several joined with the platform's path delimiter (like KUBECONFIG). */
  kubeconfig?: string;
  /** Context to use instead of the file's current-context. */
  context?: string;
  /** Use the in-cluster service account (true), never use it (false), or decide by the source order (unset). */
  inCluster?: boolean;
  /** Override for tests: the service-account directory. */
  serviceAccountDir?: string;
  /** Override for tests: the environment (KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT, HOME). */
  env?: NodeJS.ProcessEnv;
}

/** Where the kubelet mounts the service account's token, CA bundle and namespace. */
export const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Loads the client configuration (see the module comment for the source order). */
export function loadClientConfig(opts: LoadConfigOptions = {}): ClientConfig {
  const env = opts.env ?? process.env;
  const saDir = opts.serviceAccountDir ?? serviceAccountDir;
  if (opts.inCluster === true) return inClusterConfig(env, saDir);
  if (opts.kubeconfig !== undefined) return kubeconfigConfig(splitPaths(opts.kubeconfig), true, opts.context);
  if (env.KUBECONFIG !== undefined && env.KUBECONFIG !== "") {
    return kubeconfigConfig(splitPaths(env.KUBECONFIG), false, opts.context);
  }
  if (opts.inCluster !== false && env.KUBERNETES_SERVICE_HOST && existsSync(join(saDir, "token"))) {
    return inClusterConfig(env, saDir);
  }
  const home = env.HOME ?? homedir();
  const fallback = join(home, ".kube", "config");
  if (!existsSync(fallback)) {
    throw new ConfigError(
      `no Kubernetes configuration found: no kubeconfig option, KUBECONFIG is unset, not running in a cluster, and ${fallback} does not exist`,
    );
  }
  return kubeconfigConfig([fallback], true, opts.context);
}

function splitPaths(list: string): string[] {
  return list.split(delimiter).filter((p) => p !== "");
}

/** The in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT, the service-account token (re-read), CA and namespace. */
export function inClusterConfig(env: NodeJS.ProcessEnv = process.env, dir = serviceAccountDir): ClientConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new ConfigError(
      "in-cluster configuration needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, which are not set (not running in a pod?)",
    );
  }
  const tokenPath = join(dir, "token");
  const caPath = join(dir, "ca.crt");
  let ca: string;
  try {
    ca = readFileSync(caPath, "utf8");
  } catch (err) {
    throw new ConfigError(`in-cluster CA file ${caPath} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  let credentials: Credentials;
  try {
    credentials = new FileTokenCredentials(tokenPath, { description: `service account token ${tokenPath}` });
  } catch (err) {
    throw new ConfigError(`in-cluster ${(err as Error).message}`, { cause: err });
  }
  let namespace = "default";
  try {
    namespace = readFileSync(join(dir, "namespace"), "utf8").trim() || "default";
  } catch {
    // No namespace file: client-go falls back to "default" as well.
  }
  const h = host.includes(":") ? `[${host}]` : host;
  return {
    server: `https://${h}:${port}`,
    tls: { ca, insecureSkipTLSVerify: false },
    credentials,
    namespace,
    source: "in-cluster",
  };
}

/** The names a message about the selected context gives: `kubeconfig <file>, context "c", cluster "k" (<server>), user "u"`. */
interface Place {
  context: string;
  cluster: Entry;
  server: string | undefined;
  user: Entry | undefined;
}

/** A message prefix for a problem in `file` (the file of the entry at fault). */
function at(place: Place, file: string): string {
  const server = place.server ? ` (${place.server})` : "";
  const user = place.user ? `, user "${place.user.name}"` : ", no user";
  return `kubeconfig ${file}, context "${place.context}", cluster "${place.cluster.name}"${server}${user}`;
}

function kubeconfigConfig(paths: string[], mustExist: boolean, contextName: string | undefined): ClientConfig {
  const files = readKubeconfigs(paths, mustExist);
  const list = paths.join(delimiter);
  const name = contextName ?? files.currentContext;
  if (!name) throw new ConfigError(`kubeconfig ${list} has no current-context and no context was given`);
  const ctxEntry = files.contexts.get(name);
  if (!ctxEntry) {
    const known = [...files.contexts.keys()].join(", ") || "none";
    throw new ConfigError(`context "${name}" not found in kubeconfig ${list} (contexts: ${known})`);
  }
  const ctxWhere = `kubeconfig ${ctxEntry.file}, context "${name}"`;
  const ctx = parseContext(ctxEntry.body, ctxWhere);
  if (!ctx.cluster) throw new ConfigError(`${ctxWhere}: the context names no cluster`);
  const clusterEntry = files.clusters.get(ctx.cluster);
  if (!clusterEntry) {
    throw new ConfigError(`${ctxWhere}: the context refers to cluster "${ctx.cluster}", which ${list} does not define`);
  }
  const userEntry = ctx.user ? files.users.get(ctx.user) : undefined;
  if (ctx.user && !userEntry) {
    throw new ConfigError(`${ctxWhere}: the context refers to user "${ctx.user}", which ${list} does not define`);
  }
  const place: Place = { context: name, cluster: clusterEntry, server: undefined, user: userEntry };
  const cluster = parseCluster(clusterEntry.body, at(place, clusterEntry.file));
  place.server = cluster.server;
  const user = userEntry ? parseUser(userEntry.body, at(place, userEntry.file)) : undefined;

  const server = serverUrl(cluster, user, at(place, clusterEntry.file));
  const tls = clusterTls(cluster, at(place, clusterEntry.file));
  let credentials: Credentials;
  if (!server.startsWith("https:")) {
    // client-go reads the user's credentials only for a TLS transport, so secrets never go out in clear text.
    credentials = new StaticCredentials({}, `no credentials (${server} is not https)`);
  } else if (!user || !userEntry) {
    credentials = new StaticCredentials({}, `no credentials (context "${name}" names no user)`);
  } else {
    credentials = userCredentials(user, userEntry, cluster, server, tls, at(place, userEntry.file));
  }
  const namespace = ctx.namespace ?? "default";
  return { server, tls, credentials, namespace, source: `kubeconfig ${list} context ${name}` };
}

/**
 * The server URL: client-go's `DefaultServerURL` puts a scheme on a bare `host:port`, https when the
 * cluster or user has TLS settings, http otherwise.
 */
function serverUrl(cluster: KubeCluster, user: KubeUser | undefined, where: string): string {
  const raw = cluster.server;
  if (!raw) throw new ConfigError(`${where}: the cluster has no server`);
  let server = raw;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    const tlsish =
      cluster.certificateAuthority ||
      cluster.certificateAuthorityData ||
      cluster.insecureSkipTlsVerify ||
      cluster.tlsServerName ||
      ((user?.clientCertificate || user?.clientCertificateData) && (user?.clientKey || user?.clientKeyData));
    server = `${tlsish ? "https" : "http"}://${raw}`;
  }
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new ConfigError(`${where}: the server URL ${raw} is invalid`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(`${where}: the server URL ${raw} is neither https nor http`);
  }
  return server;
}

/** The cluster half of TLS: CA, insecure flag and server name (client-go's validation rules). */
function clusterTls(cluster: KubeCluster, where: string): TlsConfig {
  if (cluster.certificateAuthority && cluster.certificateAuthorityData) {
    throw new ConfigError(`${where}: certificate-authority-data and certificate-authority are both specified`);
  }
  const tls: TlsConfig = { insecureSkipTLSVerify: cluster.insecureSkipTlsVerify };
  const ca = cluster.certificateAuthorityData ?? readPem("certificate-authority", cluster.certificateAuthority, where);
  if (ca) {
    if (cluster.insecureSkipTlsVerify) {
      throw new ConfigError(
        `${where}: certificate-authority and insecure-skip-tls-verify exclude each other (specifying a root certificates file with the insecure flag is not allowed)`,
      );
    }
    tls.ca = ca;
  }
  if (cluster.tlsServerName) tls.servername = cluster.tlsServerName;
  return tls;
}

function readPem(field: string, path: string | undefined, where: string): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`${where}: ${field} file ${path} cannot be read: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * The user half: client certificate (into `tls`), then the header credentials, following client-go's
 * precedence (module comment) and its kubeconfig validation.
 */
function userCredentials(
  user: KubeUser,
  entry: Entry,
  cluster: KubeCluster,
  server: string,
  tls: TlsConfig,
  where: string,
): Credentials {
  const fail = (problem: string): never => {
    throw new ConfigError(`${where}: ${problem}`);
  };
  const who = `kubeconfig user "${entry.name}"`;

  // client-go's validateAuthInfo, in its order.
  if (user.token && (user.username || user.password)) {
    fail("more than one authentication method found (token and basicAuth), only one is allowed");
  }
  let certSubject: string | undefined;
  if (user.clientCertificate || user.clientCertificateData) {
    if (user.clientCertificate && user.clientCertificateData) {
      fail("client-certificate-data and client-certificate are both specified");
    }
    if (user.clientKey && user.clientKeyData) fail("client-key-data and client-key are both specified");
    if (!user.clientKey && !user.clientKeyData) {
      fail("client-key-data or client-key must be specified to use the client certificate");
    }
    const cert = user.clientCertificateData ?? readPem("client-certificate", user.clientCertificate, where);
    const key = user.clientKeyData ?? readPem("client-key", user.clientKey, where);
    if (cert && key) {
      try {
        certSubject = describeClientCertificate(cert, key);
      } catch (err) {
        fail((err as Error).message);
      }
      tls.cert = cert;
      tls.key = key;
    }
  } else if (user.clientKey || user.clientKeyData) {
    fail("client-key or client-key-data is given without client-certificate or client-certificate-data");
  }
  if (user.exec) {
    if (user.authProvider) fail("auth-provider cannot be provided in combination with an exec plugin");
    for (const problem of execConfigProblems(user.exec)) fail(problem);
  }
  if (!user.as && (user.asUid || user.asGroups.length > 0 || Object.keys(user.asUserExtra).length > 0)) {
    fail("requesting uid, groups or user-extra without impersonating a user (as)");
  }

  const extra: HeaderRecord = user.as
    ? impersonationHeaders({ user: user.as, uid: user.asUid, groups: user.asGroups, extra: user.asUserExtra })
    : {};
  const certPart = certSubject ? `client certificate (${certSubject})` : undefined;
  const describe = (header: string | undefined, detail = "") =>
    `${[header, certPart].filter((p) => p !== undefined).join(" and ")} of ${who}${detail}`;

  if (user.token || user.tokenFile) {
    if (!user.tokenFile)
      return new StaticCredentials({ ...extra, authorization: `Bearer ${user.token}` }, describe("bearer token"));
    try {
      return new FileTokenCredentials(user.tokenFile, {
        extra,
        ...(user.token ? { token: user.token } : {}),
        description: describe("bearer token", ` (tokenFile ${user.tokenFile})`),
      });
    } catch (err) {
      return fail((err as Error).message);
    }
  }
  if (user.username) {
    const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
    return new StaticCredentials(
      { ...extra, authorization: `Basic ${basic}` },
      describe("basic auth", ` (username ${user.username})`),
    );
  }
  // client-go skips the exec plugin when the user has a client certificate of its own.
  if (user.exec && !certPart) {
    return new ExecCredentials({
      user: entry.name,
      exec: user.exec,
      cluster: execClusterInfo(cluster, server, tls),
      extra,
    });
  }
  if (user.authProvider) {
    const { name, config } = user.authProvider;
    if (name === "oidc") {
      for (const problem of oidcConfigProblems(config)) fail(problem);
      try {
        return new OidcCredentials({
          user: entry.name,
          file: entry.file,
          config,
          extra,
          description: describe("oidc id-token", ` (issuer ${config["idp-issuer-url"]})`),
        });
      } catch (err) {
        return fail((err as Error).message);
      }
    }
    if (name === "gcp") {
      fail(
        'the gcp auth-provider has been removed from client-go: use the "gke-gcloud-auth-plugin" exec credential plugin instead (https://cloud.google.com/blog/products/containers-kubernetes/kubectl-auth-changes-in-gke)',
      );
    }
    if (name === "azure") {
      fail(
        "the azure auth-provider has been removed from client-go: use the kubelogin exec credential plugin instead (https://github.com/Azure/kubelogin)",
      );
    }
    fail(`no auth-provider found for name "${name}" (Capstan knows oidc; use an exec credential plugin)`);
  }
  return new StaticCredentials(extra, certPart ? describe(undefined) : `no credentials (${who} has none)`);
}

/** `spec.cluster` of KUBERNETES_EXEC_INFO, as client-go's `ConfigToExecCluster` fills it. */
function execClusterInfo(cluster: KubeCluster, server: string, tls: TlsConfig): ExecClusterInfo {
  const info: ExecClusterInfo = { server };
  if (cluster.tlsServerName) info["tls-server-name"] = cluster.tlsServerName;
  if (cluster.insecureSkipTlsVerify) info["insecure-skip-tls-verify"] = true;
  if (tls.ca) info["certificate-authority-data"] = Buffer.from(tls.ca).toString("base64");
  if (cluster.proxyUrl) info["proxy-url"] = cluster.proxyUrl;
  if (cluster.disableCompression) info["disable-compression"] = true;
  if (cluster.execExtension !== undefined) info.config = cluster.execExtension;
  return info;
}
