/** The kubeconfig the devcluster hands to kubectl and to clients: its CA, its URL, one bearer-token user. */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { stringify } from "yaml";

/** The names used inside the kubeconfig for its single cluster, user and context. */
export const KUBECONFIG_CONTEXT = "capstan";

/** A fresh random bearer token (256 bits, URL-safe). */
export function newBearerToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Renders a kubeconfig YAML for one cluster reached at `server` with the given CA and bearer token. */
export function renderKubeconfig(options: { server: string; caPem: string; token: string }): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: KUBECONFIG_CONTEXT,
        cluster: {
          server: options.server,
          "certificate-authority-data": Buffer.from(options.caPem).toString("base64"),
        },
      },
    ],
    users: [{ name: KUBECONFIG_CONTEXT, user: { token: options.token } }],
    contexts: [
      {
        name: KUBECONFIG_CONTEXT,
        context: { cluster: KUBECONFIG_CONTEXT, user: KUBECONFIG_CONTEXT, namespace: "default" },
      },
    ],
    "current-context": KUBECONFIG_CONTEXT,
    preferences: {},
  });
}

/** Writes a kubeconfig readable by its owner only (mode 0600), creating the folder if needed. */
export async function writeKubeconfig(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content, { mode: 0o600 });
  // writeFile's mode applies only when it creates the file; an existing file keeps its old mode otherwise.
  const { chmod } = await import("node:fs/promises");
  await chmod(path, 0o600);
}
