/**
 * What `capstan dev` (operator-child.ts) and each operator child process (operator-child-main.ts)
 * say to each other:
 *
 * - over the IPC channel, one {@link StartMessage} from `capstan dev`: run the operator now;
 * - on the pipe at file descriptor {@link REPORT_FD} of the child, one JSON line per project file the
 *   child loads ({@link LoadedFileReport}), written by loaded-files-hooks.ts before the module is used,
 *   and one per package the project imports from `node_modules` ({@link DependencyReport});
 * - on the command line of a standby, the dependencies to load in advance (operator-child-main.ts).
 *
 * Guarantees: a report line is written synchronously, before the child goes on with the file: a
 * child that crashes on a file (a syntax error) has reported it, and `capstan dev` watches it.
 */
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

export type ChildReport = LoadedFileReport | DependencyReport;

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
  return undefined;
}
