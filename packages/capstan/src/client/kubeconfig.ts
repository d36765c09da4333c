/**
 * Kubeconfig files: reading and merging them the way client-go's clientcmd loading rules do, and typed,
 * checked access to the cluster, user and context entries (the kubeconfig v1 field names, exactly).
 *
 * Guarantees:
 * - For each named cluster, user and context the first file that defines it wins, and so does the first
 *   current-context; files of a KUBECONFIG list that do not exist are skipped, a file named alone must
 *   exist.
 * - Every entry remembers the file that defined it (client-go's `LocationOfOrigin`): messages name it,
 *   and refreshed oidc tokens are written back to it.
 * - Relative file references are made absolute against that file's folder, as client-go's
 *   `ResolveLocalPaths` does: `certificate-authority`, `client-certificate`, `client-key`, `tokenFile`,
 *   and an exec `command` that contains a path separator (a bare name is looked up on the PATH).
 * - A field of the wrong type (`token: 12345`, `as-groups: admin`) is a `ConfigError` naming the file,
 *   the entry and the field, where client-go would fail to decode the file.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "./config-error.ts";
import type { ExecConfig } from "./exec-credential.ts";

type Yaml = Record<string, unknown>;

/** One named cluster, user or context, with the file that defined it. */
export interface Entry {
  name: string;
  /** The `cluster` / `user` / `context` mapping (empty when the entry has none). */
  body: Yaml;
  /** Absolute path of the kubeconfig file that defined the entry. */
  file: string;
}

/** The merge of one or more kubeconfig files. */
export interface Kubeconfigs {
  paths: string[];
  clusters: Map<string, Entry>;
  users: Map<string, Entry>;
  contexts: Map<string, Entry>;
  currentContext: string | undefined;
}

/** Reads and merges kubeconfig files (see the module comment). */
export function readKubeconfigs(paths: string[], mustExist: boolean): Kubeconfigs {
  const merged: Kubeconfigs = {
    paths,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: undefined,
  };
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
      throw new ConfigError(`kubeconfig file ${path} is not valid YAML: ${oneLine((err as Error).message)}`, {
        cause: err,
      });
    }
    if (doc === null || doc === undefined) continue; // an empty file is an empty config
    if (typeof doc !== "object" || Array.isArray(doc)) {
      throw new ConfigError(`kubeconfig file ${path} is not a mapping (apiVersion, clusters, users, contexts)`);
    }
    const d = doc as Yaml;
    const file = resolve(path);
    for (const [key, inner] of [
      ["clusters", "cluster"],
      ["users", "user"],
      ["contexts", "context"],
    ] as const) {
      const list = d[key];
      if (list === undefined || list === null) continue;
      if (!Array.isArray(list)) throw new ConfigError(`kubeconfig file ${path}: ${key} must be a list`);
      for (const [i, item] of list.entries()) {
        const name = (item as Yaml | null)?.name;
        if (typeof name !== "string" || name === "") {
          throw new ConfigError(`kubeconfig file ${path}: ${key}[${i}] has no name`);
        }
        if (merged[key].has(name)) continue;
        const body = (item as Yaml)[inner];
        if (body !== undefined && body !== null && (typeof body !== "object" || Array.isArray(body))) {
          throw new ConfigError(`kubeconfig file ${path}: ${key}[${i}] ("${name}"): ${inner} must be a mapping`);
        }
        merged[key].set(name, { name, body: resolvePaths(inner, { ...((body as Yaml) ?? {}) }, dirname(file)), file });
      }
    }
    const current = d["current-context"];
    if (merged.currentContext === undefined && typeof current === "string" && current !== "") {
      merged.currentContext = current;
    }
  }
  if (found === 0) throw new ConfigError(`none of the kubeconfig files exist: ${paths.join(", ")}`);
  return merged;
}

function resolvePaths(inner: "cluster" | "user" | "context", body: Yaml, dir: string): Yaml {
  const fields =
    inner === "cluster"
      ? ["certificate-authority"]
      : inner === "user"
        ? ["client-certificate", "client-key", "tokenFile"]
        : [];
  for (const f of fields) {
    const v = body[f];
    if (typeof v === "string" && v !== "" && !isAbsolute(v)) body[f] = join(dir, v);
  }
  const exec = body.exec as Yaml | undefined;
  if (inner === "user" && exec && typeof exec === "object") {
    const command = exec.command;
    // Only a command with a separator is a path; a bare name is looked up on the PATH.
    if (typeof command === "string" && command.includes(sep) && !isAbsolute(command)) {
      body.exec = { ...exec, command: join(dir, command) };
    }
  }
  return body;
}

/** Typed reads of one mapping; a wrong type is a ConfigError naming `where` and the field. */
class Fields {
  readonly #obj: Yaml;
  readonly #where: string;
  readonly #prefix: string;
  constructor(obj: Yaml, where: string, prefix = "") {
    this.#obj = obj;
    this.#where = where;
    this.#prefix = prefix;
  }

