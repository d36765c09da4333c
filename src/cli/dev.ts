/**
 * `capstan dev [operator.ts ...]`: the embedded API server in this process, its kubeconfig in
 * `.capstan/kubeconfig`, each operator in a `capstan run` child process against it, restarted when
 * a source file in its folder changes; Ctrl-C stops everything.
 *
 * Expected flow: check the operator files exist, start the API server, write the kubeconfig, print
 * how to use kubectl, start the operators, watch their folders; on SIGINT/SIGTERM stop watching,
 * stop the operators (each gets its graceful stop), then the server.
 *
 * Guarantees: exit code 0 after Ctrl-C with every child exited and the server stopped; 2 for bad
 * arguments or missing files. An operator that crashes stays down until a file changes (no
 * restart loop that floods the terminal).
 */
import { existsSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startApiServer } from "../devcluster/index.ts";
import { LOG_FORMATS, LOG_LEVELS } from "./log-output.ts";
import { OperatorProcess } from "./operator-process.ts";
import { watchSources } from "./source-watcher.ts";

const USAGE = `Usage: capstan dev [operator.ts ...] [options]

Starts the embedded Kubernetes API server, writes its kubeconfig, runs each operator against it and
restarts an operator when a source file in its folder changes. Ctrl-C stops everything.

Options:
  --kubeconfig FILE    where to write the kubeconfig (default .capstan/kubeconfig)
  --port P             API server port (default 0: a free one)
  --log-level L        operators' log level (default info)
  --log-format F       pretty (default) or json
`;

interface DevFlags {
  files: string[];
  kubeconfig: string;
  port: number;
  logLevel: string;
  logFormat: string;
}

/** `capstan dev`. */
export async function run(args: string[]): Promise<number> {
  let flags: DevFlags | "help";
  try {
    flags = parse(args);
  } catch (err) {
    process.stderr.write(`capstan dev: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (flags === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  const print = (line: string) => process.stdout.write(`${line}\n`);
  // A cluster people use by hand: every namespace has its `default` ServiceAccount, as on a real one.
  const server = await startApiServer({ port: flags.port, kubeconfigPath: flags.kubeconfig, namespaceDefaults: true });
  const kubeconfigPath = resolve(flags.kubeconfig);
  print(`capstan dev: API server ready at ${server.url}, kubeconfig ${flags.kubeconfig}`);
  print("  Use it with kubectl:");
  print(`    kubectl --kubeconfig ${flags.kubeconfig} get crds`);
  print(`    export KUBECONFIG=${kubeconfigPath}`);
  if (flags.files.length === 0) print("  No operator given: serving the API server only. Ctrl-C stops it.");

  const labels = outputLabels(flags.files);
  const operators = flags.files.map(
    (file, i) =>
      new OperatorProcess({
        file,
        label: labels[i],
        kubeconfigPath,
        runArgs: ["--log-level", flags.logLevel, "--log-format", flags.logFormat],
        print,
      }),
  );
  const folders = new Map<string, OperatorProcess[]>();
  for (const op of operators) {
    const folder = dirname(resolve(op.file));
    folders.set(folder, [...(folders.get(folder) ?? []), op]);
  }
  const watcher = watchSources([...folders.keys()], (folder, files) => {
    for (const op of folders.get(folder) ?? []) void op.restart(`changed: ${files.join(", ")}`);
  });
  await Promise.all(operators.map((op) => op.restart("start")));

  await new Promise<void>((resolveStop) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      print(`capstan dev: ${signal}, stopping`);
      resolveStop();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  watcher.close();
  await Promise.all(operators.map((op) => op.stop()));
  await server.stop();
  print("capstan dev: stopped");
  return 0;
}

/**
 * How each operator's output lines are labelled: the file's name, or its folder and name when
 * several operators share a file name (`guitar/operator.ts`, `exchangerate/operator.ts`).
 */
export function outputLabels(files: readonly string[]): string[] {
  const names = files.map((f) => basename(f));
  return files.map((file, i) =>
    names.filter((n) => n === names[i]).length > 1
      ? `${basename(dirname(resolve(file)))}/${names[i]}`
      : (names[i] as string),
  );
}

function parse(args: string[]): DevFlags | "help" {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      kubeconfig: { type: "string", default: ".capstan/kubeconfig" },
      port: { type: "string", default: "0" },
      "log-level": { type: "string", default: "info" },
      "log-format": { type: "string", default: "pretty" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  if (!(LOG_LEVELS as readonly string[]).includes(values["log-level"])) {
    throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got "${values["log-level"]}"`);
  }
  if (!(LOG_FORMATS as readonly string[]).includes(values["log-format"])) {
    throw new Error(`--log-format must be one of ${LOG_FORMATS.join(", ")}, got "${values["log-format"]}"`);
  }
  for (const file of positionals) {
    if (!existsSync(file)) throw new Error(`${file}: no such file`);
  }
  return {
    files: positionals,
    kubeconfig: values.kubeconfig,
    port,
    logLevel: values["log-level"],
    logFormat: values["log-format"],
  };
}
