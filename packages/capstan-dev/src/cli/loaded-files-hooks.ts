/**
 * Module customization hooks (`module.register`) of `capstan dev`'s operator child processes, run in
 * Node's hooks thread: each project file the operator loads is reported to `capstan dev`, with the
 * digest of the bytes loaded, so that `capstan dev` restarts the operator exactly when one of *its*
 * files changes (see operator-child-protocol.ts for the report pipe).
 *
 * Expected flow: operator-child-main.ts registers these hooks first, before tsx registers its own
 * for a TypeScript operator. Hooks registered later run first, so tsx resolves `./lib.js` to
 * `./lib.ts` and asks the next hook (this one) to load it: `load` here sees the file's bytes as read
 * from disk, before tsx compiles them.
 *
 * Guarantees:
 * - A file is reported (one JSON line, written synchronously) before the module is handed on, even
 *   when it then fails to compile: a crashed operator's files are known.
 * - A relative import that does not resolve is reported with digest `null` (each path tried, tsx
 *   tries several extensions): creating that file is a change.
 * - Not reported as project files: files under `node_modules`, the folders in `exclude` (Capstan's
 *   own packages, which a workspace or a `file:` dependency links from outside `node_modules`), and
 *   anything not a `file:` URL (`node:` built-ins).
 * - A module of `node_modules` that a project file imports is reported as a dependency (its URL),
 *   once: what the next standby loads in advance.
 *
 * Caveats: only what goes through Node's ES module loader is seen. Files a CommonJS module loads
 * with `require()`, and files the operator reads itself (`readFileSync` of a template), are not.
 */
import { writeSync } from "node:fs";
import type { InitializeHook, LoadHook, ResolveHook } from "node:module";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";
import { type ContentDigest, digestOf, readDigest } from "./content-digest.ts";
import { formatReport } from "./operator-child-protocol.ts";

/** What operator-child-main.ts passes to {@link initialize}. */
export interface LoadedFilesHooksData {
  /** The report pipe's file descriptor. */
  fd: number;
  /** Absolute folders whose files are not the project's. */
  exclude: string[];
}

let fd: number | undefined;
let exclude: string[] = [];
/** What was reported already, so that a file imported from several modules is one line. */
const reported = new Map<string, ContentDigest>();
const dependencies = new Set<string>();

export const initialize: InitializeHook<LoadedFilesHooksData> = (data) => {
  fd = data.fd;
  exclude = data.exclude.map((folder) => (folder.endsWith(sep) ? folder : folder + sep));
};

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  let result: Awaited<ReturnType<typeof nextResolve>>;
  try {
    result = await nextResolve(specifier, context);
  } catch (err) {
    const missing = intendedPath(specifier, context.parentURL);
    if (missing !== undefined) report(missing, null);
    throw err;
  }
  const { parentURL } = context;
  if (parentURL !== undefined && isDependency(result.url) && projectPath(parentURL) !== undefined) {
    reportDependency(result.url);
  }
  return result;
};

export const load: LoadHook = async (url, context, nextLoad) => {
  const path = projectPath(url);
  if (path === undefined) return nextLoad(url, context);
  let result: Awaited<ReturnType<typeof nextLoad>>;
  try {
    result = await nextLoad(url, context);
  } catch (err) {
    report(path, readDigest(path));
    throw err;
  }
  const { source } = result;
  // CommonJS comes without source on Node 20 (its own loader reads the file): read it here.
  report(path, source === undefined || source === null ? readDigest(path) : digestOf(bytesOf(source)));
  return result;
};

function report(path: string, digest: ContentDigest): void {
  if (reported.get(path) === digest) return;
  reported.set(path, digest);
  write(formatReport({ kind: "file", path, digest }));
}

function reportDependency(url: string): void {
  if (dependencies.has(url)) return;
  dependencies.add(url);
  write(formatReport({ kind: "dependency", url }));
}

function write(line: string): void {
  if (fd === undefined) return;
  try {
    writeSync(fd, line);
  } catch {
    // `capstan dev` is gone: nobody is listening.
  }
}

function bytesOf(source: string | ArrayBuffer | NodeJS.TypedArray): string | Uint8Array {
  if (typeof source === "string") return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
}

/** The project file `url` names, or `undefined` when it is not one (see the module doc). */
function projectPath(url: string): string | undefined {
  if (!url.startsWith("file:")) return undefined;
  const path = fileURLToPath(url);
  if (path.includes(`${sep}node_modules${sep}`)) return undefined;
  if (exclude.some((folder) => path.startsWith(folder))) return undefined;
  return path;
}

/** Whether `url` is a module of an installed package (not Capstan's own, which a standby has loaded). */
function isDependency(url: string): boolean {
  if (!url.startsWith("file:")) return false;
  const path = fileURLToPath(url);
  return path.includes(`${sep}node_modules${sep}`) && !exclude.some((folder) => path.startsWith(folder));
}

/** The project file a relative (or absolute) `specifier` would name from `parentURL`. */
function intendedPath(specifier: string, parentURL: string | undefined): string | undefined {
  if (parentURL === undefined || !/^(\.{1,2}\/|\/|file:)/.test(specifier)) return undefined;
  try {
    return projectPath(new URL(specifier, parentURL).href);
  } catch {
    return undefined;
  }
}
