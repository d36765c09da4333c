/**
 * Watches the folders of `capstan dev`'s operator modules and reports changed source files,
 * debounced: one report per burst of writes.
 *
 * Guarantees: `close()` removes every fs watcher and pending timer. Changes under `node_modules`,
 * `.git` and `.capstan` (the kubeconfig `capstan dev` itself writes) are ignored, and so are test
 * files (`*.test.ts`, `*.spec.ts`): the operator never imports them, and a test run beside
 * `capstan dev` must not restart it.
 *
 * Caveats: a folder that holds `node_modules` (a project root) is watched without its subfolders,
 * so that the watcher does not walk every installed package; keep operators in their own folder.
 */
import { existsSync, type FSWatcher, watch } from "node:fs";
import { join } from "node:path";

/**
 * Editors save in bursts (write a temp file, rename it, touch a backup; "save all" writes several
 * files), and a restart costs a second or two: wait this long after the last change.
 */
export const DEBOUNCE_MS = 300;

const IGNORED = /(^|[/\\])(node_modules|\.git|\.capstan)([/\\]|$)/;
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|json)$/;
const TEST = /\.(test|spec)\.(ts|mts|cts|js|mjs|cjs)$/;

/** Calls `onChange(folder, files)` after a burst of source changes in one of `folders`. */
export function watchSources(
  folders: readonly string[],
  onChange: (folder: string, files: string[]) => void,
): { close(): void } {
  const watchers: FSWatcher[] = [];
  const timers = new Map<string, NodeJS.Timeout>();
  const pending = new Map<string, Set<string>>();
  for (const folder of new Set(folders)) {
    const recursive = !existsSync(join(folder, "node_modules"));
    const watcher = watch(folder, { recursive }, (_event, filename) => {
      const name = filename?.toString();
      if (name === undefined || IGNORED.test(name) || !SOURCE.test(name) || TEST.test(name)) return;
      const files = pending.get(folder) ?? new Set();
      files.add(name);
      pending.set(folder, files);
      clearTimeout(timers.get(folder));
      timers.set(
        folder,
        setTimeout(() => {
          timers.delete(folder);
          pending.delete(folder);
          onChange(folder, [...files].sort());
        }, DEBOUNCE_MS),
      );
    });
    // A folder deleted while watched: nothing more to report from it.
    watcher.on("error", () => watcher.close());
    watchers.push(watcher);
  }
  return {
    close() {
      for (const w of watchers) w.close();
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    },
  };
}
