/**
 * Where the manager's endpoints listen: controller-runtime's bind addresses (`":8080"`,
 * `"127.0.0.1:8080"`, `"[::1]:8443"`, `"0"` for not served) and the defaults that depend on where
 * the operator runs.
 *
 * Why those defaults:
 * - Outside a cluster (a workstation), every endpoint binds loopback: nothing else needs
 *   `/metrics` or the probes, and an unauthenticated `/metrics` on every interface would be
 *   served to the network.
 * - In a pod, the endpoints bind every interface. The kubelet probes the pod IP, Prometheus
 *   scrapes it, and `kubectl port-forward` connects through the pod's loopback; a pod's network
 *   namespace holds only its own interfaces, so "every interface" is exactly the pod's addresses.
 *   Binding POD_IP alone (from the downward API) would break port-forward and the second address of
 *   a dual-stack pod, for no gain.
 */
import { existsSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { serviceAccountDir } from "../client/config.ts";

/** A parsed bind address; `host` undefined means every interface. */
export interface BindAddress {
  host?: string;
  port: number;
}

/** The loopback address the endpoints bind outside a cluster. */
export const LOOPBACK_HOST = "127.0.0.1";

/**
 * Parses a bind address as controller-runtime (Go's `net.Listen`) reads it: `host:port`, with an
 * empty host for every interface and IPv6 hosts in brackets. `"0"` means "not served" and gives
 * `"disabled"`. Throws naming `what` for anything else.
 */
export function parseBindAddress(text: string, what: string): BindAddress | "disabled" {
  if (text === "0") return "disabled";
  const bad = (why: string) =>
    new Error(`${what} "${text}" is not a bind address (${why}); write ":8080", "127.0.0.1:8080", "[::1]:8080" or "0"`);
  const colon = text.lastIndexOf(":");
  if (colon < 0) throw bad("no port");
  let host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (host.startsWith("[")) {
    if (!host.endsWith("]") || isIP(host.slice(1, -1)) !== 6) throw bad("an IPv6 host goes in brackets");
    host = host.slice(1, -1);
  } else if (host.includes(":")) {
    throw bad("an IPv6 host goes in brackets");
  }
  if (host !== "" && isIP(host) === 0 && !/^[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?$/.test(host)) {
    throw bad(`"${host}" is not an IP address or host name`);
  }
  const port = Number(portText);
  if (!/^[0-9]+$/.test(portText) || port > 65535) throw bad("the port must be an integer from 0 to 65535");
  return host === "" ? { port } : { host, port };
}

/** Writes a bind address back in controller-runtime's form (for logs and generated flags). */
export function formatBindAddress(address: BindAddress): string {
  const host = address.host === undefined ? "" : isIP(address.host) === 6 ? `[${address.host}]` : address.host;
  return `${host}:${address.port}`;
}

/**
 * Whether this process runs in a pod: KUBERNETES_SERVICE_HOST is set and the service account token
 * is mounted, the test client-go's in-cluster configuration makes.
 */
export function runningInCluster(env: NodeJS.ProcessEnv = process.env, saDir = serviceAccountDir): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST) && existsSync(join(saDir, "token"));
}

/** The host endpoints bind when none is given: every interface in a pod, loopback elsewhere (see above). */
export function defaultBindHost(inCluster: boolean): string | undefined {
  return inCluster ? undefined : LOOPBACK_HOST;
}

/** How an endpoint's address may be given: controller-runtime's bind address, or the older port and host. */
export interface EndpointAddressOptions {
  /** `"host:port"` or `"0"`; excludes `port`. */
  bindAddress?: string;
  /** A port, bound on `host`. */
  port?: number;
  /** The host `port` binds (default {@link defaultBindHost}). */
  host?: string;
  inCluster: boolean;
}

/**
 * Where an endpoint listens, or `undefined` when it is not served (neither given, or `"0"`).
 * `what` names the options in errors (`"metricsServer.bindAddress"`).
 */
export function resolveBindAddress(
  what: { bindAddress: string; port: string },
  options: EndpointAddressOptions,
): BindAddress | undefined {
  if (options.bindAddress !== undefined && options.port !== undefined) {
    throw new Error(`give ${what.bindAddress} or ${what.port}, not both`);
  }
  if (options.bindAddress !== undefined) {
    const parsed = parseBindAddress(options.bindAddress, what.bindAddress);
    return parsed === "disabled" ? undefined : parsed;
  }
  if (options.port === undefined) return undefined;
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new Error(`${what.port} must be an integer from 0 to 65535, got ${options.port}`);
  }
  const host = options.host ?? defaultBindHost(options.inCluster);
  return host === undefined ? { port: options.port } : { host, port: options.port };
}
