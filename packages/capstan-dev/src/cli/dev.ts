/**
 * `capstan dev [operator.ts ...]`: the embedded API server in this process, its kubeconfig in
 * `.capstan/kubeconfig`, the dashboard (docs/dashboard.md) on a loopback port, each operator in a
 * `capstan run` child process against it (operator-process.ts), restarted when one of its own source
 * files changes; Ctrl-C stops everything. Admission handlers and conversions are served on loopback
 * and registered by the operator itself (dev-webhooks.ts).
 *
 * State: the API server keeps objects, CA and certificate in a data dir (`.capstan/data`, beside the
 * kubeconfig), so a restart continues where the last run stopped, with the same resourceVersions;
 * `--fresh` empties it first. The dashboard's access token is kept beside them
 * (`.capstan/dashboard-token`, mode 0600), so a tab opened with the printed address survives too.
 *
 * Expected flow: check the operator files exist, (`--fresh`: empty the data dir,) start the API
 * server on the data dir, write the kubeconfig, start the dashboard with the kept token, print how
 * to use kubectl and where the dashboard is, start the operators, watch
 * what each loads (source-watcher.ts); on SIGINT/SIGTERM stop watching, stop the operators (each
 * gets its graceful stop), then the dashboard, then the server.
 *
 * An operator's files are its module and every project file its child process loaded, as the child
 * reports them (loaded-files-hooks.ts): not a folder's contents, not `node_modules`. A save of a file
 * two operators import restarts both; a save of a file only one imports restarts that one.
 *
 * Each child also reports every reconcile, handler and timer run of its operator when it ends
 * (run-reports.ts): the dashboard keeps them per object for its reconcile timeline.
 *
 * Operators always log JSON to this process: each line goes to the dashboard's logs panel as a
 * structured record (level, message, the object it is about), and to the terminal as is
 * (`--log-format json`) or as the same readable line `capstan run` would print (`pretty`).
 *
 * Guarantees: exit code 0 after Ctrl-C with every child exited, the dashboard and the server
 * stopped; 2 for bad arguments or missing files; 1 when an explicitly chosen dashboard port is
 * busy, or the data dir is in use by another process (a second `capstan dev` in the same folder:
 * refused before it writes anything, the kubeconfig included). An operator that crashes stays
 * down until a file changes (no restart loop that floods the terminal).
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { LOG_FORMATS, LOG_LEVELS, parseCommandArgs, prettyLine } from "capstan/internal";
import { type Dashboard, LogFeed, startDashboard } from "../dashboard/index.ts";
import { type ApiServer, DataDirInUseError, discardDataDir, startApiServer } from "../devcluster/index.ts";
import { readDigest } from "./content-digest.ts";
import { loadOrCreateDashboardToken } from "./dashboard-token-file.ts";
import { devWebhookArgs, devWebhookCertificates, freeLoopbackPort } from "./dev-webhooks.ts";
import { OperatorProcess } from "./operator-process.ts";
import { previousApiPort } from "./previous-api-port.ts";
import { SourceWatcher } from "./source-watcher.ts";
import { removeStaleDevWebhooks } from "./stale-dev-webhooks.ts";

/**
 * The dashboard's port unless `--dashboard-port` says otherwise. A fixed port, so that a browser
 * tab left open (or bookmarked) across `capstan dev` restarts reconnects by itself; when it is
 * busy (a second `capstan dev`), a free port is used instead and printed, as always.
 */
export const DEFAULT_DEV_DASHBOARD_PORT = 7150;

const USAGE = `Usage: capstan dev [operator.ts ...] [options]

Starts the embedded Kubernetes API server, writes its kubeconfig, serves the dashboard (a web page
on 127.0.0.1: objects, events, operator logs; create, edit and delete), runs each operator against
the server and restarts an operator when one of its source files changes (its module, or a project
file it imports). Ctrl-C stops everything.

The cluster's objects are kept in a data dir (.capstan/data): stopped and started again, capstan dev
continues with the same objects and resourceVersions. The dashboard's address carries an access
token, kept in .capstan/dashboard-token (owner-only) so that an open tab survives a restart.

Options:
  --kubeconfig FILE    where to write the kubeconfig (default .capstan/kubeconfig)
  --data-dir DIR       where the API server keeps objects, CA and certificate (default: data beside
                       the kubeconfig, .capstan/data); one capstan dev at a time per data dir
  --fresh              start with an empty cluster: the data dir's contents are deleted first
  --port P             API server port (default: the last run's, from the kubeconfig, when it is
                       free, so the kubeconfig stays valid as it is; else a free one; 0: a free one)
  --log-level L        operators' log level (default info)
  --log-format F       pretty (default) or json
  --dashboard-port P   dashboard port on 127.0.0.1 (default ${DEFAULT_DEV_DASHBOARD_PORT}, or a free port when it is
                       busy; a port given here must be free; 0: any free port)
  --no-dashboard       do not serve the dashboard
  --read-only          the dashboard only shows: it refuses every write and hides its write controls
`;

