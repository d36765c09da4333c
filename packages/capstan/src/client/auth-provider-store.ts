/**
 * Reads and writes one kubeconfig user's `auth-provider.config` in the file that defines that user, as
 * client-go's persister (clientcmd `PersisterForUser`) does for the oidc provider's refreshed tokens.
 *
 * Guarantees:
 * - The write replaces the file atomically (a temporary file in the same folder, then a rename): a reader
 *   sees the old file or the new one, never half of it. A symlinked kubeconfig is followed, so the link
 *   stays a link. The file keeps its mode.
 * - Only the given keys of that user's config change; comments, key order and every other entry stay as
 *   the yaml library round-trips them.
 * - While writing, `<file>.lock` is held: the lock kubectl's `ModifyConfig` takes, so the two never
 *   rewrite the file at the same moment. When someone else holds it the write fails, as in client-go.
 *
 * Caveats: a JSON kubeconfig is rewritten in the yaml library's flow style (still valid JSON-like YAML,
 * readable by kubectl).
 */
import {
  chmodSync,
  closeSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { type Document, isMap, isSeq, parseDocument } from "yaml";
import { ConfigError } from "./config-error.ts";
import { CredentialError } from "./credential-error.ts";

function load(path: string): { doc: Document; text: string } {
  const text = readFileSync(path, "utf8");
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new ConfigError(`${path} is not valid YAML: ${doc.errors[0]?.message ?? ""}`);
  return { doc, text };
}

/**
 * Serializes `doc` in the layout of `original` as far as the yaml library can: list items at the
 * indentation of their key when the file had them so (as kubectl writes them), and no folding of long
 * values.
 */
function render(doc: Document, original: string): string {
  return doc.toString({ indentSeq: !/^-\s/m.test(original), lineWidth: 0 });
}

/** Index of the user named `user` in `users`, or -1. */
function userIndex(doc: Document, user: string): number {
  const users = doc.get("users", true);
  if (!isSeq(users)) return -1;
  return users.items.findIndex((item) => isMap(item) && item.get("name") === user);
}

/**
 * The `auth-provider.config` of `user` as the file holds it now, or undefined when the file, the user or
 * its auth-provider is gone (or unreadable): a best-effort look, to pick up what another process wrote.
 */
export function readAuthProviderConfig(file: string, user: string): Record<string, string> | undefined {
  try {
    const { doc } = load(file);
    const i = userIndex(doc, user);
    if (i < 0) return undefined;
    const config = doc.getIn(["users", i, "user", "auth-provider", "config"]);
    if (!isMap(config)) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(config.toJSON() as Record<string, unknown>)) {
      if (typeof v === "string") out[k] = v;
    }
    return out;
  } catch {
    return undefined;
  }
}

/**
 * Sets `updates` in the `auth-provider.config` of `user` in `file` (see the module comment). Returns false
 * and writes nothing when the file no longer defines that user with an auth-provider (client-go skips
 * the write then too). Throws when the file cannot be read, parsed, locked or written.
 */
export function writeAuthProviderConfig(file: string, user: string, updates: Record<string, string>): boolean {
  const lock = `${file}.lock`;
  try {
    closeSync(openSync(lock, "wx"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      throw new CredentialError(`${lock} exists: another program (kubectl?) is writing ${file}`, { cause: err });
    }
    throw err;
  }
  try {
    const target = realpathSync(file);
    const { doc, text } = load(target);
    const i = userIndex(doc, user);
    if (i < 0 || !isMap(doc.getIn(["users", i, "user", "auth-provider"]))) return false;
    for (const [key, value] of Object.entries(updates)) {
      doc.setIn(["users", i, "user", "auth-provider", "config", key], value);
    }
    const mode = statSync(target).mode & 0o777;
    const tmp = join(dirname(target), `.${process.pid}.${Date.now()}.capstan-kubeconfig.tmp`);
    try {
      writeFileSync(tmp, render(doc, text), { mode });
      chmodSync(tmp, mode); // writeFileSync's mode is narrowed by the umask
      renameSync(tmp, target);
    } catch (err) {
      try {
        unlinkSync(tmp);
      } catch {
        // Never created, or already renamed.
      }
      throw err;
    }
    return true;
  } finally {
    unlinkSync(lock);
  }
}