  #fail(key: string, what: string): never {
    throw new ConfigError(`${this.#where}: ${this.#prefix}${key} must be ${what}`);
  }

  raw(key: string): unknown {
    const v = this.#obj[key];
    return v === null ? undefined : v;
  }

  /** A string field; `""` counts as absent, as Go's zero value does. */
  string(key: string): string | undefined {
    const v = this.raw(key);
    if (v === undefined || v === "") return undefined;
    if (typeof v !== "string") this.#fail(key, "a string");
    return v;
  }

  bool(key: string): boolean {
    const v = this.raw(key);
    if (v === undefined) return false;
    if (typeof v !== "boolean") this.#fail(key, "true or false");
    return v;
  }

  strings(key: string): string[] {
    const v = this.raw(key);
    if (v === undefined) return [];
    if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) this.#fail(key, "a list of strings");
    return v as string[];
  }

  /** A `[]byte` field: base64 in the file, decoded here (PEM text). */
  base64(key: string): string | undefined {
    const v = this.string(key);
    if (v === undefined) return undefined;
    const compact = v.replace(/[\r\n]/g, "");
    if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) this.#fail(key, "base64");
    return Buffer.from(compact, "base64").toString("utf8");
  }

  mapping(key: string): Yaml | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== "object" || Array.isArray(v)) this.#fail(key, "a mapping");
    return v as Yaml;
  }

  list(key: string): unknown[] {
    const v = this.raw(key);
    if (v === undefined) return [];
    if (!Array.isArray(v)) this.#fail(key, "a list");
    return v;
  }
}

/** A kubeconfig `cluster`. */
export interface KubeCluster {
  server?: string;
  certificateAuthority?: string;
  /** Decoded `certificate-authority-data` (PEM). */
  certificateAuthorityData?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
  disableCompression: boolean;
  /** The `client.authentication.k8s.io/exec` extension, handed to exec plugins as `spec.cluster.config`. */
  execExtension?: unknown;
}

/** The cluster extension client-go passes to exec plugins (clientcmd `clusterExtensionKey`). */
const execExtensionName = "client.authentication.k8s.io/exec";

export function parseCluster(body: Yaml, where: string): KubeCluster {
  const f = new Fields(body, where);
  const cluster: KubeCluster = {
    insecureSkipTlsVerify: f.bool("insecure-skip-tls-verify"),
    disableCompression: f.bool("disable-compression"),
  };
  assign(cluster, "server", f.string("server"));
  assign(cluster, "certificateAuthority", f.string("certificate-authority"));
  assign(cluster, "certificateAuthorityData", f.base64("certificate-authority-data"));
  assign(cluster, "tlsServerName", f.string("tls-server-name"));
  assign(cluster, "proxyUrl", f.string("proxy-url"));
  for (const ext of f.list("extensions")) {
    if (typeof ext === "object" && ext !== null && (ext as Yaml).name === execExtensionName) {
      cluster.execExtension = (ext as Yaml).extension;
    }
  }
  return cluster;
}

/** A kubeconfig `user` (client-go's AuthInfo). */
export interface KubeUser {
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  clientCertificate?: string;
  /** Decoded `client-certificate-data` (PEM). */
  clientCertificateData?: string;
  clientKey?: string;
  /** Decoded `client-key-data` (PEM). */
  clientKeyData?: string;
  /** `as`: the user to impersonate. */
  as?: string;
  asUid?: string;
  asGroups: string[];
  asUserExtra: Record<string, string[]>;
  exec?: ExecConfig;
  authProvider?: { name: string; config: Record<string, string> };
}

export function parseUser(body: Yaml, where: string): KubeUser {
  const f = new Fields(body, where);
  const user: KubeUser = { asGroups: f.strings("as-groups"), asUserExtra: {} };
  assign(user, "token", f.string("token"));
  assign(user, "tokenFile", f.string("tokenFile"));
  assign(user, "username", f.string("username"));
  assign(user, "password", f.string("password"));
  assign(user, "clientCertificate", f.string("client-certificate"));
  assign(user, "clientCertificateData", f.base64("client-certificate-data"));
  assign(user, "clientKey", f.string("client-key"));
  assign(user, "clientKeyData", f.base64("client-key-data"));
  assign(user, "as", f.string("as"));
  assign(user, "asUid", f.string("as-uid"));
  const extra = f.mapping("as-user-extra") ?? {};
  const extraFields = new Fields(extra, where, "as-user-extra.");
  for (const key of Object.keys(extra)) user.asUserExtra[key] = extraFields.strings(key);

  const exec = f.mapping("exec");
  if (exec) {
    const e = new Fields(exec, where, "exec.");
    const env = e.list("env").map((item, i) => {
      if (typeof item !== "object" || item === null) {
        throw new ConfigError(`${where}: exec.env[${i}] must be a mapping with name and value`);
      }
      const v = new Fields(item as Yaml, where, `exec.env[${i}].`);
      return { name: v.string("name") ?? "", value: v.string("value") ?? "" };
    });
    user.exec = { args: e.strings("args"), env, provideClusterInfo: e.bool("provideClusterInfo") };
    assign(user.exec, "apiVersion", e.string("apiVersion"));
    assign(user.exec, "command", e.string("command"));
    assign(user.exec, "installHint", e.string("installHint"));
    assign(user.exec, "interactiveMode", e.string("interactiveMode"));
  }

  const provider = f.mapping("auth-provider");
  if (provider) {
    const p = new Fields(provider, where, "auth-provider.");
    const raw = p.mapping("config") ?? {};
    const c = new Fields(raw, where, "auth-provider.config.");
    const config: Record<string, string> = {};
    for (const key of Object.keys(raw)) {
      const v = c.string(key);
      if (v !== undefined) config[key] = v;
    }
    user.authProvider = { name: p.string("name") ?? "", config };
  }
  return user;
}

/** A kubeconfig `context`. */
export interface KubeContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}

export function parseContext(body: Yaml, where: string): KubeContext {
  const f = new Fields(body, where);
  const context: KubeContext = {};
  assign(context, "cluster", f.string("cluster"));
  assign(context, "user", f.string("user"));
  assign(context, "namespace", f.string("namespace"));
  return context;
}

/** Sets an optional property only when there is a value (exactOptionalPropertyTypes-friendly). */
function assign<T, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, " ");
}
