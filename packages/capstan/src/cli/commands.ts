import { loadDevCommand } from "./dev-package.ts";

/** A `capstan` subcommand. Each lives in its own module and is loaded only when it runs. */
export interface Command {
  name: string;
  summary: string;
  run(args: string[]): Promise<number>;
}

function lazy(name: string, summary: string, load: () => Promise<{ run(args: string[]): Promise<number> }>): Command {
  return { name, summary, run: async (args) => (await load()).run(args) };
}

export const commands: Command[] = [
  lazy("apiserver", "Run the embedded Kubernetes API server and write its kubeconfig", () =>
    loadDevCommand("apiserver"),
  ),
  lazy("run", "Run an operator against a cluster (kubeconfig, or in-cluster in a pod)", () => import("./run.ts")),
  lazy("dev", "Run operators against the embedded API server, restarting them when their files change", () =>
    loadDevCommand("dev"),
  ),
  lazy("generate", "Print an operator's CRDs, RBAC, Deployment or Dockerfile", () => import("./generate.ts")),
  lazy("new", "Create an operator project: a resource, a controller, its test", () => import("./new.ts")),
];

export function findCommand(name: string): Command | undefined {
  return commands.find((c) => c.name === name);
}