/** `capstan dev`'s parsed command line. */
export interface DevFlags {
  files: string[];
  kubeconfig: string;
  /** `undefined`: the last run's port when free (previous-api-port.ts), else a free one. */
  port: number | undefined;
  logLevel: string;
  logFormat: string;
  /** `undefined`: the default port with fallback; a number: exactly that port (0: any free one). */
  dashboardPort: number | undefined;
  dashboard: boolean;
  /** The dashboard refuses writes (`--read-only`). */
  readOnly: boolean;
  /** The API server's data dir. */
  dataDir: string;
  /** Empty the data dir before starting. */
  fresh: boolean;
}

/** `capstan dev`. */
export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs("capstan dev", USAGE, () => parseDevFlags(args));
  if (!parsed.ok) return parsed.exitCode;
  const flags = parsed.value;
  const print = (line: string) => process.stdout.write(`${line}\n`);
  const server = await startDevApiServer(flags);
  if (server === undefined) return 1;
  const kubeconfigPath = resolve(flags.kubeconfig);
  // Configurations the last run's operators registered call loopback ports nobody listens on now;
  // this run's operators register theirs again as they start.
  let staleWebhooks: string[];
  try {
    staleWebhooks = await removeStaleDevWebhooks(kubeconfigPath);
  } catch (err) {
    process.stderr.write(
      `capstan dev: cannot remove the last run's webhook configurations: ${(err as Error).message}\n`,
    );
    await server.stop();
    return 1;
  }
  // Operators with admission handlers or conversions serve them on loopback and register them
  // (before anything is printed: a Ctrl-C after the banner finds the signal handlers in place).
  const webhookCerts =
    flags.files.length > 0 ? await devWebhookCertificates(join(dirname(kubeconfigPath), "webhook-certs")) : "";
  const webhookPorts: number[] = [];
  for (const _ of flags.files) webhookPorts.push(await freeLoopbackPort());
  const logs = new LogFeed();
  let dashboard: Dashboard | undefined;
  if (flags.dashboard) {
    try {
      const token = await loadOrCreateDashboardToken(join(dirname(kubeconfigPath), "dashboard-token"));
      dashboard = await startDevDashboard(kubeconfigPath, flags.dashboardPort, logs, token, flags.readOnly);
    } catch (err) {
      process.stderr.write(`capstan dev: the dashboard cannot start: ${(err as Error).message}\n`);
      await server.stop();
      return 1;
    }
  }
  print(`capstan dev: API server ready at ${server.url}, kubeconfig ${flags.kubeconfig}`);
  print("  Use it with kubectl:");
  print(`    kubectl --kubeconfig ${flags.kubeconfig} get crds`);
  print(`    export KUBECONFIG=${kubeconfigPath}`);
  print(`  Objects are kept in ${flags.dataDir} across restarts (--fresh starts empty).`);
  if (dashboard) print(`  Dashboard: ${dashboard.url}`);
  if (staleWebhooks.length > 0) {
    print(`  Removed the last run's webhook configurations, which called its operators: ${staleWebhooks.join(", ")}`);
  }
  if (flags.files.length === 0) print("  No operator given: serving the API server only. Ctrl-C stops it.");

  const labels = outputLabels(flags.files);
  const stopWatching = new AbortController();
  const operators: OperatorProcess[] = [];
  /** Each operator's module, resolved as the child reports it (symbolic links followed). */
  const modules = new Map<OperatorProcess, string>();
  const watcher = new SourceWatcher<OperatorProcess>({
    signal: stopWatching.signal,
    onChange: (op, files) => {
      const folder = dirname(modules.get(op) as string);
      void op.restart(`changed: ${files.map((f) => relative(folder, f)).join(", ")}`);
    },
  });
  for (const [i, file] of flags.files.entries()) {
    const label = labels[i] as string;
    const webhookPort = webhookPorts[i] as number;
    const modulePath = realpathSync(file);
    const op: OperatorProcess = new OperatorProcess({
      file,
      label,
      kubeconfigPath,
      // JSON always: the dashboard reads records; the terminal gets them pretty when asked (below).
      runArgs: ["--log-level", flags.logLevel, "--log-format", "json", ...devWebhookArgs(webhookPort, webhookCerts)],
      print: teeOperatorOutput(label, flags.logFormat === "pretty", logs, print),
      // Until the new child reports what it loaded, its module as it is now (a child that fails
      // before loading it, without a cluster, still restarts on its save).
      onStart: () => watcher.reset(op, [[modulePath, readDigest(modulePath)]]),
      onLoaded: (path, digest) => watcher.track(op, path, digest),
      // Its runs, streamed on the report pipe (run-reports.ts), make the dashboard's timeline.
      onRun: (run) => dashboard?.runs.add(label, run),
    });
    operators.push(op);
    modules.set(op, modulePath);
  }
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
  stopWatching.abort();
  await Promise.all(operators.map((op) => op.stop()));
  await dashboard?.stop();
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

