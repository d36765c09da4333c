import { parseArgs } from "node:util";
import { startApiServer } from "../devcluster/index.ts";

const USAGE = `Usage: capstan apiserver [--host 127.0.0.1] [--port 6443|0] [--kubeconfig .capstan/kubeconfig] [--no-kubelet] [--data-dir DIR]

Starts the embedded Kubernetes API server (HTTPS, its own CA, a random bearer token), writes a
kubeconfig for it (mode 0600) and prints one line "ready <https-url> <kubeconfig-path>" once it
accepts requests. Stops cleanly on SIGINT/SIGTERM. A simulated kubelet runs one Node and makes pods
Running; --no-kubelet turns it off (pods stay Pending). --data-dir DIR keeps objects, CA, certificate
and token in DIR, so a restart (even after kill -9) continues with them; without it all is in memory.
RBAC is on, as on every real cluster: the kubeconfig's token is the admin (system:masters), other
identities (ServiceAccount tokens from "kubectl create token", impersonation) may do what their
bindings grant, a request without a token is system:anonymous (docs/rbac.md). --rbac, which once
turned it on, is still accepted and changes nothing.
`;

/** `capstan apiserver`: runs the embedded API server until SIGINT/SIGTERM. */
export async function run(args: string[]): Promise<number> {
  let values: {
    host?: string;
    port?: string;
    kubeconfig?: string;
    help?: boolean;
    "no-kubelet"?: boolean;
    rbac?: boolean;
    "data-dir"?: string;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string", default: "6443" },
        kubeconfig: { type: "string", default: ".capstan/kubeconfig" },
        help: { type: "boolean", short: "h" },
        "no-kubelet": { type: "boolean", default: false },
        // Accepted for the scripts written when RBAC was opt-in; RBAC is always on.
        rbac: { type: "boolean", default: false },
        "data-dir": { type: "string" },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`capstan apiserver: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`capstan apiserver: --port must be an integer from 0 to 65535, got "${values.port}"\n`);
    return 2;
  }
  const server = await startApiServer({
    host: values.host,
    port,
    kubeconfigPath: values.kubeconfig,
    kubelet: !values["no-kubelet"],
    dataDir: values["data-dir"],
    // A cluster people use by hand: every namespace has its `default` ServiceAccount, as on a real one.
    namespaceDefaults: true,
  });
  process.stdout.write(`ready ${server.url} ${values.kubeconfig}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.stop();
  return 0;
}
