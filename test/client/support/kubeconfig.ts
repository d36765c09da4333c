/** Kubeconfig files, fake exec plugins and JWTs for the client's authentication tests. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

/** One cluster, one user, one context named "test" (the current one). */
export interface KubeconfigSpec {
  server: string;
  /** Trusted CA (PEM), written as certificate-authority-data. */
  caPem?: string;
  /** More cluster fields (tls-server-name, extensions, ...). */
  cluster?: Record<string, unknown>;
  userName?: string;
  user?: Record<string, unknown>;
  namespace?: string;
}

/** The kubeconfig document for `spec`. */
export function kubeconfigDoc(spec: KubeconfigSpec): Record<string, unknown> {
  const userName = spec.userName ?? "u";
  return {
    apiVersion: "v1",
    kind: "Config",
    "current-context": "test",
    clusters: [
      {
        name: "c",
        cluster: {
          server: spec.server,
          ...(spec.caPem ? { "certificate-authority-data": Buffer.from(spec.caPem).toString("base64") } : {}),
          ...spec.cluster,
        },
      },
    ],
    users: [{ name: userName, user: spec.user ?? {} }],
    contexts: [
      {
        name: "test",
        context: { cluster: "c", user: userName, ...(spec.namespace ? { namespace: spec.namespace } : {}) },
      },
    ],
  };
}

/** Writes `spec` as YAML to `dir/name` and returns the path. */
export function writeKubeconfig(dir: string, spec: KubeconfigSpec, name = "config"): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(kubeconfigDoc(spec)), { mode: 0o600 });
  return path;
}

/** A temporary folder, removed by the returned function. */
export function tempDir(prefix = "capstan-auth-"): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Writes a fake exec credential plugin: a node script that runs `body` (ES module code with `fs` and
 * `env` in scope). Returns the `exec` section that runs it (`interactiveMode: Never` unless overridden).
 */
export function execPlugin(
  dir: string,
  name: string,
  body: string,
  exec: Record<string, unknown> = {},
): Record<string, unknown> {
  const path = join(dir, `${name}.mjs`);
  writeFileSync(path, `import * as fs from "node:fs";\nconst env = process.env;\n${body}\n`);
  return {
    apiVersion: "client.authentication.k8s.io/v1",
    command: process.execPath,
    args: [path],
    interactiveMode: "Never",
    ...exec,
  };
}

/** Plugin code printing an ExecCredential with `status` (JSON-serializable) for `apiVersion`. */
export function printCredential(
  status: Record<string, unknown>,
  apiVersion = "client.authentication.k8s.io/v1",
): string {
  return `process.stdout.write(${JSON.stringify(JSON.stringify({ apiVersion, kind: "ExecCredential", status }))});`;
}

/** An unsigned JWT with `claims` (enough for exp checks: nothing here verifies signatures). */
export function jwt(claims: Record<string, unknown>): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.sig`;
}
