import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadOrCreateDashboardToken } from "../../packages/capstan-dev/src/cli/dashboard-token-file.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-token-file-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("capstan dev's dashboard token file", () => {
  it("makes a 256-bit token readable by its owner only on first use, then keeps it", async () => {
    const path = join(dir, ".capstan", "dashboard-token");
    const token = await loadOrCreateDashboardToken(path);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readFile(path, "utf8")).toBe(`${token}\n`);
    expect(await loadOrCreateDashboardToken(path)).toBe(token);
  });

  it("tightens a copied file's loose mode to 0600", async () => {
    const path = join(dir, "dashboard-token");
    const token = await loadOrCreateDashboardToken(path);
    await chmod(path, 0o644);
    expect(await loadOrCreateDashboardToken(path)).toBe(token);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("names a file that holds no valid token instead of replacing it", async () => {
    const path = join(dir, "dashboard-token");
    await writeFile(path, "hunter2\n", { mode: 0o600 });
    await expect(loadOrCreateDashboardToken(path)).rejects.toThrow(
      `${path} (the dashboard's access token; delete it to make a new one) must be at least 22 base64url characters`,
    );
    expect(await readFile(path, "utf8")).toBe("hunter2\n");
  });
});
