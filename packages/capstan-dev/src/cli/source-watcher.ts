/**
 * Tells `capstan dev` which of its operators have a changed source file: each operator (an *owner*)
 * has the files it loaded, each with the digest of the content it loaded (content-digest.ts); a
 * file whose content on disk differs from that is changed for that owner.
 *
 * Expected flow: `reset(owner, files)` when an owner's new child starts (its module, as it is on
 * disk now), `track(owner, file, digest)` for each file the child reports it loaded; `onChange`
 * is called with an owner and its changed files once a burst of writes has settled.
 *
 * How: the *folders* of the tracked files are watched (`fs.watch`, not recursive), never the files.
 * A watch on a file follows its inode, and editors save by renaming a new file over the old one
 * (vim, `sed -i`, JetBrains' safe write) or by deleting and re-creating it: after that first save
 * the file's watch reports nothing more. Node 20's recursive `fs.watch` on Linux watches each file
 * that way, and misses every save after the first; a folder's watch reports by name whatever
 * happens to its entries. An event for a tracked name marks the file to be checked; once no event
 * came for {@link DEBOUNCE_MS}, each marked file is read and its digest compared, per owner.
 *
 * Guarantees:
 * - Every way of saving is seen: in place, rename-over, delete and create.
 * - A save that leaves the bytes as they were (a touch, undo to the loaded text) is no change.
 * - A save made between the moment a child loaded a file and `track` is a change: `track` checks
 *   the file against the loaded digest too.
 * - A file that did not exist (digest `null`) is changed once it exists.
 * - `close()` (or the abort of `signal`) removes every folder watch and the pending timer.
 *
 * Caveats: a watched folder that is itself deleted or renamed is not followed (its watch closes);
 * the files in it are checked once, found missing, and reported changed.
 */
import { type FSWatcher, watch } from "node:fs";
import { dirname, join } from "node:path";
import { type ContentDigest, readDigest } from "./content-digest.ts";

/**
 * Wait this long after the last event for a tracked file before reading it. A save is one burst of
 * events well within a millisecond (rename-over, or truncate and write in place, which an early
 * read would catch half-written); "save all" writes several files back to back. Each millisecond
 * here is a millisecond of every restart, and a burst that outlasts it costs one more restart,
 * never a missed save: the next check compares again.
 */
export const DEBOUNCE_MS = 50;

export interface SourceWatcherOptions<Owner> {
  /** `files` (absolute, sorted) of `owner` changed. */
  onChange(owner: Owner, files: string[]): void;
  /** Default {@link DEBOUNCE_MS}. */
  debounceMs?: number;
  signal?: AbortSignal;
}

/** Watches what each owner loaded; see the module documentation. */
export class SourceWatcher<Owner> {
  /** file -> owner -> the digest that owner loaded. */
  private readonly tracked = new Map<string, Map<Owner, ContentDigest>>();
  private readonly folders = new Map<string, FSWatcher>();
  private readonly marked = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly onAbort = () => this.close();

  constructor(private readonly options: SourceWatcherOptions<Owner>) {
    if (options.signal?.aborted) this.closed = true;
    options.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** The files `owner` depends on now, replacing those it had: each with the digest it loaded. */
  reset(owner: Owner, files: Iterable<readonly [string, ContentDigest]>): void {
    const keep = new Set<string>();
    for (const [file, digest] of files) {
      keep.add(file);
      this.track(owner, file, digest);
    }
    for (const [file, owners] of this.tracked) {
      if (!keep.has(file) && owners.delete(owner) && owners.size === 0) this.untrack(file);
    }
  }

  /** `owner` loaded `file` with content `digest`; checked against the disk after the debounce. */
  track(owner: Owner, file: string, digest: ContentDigest): void {
    if (this.closed) return;
    let owners = this.tracked.get(file);
    if (owners === undefined) {
      owners = new Map();
      this.tracked.set(file, owners);
      this.watchFolder(dirname(file));
    }
    owners.set(owner, digest);
    this.mark(file);
  }

  /** The files tracked for `owner`. */
  filesOf(owner: Owner): string[] {
    return [...this.tracked].filter(([, owners]) => owners.has(owner)).map(([file]) => file);
  }

  close(): void {
    if (this.closed && this.folders.size === 0) return;
    this.closed = true;
    this.options.signal?.removeEventListener("abort", this.onAbort);
    for (const watcher of this.folders.values()) watcher.close();
    this.folders.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.marked.clear();
  }

  private watchFolder(folder: string): void {
    if (this.folders.has(folder)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, (_event, name) => {
        if (name === null || name === undefined) {
          // Some platforms do not always say which entry: check every file of the folder.
          for (const file of this.tracked.keys()) if (dirname(file) === folder) this.mark(file);
        } else {
          const file = join(folder, name.toString());
          if (this.tracked.has(file)) this.mark(file);
        }
      });
    } catch {
      // The folder does not exist (an import of a missing folder's file): nothing can appear in it
      // that a watch would see; a save of the importing file restarts the operator.
      return;
    }
    watcher.on("error", () => {
      // The folder was deleted or renamed: its files are gone from here.
      watcher.close();
      if (this.folders.get(folder) === watcher) this.folders.delete(folder);
      for (const file of this.tracked.keys()) if (dirname(file) === folder) this.mark(file);
    });
    this.folders.set(folder, watcher);
  }

  private untrack(file: string): void {
    this.tracked.delete(file);
    this.marked.delete(file);
    const folder = dirname(file);
    for (const other of this.tracked.keys()) if (dirname(other) === folder) return;
    this.folders.get(folder)?.close();
    this.folders.delete(folder);
  }

  private mark(file: string): void {
    if (this.closed) return;
    this.marked.add(file);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.check(), this.options.debounceMs ?? DEBOUNCE_MS);
  }

  private check(): void {
    this.timer = undefined;
    const changed = new Map<Owner, string[]>();
    for (const file of [...this.marked].sort()) {
      const owners = this.tracked.get(file);
      if (owners === undefined) continue;
      const now = readDigest(file);
      for (const [owner, loaded] of owners) {
        if (loaded === now) continue;
        owners.set(owner, now); // reported once; the owner's next child reports what it loads
        const files = changed.get(owner);
        if (files) files.push(file);
        else changed.set(owner, [file]);
      }
    }
    this.marked.clear();
    for (const [owner, files] of changed) this.options.onChange(owner, files);
  }
}