/**
 * The API server on the data dir (emptied first with `--fresh`), or `undefined` after saying on
 * stderr why it cannot start (the data dir in use by another process, or not usable).
 */
async function startDevApiServer(flags: DevFlags): Promise<ApiServer | undefined> {
  try {
    if (flags.fresh) await discardDataDir(flags.dataDir);
    return await startApiServer({
      port: flags.port ?? (await previousApiPort(flags.kubeconfig)) ?? 0,
      kubeconfigPath: flags.kubeconfig,
      dataDir: flags.dataDir,
      // A cluster people use by hand: every namespace has its `default` ServiceAccount, as on a real one.
      namespaceDefaults: true,
    });
  } catch (err) {
    const why =
      err instanceof DataDirInUseError
        ? `the data dir ${flags.dataDir} is in use by process ${err.pid} (another capstan dev in this folder?): ` +
          "stop that one, or give this one another --data-dir and --kubeconfig"
        : `the API server cannot start: ${(err as Error).message}`;
    process.stderr.write(`capstan dev: ${why}\n`);
    return undefined;
  }
}

/**
 * The dashboard on `port`, or on {@link DEFAULT_DEV_DASHBOARD_PORT} falling back to a free port
 * when that one is busy (`port` undefined).
 */
async function startDevDashboard(
  kubeconfigPath: string,
  port: number | undefined,
  logs: LogFeed,
  token: string,
  readOnly: boolean,
): Promise<Dashboard> {
  if (port !== undefined) return startDashboard({ kubeconfigPath, port, logs, token, readOnly });
  try {
    return await startDashboard({ kubeconfigPath, port: DEFAULT_DEV_DASHBOARD_PORT, logs, token, readOnly });
  } catch (err) {
    if ((err as { code?: unknown }).code !== "EADDRINUSE") throw err;
    return startDashboard({ kubeconfigPath, port: 0, logs, token, readOnly });
  }
}

/**
 * The `print` of one operator's process: each line to the dashboard's log feed (without the
 * `[label] ` prefix, under `label`) and to the terminal, as a readable line when `pretty`.
 */
export function teeOperatorOutput(
  label: string,
  pretty: boolean,
  logs: LogFeed,
  print: (line: string) => void,
): (line: string) => void {
  const prefix = `[${label}] `;
  return (line) => {
    const text = line.startsWith(prefix) ? line.slice(prefix.length) : line;
    logs.write(label, text);
    print(pretty && text.startsWith("{") ? `${prefix}${prettyLine(text).replace(/\n$/, "")}` : line);
  };
}

/** Parses `capstan dev`'s arguments; throws a clear error for a bad one. */
export function parseDevFlags(args: string[]): DevFlags | "help" {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      kubeconfig: { type: "string", default: ".capstan/kubeconfig" },
      port: { type: "string" },
      "log-level": { type: "string", default: "info" },
      "log-format": { type: "string", default: "pretty" },
      "dashboard-port": { type: "string" },
      "no-dashboard": { type: "boolean", default: false },
      "read-only": { type: "boolean", default: false },
      "data-dir": { type: "string" },
      fresh: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  if (!(LOG_LEVELS as readonly string[]).includes(values["log-level"])) {
    throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got "${values["log-level"]}"`);
  }
  if (!(LOG_FORMATS as readonly string[]).includes(values["log-format"])) {
    throw new Error(`--log-format must be one of ${LOG_FORMATS.join(", ")}, got "${values["log-format"]}"`);
  }
  let dashboardPort: number | undefined;
  if (values["dashboard-port"] !== undefined) {
    dashboardPort = Number(values["dashboard-port"]);
    if (!Number.isInteger(dashboardPort) || dashboardPort < 0 || dashboardPort > 65535) {
      throw new Error(`--dashboard-port must be an integer from 0 to 65535, got "${values["dashboard-port"]}"`);
    }
  }
  for (const file of positionals) {
    if (!existsSync(file)) throw new Error(`${file}: no such file`);
  }
  if (values["data-dir"] === "") throw new Error("--data-dir must name a directory");
  return {
    files: positionals,
    kubeconfig: values.kubeconfig,
    port,
    logLevel: values["log-level"],
    logFormat: values["log-format"],
    dashboardPort,
    dashboard: !values["no-dashboard"],
    readOnly: values["read-only"],
    dataDir: values["data-dir"] ?? join(dirname(values.kubeconfig), "data"),
    fresh: values.fresh,
  };
}
