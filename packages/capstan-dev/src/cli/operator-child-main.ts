/**
 * The entry script of `capstan dev`'s operator child processes (spawned by operator-child.ts): a
 * child starts as a *standby*, with Capstan loaded but no operator, and runs `capstan run` when told.
 *
 * Usage: `node operator-child-main.js [dependency-url ...]`.
 *
 * Expected flow: register loaded-files-hooks.ts (before tsx, see there), load Capstan's entry points
 * (and register the observer that reports the operator's runs, run-reports.ts) and tsx's API (what takes most of a cold start), then the operator's dependencies given on the
 * command line (modules of `node_modules` that the previous child's project files imported), then
 * wait on the IPC channel for the {@link StartMessage}; on it, run the `capstan` command with its
 * arguments in this process, as `node capstan.js <args>` would.
 *
 * Guarantees: nothing of the operator's project is imported before the start message, so a standby
 * spawned before a save runs the saved code. A standby whose `capstan dev` goes away (the IPC
 * channel closes) exits. A start message sent while it still loads is kept and acted on once it has
 * loaded. A module that fails to load here is left for `capstan run` to report.
 *
 * Caveats: a dependency is evaluated when the standby loads it, before the operator's module (in the
 * same environment and working folder), not at its place in the operator's import order. Only
 * JavaScript files are loaded in advance: before tsx is registered, a TypeScript file would fail,
 * and a module that failed stays failed in Node's module cache.
 */
import { createRequire, register } from "node:module";
import { dirname, extname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { LoadedFilesHooksData } from "./loaded-files-hooks.ts";
import { isStartMessage, REPORT_FD, type StartMessage } from "./operator-child-protocol.ts";
import { reportRuns } from "./run-reports.ts";

// Listening first: a start message that arrives while Capstan loads must not be dropped.
const started = new Promise<StartMessage>((resolve) => {
  const onMessage = (message: unknown) => {
    if (!isStartMessage(message)) return;
    process.off("message", onMessage);
    resolve(message);
  };
  process.on("message", onMessage);
});
const onParentGone = () => process.exit(0);
process.once("disconnect", onParentGone);

const requireHere = createRequire(import.meta.url);
const capstanDevRoot = fileURLToPath(new URL("../..", import.meta.url));
const capstanRoot = dirname(requireHere.resolve("capstan/package.json"));
// `module.register` came in Node 20.6; without it the operator's module alone is watched.
if (typeof register === "function") {
  const data: LoadedFilesHooksData = { fd: REPORT_FD, exclude: [capstanRoot, capstanDevRoot] };
  const hooks = new URL(`./loaded-files-hooks${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  register(hooks, { data });
}

let bin: string | undefined;
try {
  ({ CAPSTAN_BIN: bin } = await import("capstan/internal"));
  // Every run of the operator goes to the dashboard's reconcile timeline (run-reports.ts).
  const { observeReconciles } = await import("capstan");
  reportRuns(observeReconciles, REPORT_FD);
  await import("capstan/core");
  await import("tsx/esm/api");
} catch {
  // Whatever failed fails again in `capstan run`, which says why.
}
for (const url of process.argv.slice(2)) {
  if (!/^file:.*\.[cm]?js$/.test(url)) continue;
  try {
    await import(url);
  } catch {
    // The operator's own import of it says why.
  }
}

const { args } = await started;
process.off("disconnect", onParentGone); // `capstan run` watches the channel from here on
bin ??= fileURLToPath(new URL("bin/capstan.js", pathToFileURL(`${capstanRoot}/`)));
process.argv.splice(1, process.argv.length, bin, ...args);
await import(pathToFileURL(bin).href);
