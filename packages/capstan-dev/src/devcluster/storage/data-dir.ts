/**
 * What `--data-dir` keeps besides the objects: the CA and serving certificate and the admin token, so
 * that kubeconfigs written by an earlier run stay valid after a restart.
 *
 * ## Expected flow
 * `openDataDir(dir)` opens the persistent storage (file-storage.ts), then loads `pki/ca.crt`,
 * `pki/server.crt`, `pki/server.key` and `token`, creating and saving whatever is missing. The server
 * uses them instead of making fresh ones; `close()` flushes and closes the storage.
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
import { mkdir, open, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { newBearerToken } from "../kubeconfig.ts";
import { createServingCertificates, type ServingCertificates } from "../tls.ts";
import { FileStorage, type FileStorageOptions } from "./file-storage.ts";

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
