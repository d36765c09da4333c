import { loadDevCommand } from "./dev-package.ts";

/** A `capstan` subcommand. Each lives in its own module and is loaded only when it runs. */
export interface Command {
  name: string;
  summary: string;
  run(args: string[]): Promise<number>;
}

type CommandModule = { run(args: string[]): Promise<number> };

function lazy(name: string, summary: string, load: () => Promise<CommandModule>): Command {
  return { name, summary, run: async (args) => (await load()).run(args) };
}

/** A command of capstan-dev, loaded when it runs. */
function development(name: string, summary: string): Command {
  return lazy(name, summary, () => loadDevCommand(name));
}

export const commands: Command[] = [
  development("apiserver", "Run the embedded Kubernetes API server and write its kubeconfig"),
  lazy("run", "Run an operator against a cluster (kubeconfig, or in-cluster in a pod)", () => import("./run.ts")),
  development("dev", "Run operators against the embedded API server, restarting them when their files change"),
  lazy("generate", "Print an operator's CRDs, RBAC, Deployment or Dockerfile", () => import("./generate.ts")),
  lazy("new", "Create an operator project: a resource, a controller, its test", () => import("./new.ts")),
  lazy("vendor", "Copy a Capstan checkout's packed packages into this project's vendor/", () => import("./vendor.ts")),
  lazy("version", "Print the versions of capstan and capstan-dev", () => import("./version-command.ts")),
];

export function findCommand(name: string): Command | undefined {
  return commands.find((c) => c.name === name);
}
