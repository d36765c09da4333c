/**
 * What `--data-dir` keeps besides the objects: the CA and serving certificate and the admin token, so
 * that kubeconfigs written by an earlier run stay valid after a restart.
 *
 * ## Expected flow
 * `openDataDir(dir)` opens the persistent storage (file-storage.ts), then loads `pki/ca.crt`,
 * `pki/server.crt`, `pki/server.key` and `token`, creating and saving whatever is missing. The server
 * uses them instead of making fresh ones; `close()` flushes and closes the storage.
 * `discardDataDir(dir)` (`capstan dev --fresh`) deletes all of it, for a start from nothing.
 *
 * ## Guarantees
 * - Files are written with mode 0600, to a temporary name, fsynced and renamed: a crash leaves either
 *   the old file or the new one, never half of one.
 * - An explicit token (the `token` option) wins over the saved one and is not saved.
 *
 * ## Caveats
 * - The serving certificate is made once, for the host of the first start (plus 127.0.0.1, ::1 and
 *   localhost); starting later with another `--host` keeps it. Delete `pki/` to make new ones.
 * - The kubeconfig also names the port: use a fixed `--port` for it to stay valid across restarts.
 */
import { mkdir, open, readdir, readFile, rename, rm, rmdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { newBearerToken } from "../kubeconfig.ts";
import { createServingCertificates, type ServingCertificates } from "../tls.ts";
import { FileStorage, type FileStorageOptions, isStorageFile, takeLock } from "./file-storage.ts";

/** The certificate files under `pki/`. */
const PKI_FILES = ["ca.crt", "server.crt", "server.key"];

/** An opened data directory. */
export interface DataDir {
  storage: FileStorage;
  certs: ServingCertificates;
  token: string;
  /** Flushes pending writes and closes the storage's files. */
  close(): Promise<void>;
}

export interface DataDirOptions extends FileStorageOptions {
  /** Host the serving certificate is made for when none is saved yet. */
  host?: string;
  /** Admin token to use instead of the saved one. */
  token?: string;
}

/** Opens (creating if needed) a data directory: storage, certificates and token. */
export async function openDataDir(dir: string, options: DataDirOptions = {}): Promise<DataDir> {
  const storage = await FileStorage.open(dir, options);
  try {
    const certs = await loadOrCreateCertificates(dir, options.host ?? "127.0.0.1");
    const token = options.token ?? (await loadOrCreateToken(dir));
    return { storage, certs, token, close: () => storage.closed() };
  } catch (err) {
    await storage.closed();
    throw err;
  }
}

/**
 * Deletes what a data directory keeps (objects, CA, certificate, token) so that the next open starts
 * from nothing (`capstan dev --fresh`). Refuses, as opening does, while a live process holds the
 * directory's LOCK: its objects are that process's, and deleting them under it would corrupt its log.
 * Deletes only the files a data directory holds, so a mistyped directory loses nothing else; the
 * LOCK stays taken by this process, for the open that follows. A missing directory is left missing.
 */
export async function discardDataDir(dir: string): Promise<void> {
  const root = resolve(dir);
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await takeLock(root);
  for (const name of names) {
    if (isStorageFile(name) || name === "token" || name === "token.tmp") await rm(join(root, name), { force: true });
  }
  const pki = join(root, "pki");
  for (const name of PKI_FILES.flatMap((f) => [f, `${f}.tmp`])) await rm(join(pki, name), { force: true });
  await rmdir(pki).catch(() => undefined); // absent, or holding files of someone else's: left alone
}

async function loadOrCreateCertificates(dir: string, host: string): Promise<ServingCertificates> {
  const pki = join(dir, "pki");
  const paths = { caPem: join(pki, "ca.crt"), certPem: join(pki, "server.crt"), keyPem: join(pki, "server.key") };
  const saved = await Promise.all([readOptional(paths.caPem), readOptional(paths.certPem), readOptional(paths.keyPem)]);
  if (saved.every((text) => text?.includes("-----BEGIN"))) {
    const [caPem, certPem, keyPem] = saved as [string, string, string];
    return { caPem, certPem, keyPem };
  }
  const certs = await createServingCertificates(host);
  await mkdir(pki, { recursive: true, mode: 0o700 });
  // The key and certificate go first: a crash before ca.crt is written makes the next start regenerate all.
  await writeDurably(paths.keyPem, certs.keyPem);
  await writeDurably(paths.certPem, certs.certPem);
  await writeDurably(paths.caPem, certs.caPem);
  return certs;
}

async function loadOrCreateToken(dir: string): Promise<string> {
  const path = join(dir, "token");
  const saved = (await readOptional(path))?.trim();
  if (saved) return saved;
  const token = newBearerToken();
  await writeDurably(path, `${token}\n`);
  return token;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** Writes a file atomically and durably: temporary file, fsync, rename, fsync of the directory. */
async function writeDurably(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const file = await open(tmp, "w", 0o600);
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  const parent = await open(join(path, ".."), "r");
  try {
    await parent.sync();
  } finally {
    await parent.close();
  }
}
