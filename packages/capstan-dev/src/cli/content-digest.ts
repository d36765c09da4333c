/**
 * The digest `capstan dev` compares a source file by: the same function in the operator's child
 * process (what it loaded, see loaded-files-hooks.ts) and in `capstan dev` (what is on disk now, see
 * source-watcher.ts), so that a save is a change exactly when the bytes differ. A touch, or a save
 * that writes the same text back, is no change.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** A file's content digest, or `null` for a file that does not exist (or cannot be read). */
export type ContentDigest = string | null;

/** The digest of `bytes` (SHA-1: fast, and collisions between two saves of a file are no concern). */
export function digestOf(bytes: string | Uint8Array): string {
  return createHash("sha1").update(bytes).digest("hex");
}

/** The digest of the file at `path` as it is now; `null` when it does not exist or is not a file. */
export function readDigest(path: string): ContentDigest {
  try {
    return digestOf(readFileSync(path));
  } catch {
    return null;
  }
}
