/**
 * The API server port `capstan dev` starts on when `--port` is not given: the one its last run
 * wrote into the kubeconfig, when that port is free. With the data dir keeping the CA and the admin
 * token, the same port makes the kubeconfig valid as it is: a client that loaded it before the
 * restart (k9s, an IDE, `kubectl get -w` retrying) reconnects, as the dashboard's tab does.
 *
 * Guarantees: `undefined` (use a free port) when the kubeconfig is missing, unreadable, not one
 * the devcluster wrote (its `capstan` cluster on 127.0.0.1), or its port is taken now. Between this
 * check and the server's listen another process may take the port; the server's start then fails
 * with EADDRINUSE (rare: it takes a process binding that very port in that moment).
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { parse } from "yaml";
import { KUBECONFIG_CONTEXT } from "../devcluster/kubeconfig.ts";

/** The port of the kubeconfig at `path` when it is the devcluster's and that port is free now. */
export async function previousApiPort(path: string): Promise<number | undefined> {
  let doc: unknown;
  try {
    doc = parse(await readFile(path, "utf8"));
  } catch {
    return undefined; // none yet, or not ours to read: a free port, as on a first run
  }
  const clusters = (doc as { clusters?: { name?: unknown; cluster?: { server?: unknown } }[] } | null)?.clusters;
  const server = Array.isArray(clusters)
    ? clusters.find((c) => c?.name === KUBECONFIG_CONTEXT)?.cluster?.server
    : undefined;
  if (typeof server !== "string" || !URL.canParse(server)) return undefined;
  const url = new URL(server);
  const port = Number(url.port);
  if (url.protocol !== "https:" || url.hostname !== "127.0.0.1" || !Number.isInteger(port) || port <= 0) {
    return undefined;
  }
  return (await loopbackPortFree(port)) ? port : undefined;
}

/** True when a listener can bind `port` on 127.0.0.1 now. */
function loopbackPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}
