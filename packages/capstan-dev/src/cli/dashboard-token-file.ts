/**
 * The dashboard's access token as `capstan dev` keeps it: in a file beside the kubeconfig
 * (`.capstan/dashboard-token`), readable by its owner only, made on first use and then kept, so that
 * a tab opened with the printed address keeps working after `capstan dev` restarts.
 *
 * Guarantees: the file is mode 0600 (an existing one with a looser mode is tightened, as the
 * kubeconfig is); it is written to a temporary name and renamed, so a crash leaves no half token;
 * a file whose content is not a valid token is a clear error naming it, never silently replaced.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { checkAccessTokenFormat, newAccessToken } from "../dashboard/access-token.ts";

/** The token saved in `path`, or a new one saved there. */
export async function loadOrCreateDashboardToken(path: string): Promise<string> {
  let saved: string | undefined;
  try {
    saved = (await readFile(path, "utf8")).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (saved !== undefined) {
    checkAccessTokenFormat(saved, `${path} (the dashboard's access token; delete it to make a new one)`);
    if (((await stat(path)).mode & 0o077) !== 0) await chmod(path, 0o600);
    return saved;
  }
  const token = newAccessToken();
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, `${token}\n`, { mode: 0o600, flag: "wx" });
  await rename(tmp, path);
  return token;
}
