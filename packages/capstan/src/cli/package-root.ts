import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The capstan package's folder: the nearest one above this module whose package.json is capstan's.
 * Searched rather than fixed because this code runs from `src/cli/` in the workspace and from a bundle
 * chunk (`dist/`, `dist/chunks/`) when installed.
 */
export const PACKAGE_ROOT: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** capstan's package.json. */
export const PACKAGE_JSON = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
};

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "capstan") {
      return dir;
    }
    if (dirname(dir) === dir) throw new Error(`capstan's package.json was not found above ${from}`);
  }
}
