/**
 * Client configuration: where the API server is, how to trust it, how to authenticate, which namespace
 * is the default. Loaded from kubeconfig files (through @kubernetes/client-node's `KubeConfig`, which also
 * runs exec and auth-provider plugins) or from the in-cluster service account.
 *
 * Source order when nothing is forced (controller-runtime's `GetConfig` order): the `kubeconfig` option,
 * the KUBECONFIG environment variable, the in-cluster service account, `~/.kube/config`.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { parse as parseYaml } from "yaml";
import {
  type Credentials,
  FileTokenCredentials,
  type HeaderRecord,
  KubeConfigCredentials,
  StaticCredentials,
} from "./credentials.ts";

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

/** A configuration problem, with a message naming the file, context or field at fault. */
export class ConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}

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
    credentials = new FileTokenCredentials(tokenPath);
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

type Yaml = Record<string, unknown>;

interface Merged {
  clusters: Yaml[];
  users: Yaml[];
  contexts: Yaml[];
  currentContext: string | undefined;
}

/**
 * Reads and merges kubeconfig files the way client-go's loading rules do: for each named cluster, user
 * and context the first file that defines it wins, and so does the first current-context; files of a
 * KUBECONFIG list that do not exist are skipped, an explicitly given file must exist.
 */
function readKubeconfigs(paths: string[], mustExist: boolean): Merged {
  const merged: Merged = { clusters: [], users: [], contexts: [], currentContext: undefined };
  const seen = { clusters: new Set<string>(), users: new Set<string>(), contexts: new Set<string>() };
  let found = 0;
  for (const path of paths) {
    if (!existsSync(path)) {
      if (mustExist && paths.length === 1) throw new ConfigError(`kubeconfig file ${path} does not exist`);
      continue;
    }
    found++;
    let doc: unknown;
    try {
      doc = parseYaml(readFileSync(path, "utf8"));
    } catch (err) {
      throw new ConfigError(`kubeconfig file ${path} is not valid YAML: ${(err as Error).message}`, { cause: err });
    }
    if (doc === null || doc === undefined) continue; // an empty file is an empty config
    if (typeof doc !== "object" || Array.isArray(doc)) {
      throw new ConfigError(`kubeconfig file ${path} is not a mapping (apiVersion, clusters, users, contexts)`);
    }
    const d = doc as Yaml;
    const dir = dirname(resolve(path));
    for (const key of ["clusters", "users", "contexts"] as const) {
      const list = d[key];
      if (list === undefined || list === null) continue;
      if (!Array.isArray(list)) throw new ConfigError(`kubeconfig file ${path}: ${key} must be a list`);
      for (const [i, entry] of list.entries()) {
        const name = (entry as Yaml | null)?.name;
        if (typeof name !== "string" || name === "") {
          throw new ConfigError(`kubeconfig file ${path}: ${key}[${i}] has no name`);
        }
        if (seen[key].has(name)) continue;
        seen[key].add(name);
        merged[key].push(resolvePaths(key, entry as Yaml, dir));
      }
    }
    if (merged.currentContext === undefined && typeof d["current-context"] === "string" && d["current-context"]) {
      merged.currentContext = d["current-context"];
    }
  }
  if (found === 0) throw new ConfigError(`none of the kubeconfig files exist: ${paths.join(", ")}`);
  return merged;
}

/** Relative file references in a kubeconfig are relative to that file's directory (client-go's ResolvePaths). */
function resolvePaths(key: "clusters" | "users" | "contexts", entry: Yaml, dir: string): Yaml {
  const inner = key === "clusters" ? "cluster" : key === "users" ? "user" : undefined;
  if (!inner || typeof entry[inner] !== "object" || entry[inner] === null) return entry;
  const body = { ...(entry[inner] as Yaml) };
  const fields = inner === "cluster" ? ["certificate-authority"] : ["client-certificate", "client-key", "token-file"];
  for (const f of fields) {
    const v = body[f];
    if (typeof v === "string" && v !== "" && !isAbsolute(v)) body[f] = join(dir, v);
  }
  const exec = body.exec as Yaml | undefined;
  if (exec && typeof exec.command === "string" && /^\.\.?[/\\]/.test(exec.command)) {
    body.exec = { ...exec, command: join(dir, exec.command) };
  }
  return { ...entry, [inner]: body };
}

