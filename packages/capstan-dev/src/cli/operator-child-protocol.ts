/**
 * What `capstan dev` (operator-child.ts) and each operator child process (operator-child-main.ts)
 * say to each other:
 *
 * - over the IPC channel, one {@link StartMessage} from `capstan dev`: run the operator now;
 * - on the pipe at file descriptor {@link REPORT_FD} of the child, one JSON line per project file the
 *   child loads ({@link LoadedFileReport}), written by loaded-files-hooks.ts before the module is used,
 *   one per package the project imports from `node_modules` ({@link DependencyReport}), and one
 *   per reconcile, handler or timer run of the operator when it ends ({@link RunReport}, written by
 *   run-reports.ts, for the dashboard's reconcile timeline);
 * - on the command line of a standby, the dependencies to load in advance (operator-child-main.ts).
 *
 * Guarantees: a report line is written synchronously, before the child goes on with the file: a
 * child that crashes on a file (a syntax error) has reported it, and `capstan dev` watches it. The
 * same holds for runs: a run is reported before the reconcile's worker takes its next key, in the
 * order runs end, and a child that crashes right after a run has reported it; none is dropped. The
 * price: the pipe is blocking (as the child inherits it), so a worker would wait if `capstan dev`
 * stopped reading while the pipe's buffer (some 200 KB on Linux) is full; `capstan dev` reads it
 * on every turn of its event loop, and a run's line is a few hundred bytes.
 */
import type { ReconcileRun } from "capstan";
import type { ContentDigest } from "./content-digest.ts";

/**
 * The child's file descriptor of the report pipe: `capstan dev` spawns it with the stdio
 * `[ignore, stdout pipe, stderr pipe, ipc, report pipe]`.
 */
export const REPORT_FD = 4;

/** `capstan dev` -> child: run `capstan <args>` (`run <operator> --kubeconfig ...`) now. */
export interface StartMessage {
  type: "capstan-dev:start";
  args: string[];
}

/** Child -> `capstan dev`: the operator loaded `path` (absolute) with this content; `null`: it looked for it and found none. */
export interface LoadedFileReport {
  kind: "file";
  path: string;
  digest: ContentDigest;
}

/**
 * Child -> `capstan dev`: a project file imports this module of `node_modules` (a `file:` URL, as
 * resolved). `node_modules` is not watched: the next standby may load it in advance.
 */
export interface DependencyReport {
  kind: "dependency";
  url: string;
}

/** Child -> `capstan dev`: the operator finished a run (capstan's run traces, `observeReconciles`). */
export interface RunReport {
  kind: "run";
  run: ReconcileRun;
}

export type ChildReport = LoadedFileReport | DependencyReport | RunReport;

export function isStartMessage(message: unknown): message is StartMessage {
  const m = message as Partial<StartMessage> | null;
  return (
    typeof m === "object" &&
    m !== null &&
    m.type === "capstan-dev:start" &&
    Array.isArray(m.args) &&
    m.args.every((a) => typeof a === "string")
  );
}

export function formatReport(report: ChildReport): string {
  return `${JSON.stringify(report)}\n`;
}

/** The report on one line of the pipe, or `undefined` for a line that is not one. */
export function parseReport(line: string): ChildReport | undefined {
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined; // not JSON: not a report
  }
  if (r.kind === "file" && typeof r.path === "string" && (typeof r.digest === "string" || r.digest === null)) {
    return { kind: "file", path: r.path, digest: r.digest };
  }
  if (r.kind === "dependency" && typeof r.url === "string") return { kind: "dependency", url: r.url };
  if (r.kind === "run" && isRun(r.run)) return { kind: "run", run: r.run };
  return undefined;
}

const RUN_TYPES = new Set(["reconcile", "handler", "timer"]);
const RESULTS = new Set(["ok", "requeue", "error"]);

/** The shape of a run as the dashboard relies on it (the child is ours, but its capstan may be older). */
function isRun(value: unknown): value is ReconcileRun {
  const run = value as Partial<ReconcileRun> | null;
  return (
    typeof run === "object" &&
    run !== null &&
    typeof run.id === "number" &&
    typeof run.type === "string" &&
    RUN_TYPES.has(run.type) &&
    typeof run.controller === "string" &&
    typeof run.start === "number" &&
    typeof run.durationMs === "number" &&
    typeof run.object === "object" &&
    run.object !== null &&
    typeof run.object.kind === "string" &&
    typeof run.object.name === "string" &&
    typeof run.object.namespace === "string" &&
    typeof run.object.group === "string" &&
    typeof run.outcome === "object" &&
    run.outcome !== null &&
    RESULTS.has(run.outcome.result) &&
    Array.isArray(run.writes)
  );
}