function readPem(what: string, path: string | undefined, data: string | undefined): string | undefined {
  if (data) return Buffer.from(data, "base64").toString("utf8");
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`${what} file ${path} cannot be read: ${(err as Error).message}`, { cause: err });
  }
}

function kubeconfigConfig(paths: string[], mustExist: boolean, contextName: string | undefined): ClientConfig {
  const merged = readKubeconfigs(paths, mustExist);
  const where = `kubeconfig ${paths.join(delimiter)}`;
  const name = contextName ?? merged.currentContext;
  if (!name) throw new ConfigError(`${where} has no current-context and no context was given`);
  const ctxEntry = merged.contexts.find((c) => c.name === name);
  if (!ctxEntry) {
    const known = merged.contexts.map((c) => String(c.name)).join(", ") || "none";
    throw new ConfigError(`context "${name}" not found in ${where} (contexts: ${known})`);
  }
  const ctx = (ctxEntry.context ?? {}) as Yaml;
  const clusterName = ctx.cluster;
  const userName = ctx.user;
  const clusterEntry = merged.clusters.find((c) => c.name === clusterName);
  if (!clusterEntry)
    throw new ConfigError(
      `context "${name}" refers to cluster "${String(clusterName)}", which ${where} does not define`,
    );
  const userEntry =
    userName === undefined || userName === "" ? undefined : merged.users.find((u) => u.name === userName);
  if (userName && !userEntry)
    throw new ConfigError(`context "${name}" refers to user "${String(userName)}", which ${where} does not define`);

  // client-node reads `token-file` once, relative to the working directory; we keep it out of its hands
  // and re-read it ourselves like client-go does.
  const userBody = { ...((userEntry?.user ?? {}) as Yaml) };
  const tokenFile = typeof userBody["token-file"] === "string" ? (userBody["token-file"] as string) : undefined;
  delete userBody["token-file"];

  const kc = new KubeConfig();
  try {
    kc.loadFromString(
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [clusterEntry],
        users: [{ name: userEntry ? userEntry.name : "anonymous", user: userBody }],
        contexts: [{ name, context: { ...ctx, user: userEntry ? userEntry.name : "anonymous" } }],
        "current-context": name,
      }),
    );
  } catch (err) {
    throw new ConfigError(`${where}, context "${name}": ${(err as Error).message}`, { cause: err });
  }
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster?.server) throw new ConfigError(`cluster "${String(clusterName)}" in ${where} has no server`);
  try {
    new URL(cluster.server);
  } catch {
    throw new ConfigError(`cluster "${cluster.name}" in ${where} has an invalid server URL: ${cluster.server}`);
  }
  const tls: TlsConfig = { insecureSkipTLSVerify: cluster.skipTLSVerify === true };
  const ca = readPem(`certificate-authority of cluster "${cluster.name}":`, cluster.caFile, cluster.caData);
  if (ca) tls.ca = ca;
  if (cluster.tlsServerName) tls.servername = cluster.tlsServerName;
  if (user) {
    const cert = readPem(`client-certificate of user "${user.name}":`, user.certFile, user.certData);
    const key = readPem(`client-key of user "${user.name}":`, user.keyFile, user.keyData);
    if (cert && !key)
      throw new ConfigError(`user "${user.name}" in ${where} has a client certificate but no client key`);
    if (key && !cert)
      throw new ConfigError(`user "${user.name}" in ${where} has a client key but no client certificate`);
    if (cert) tls.cert = cert;
    if (key) tls.key = key;
  }

  const extra: HeaderRecord = {};
  if (user?.impersonateUser) extra["impersonate-user"] = user.impersonateUser;
  let credentials: Credentials;
  if (user && (user.exec || user.authProvider)) {
    credentials = new KubeConfigCredentials(kc, extra);
  } else if (tokenFile) {
    try {
      credentials = new FileTokenCredentials(tokenFile, extra);
    } catch (err) {
      throw new ConfigError(`user "${user?.name ?? ""}" in ${where}: ${(err as Error).message}`, { cause: err });
    }
  } else if (user?.token) {
    credentials = new StaticCredentials({ ...extra, authorization: `Bearer ${user.token}` });
  } else if (user?.username) {
    const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
    credentials = new StaticCredentials({ ...extra, authorization: `Basic ${basic}` });
  } else {
    credentials = new StaticCredentials(extra);
  }
  const namespace = typeof ctx.namespace === "string" && ctx.namespace !== "" ? ctx.namespace : "default";
  return { server: cluster.server, tls, credentials, namespace, source: `${where} context ${name}` };
}
