/**
 * Capstan's packed packages inside a project (`vendor/capstan-<v>.tgz`, `vendor/capstan-dev-<v>.tgz`),
 * for as long as they are not on the npm registry: `capstan new` run from a source checkout and
 * `capstan vendor` put them there, and package.json depends on them by relative `file:vendor/...`
 * paths (npm writes the lock file's `resolved` relative too). The project then moves, is cloned and
 * builds its image anywhere: nothing points back into the checkout.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, resolve, sep } from "node:path";
import { PACKAGE_ROOT } from "./package-root.ts";

/** The folder of a project that holds its vendored tarballs. */
export const VENDOR_DIR = "vendor";

/** The two packages a project vendors. */
export type CapstanPackage = "capstan" | "capstan-dev";

/** Each package's tarball (absolute paths), and the version both have. */
export interface PackedTarballs {
  version: string;
  tarballs: Record<CapstanPackage, string>;
}

/** Tarballs that cannot be found or do not belong together, with what to do. */
export class VendorError extends Error {
  override readonly name = "VendorError";
}

/** The source checkout this capstan runs from; undefined when it is an installed package. */
export function runningCheckout(): string | undefined {
  if (PACKAGE_ROOT.split(sep).includes("node_modules")) return undefined;
  return resolve(PACKAGE_ROOT, "..", "..");
}

/**
 * The tarballs in `from`: a Capstan checkout (its `.packs/`, at the version of its packages, as
 * `npm run pack` makes them), or a folder holding one `capstan-<v>.tgz` and one `capstan-dev-<v>.tgz`.
 */
export function packedTarballs(from: string): PackedTarballs {
  const dir = resolve(from);
  const manifest = join(dir, "packages", "capstan", "package.json");
  if (existsSync(manifest)) {
    const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
    const tarballs = {
      capstan: join(dir, ".packs", `capstan-${version}.tgz`),
      "capstan-dev": join(dir, ".packs", `capstan-dev-${version}.tgz`),
    };
    const missing = Object.values(tarballs).filter((t) => !existsSync(t));
    if (missing.length > 0) {
      throw new VendorError(
        `the checkout ${dir} has not packed its packages (${missing.join(", ")} missing): run "npm run pack" there first`,
      );
    }
    return { version, tarballs };
  }
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    throw new VendorError(`${dir} is neither a Capstan checkout nor a folder of packed tarballs`);
  }
  const found = (pattern: RegExp) => files.map((f) => pattern.exec(f)).filter((m) => m !== null);
  // A version starts with a digit, so capstan-dev-0.2.0.tgz is not a capstan tarball.
  const capstan = found(/^capstan-(\d[^/]*)\.tgz$/);
  const dev = found(/^capstan-dev-(\d[^/]*)\.tgz$/);
  if (capstan.length !== 1 || dev.length !== 1 || capstan[0]![1] !== dev[0]![1]) {
    throw new VendorError(
      `${dir} must hold one capstan-<version>.tgz and one capstan-dev-<version>.tgz of the same version` +
        ` (found: ${[...capstan, ...dev].map((m) => m[0]).join(", ") || "none"})`,
    );
  }
  return {
    version: capstan[0]![1]!,
    tarballs: { capstan: join(dir, capstan[0]![0]), "capstan-dev": join(dir, dev[0]![0]) },
  };
}

/** Copies `tarball` into the project's vendor/ and returns the dependency spec naming it there. */
export function vendorTarball(projectDir: string, tarball: string): string {
  mkdirSync(join(projectDir, VENDOR_DIR), { recursive: true });
  const name = basename(tarball);
  copyFileSync(tarball, join(projectDir, VENDOR_DIR, name));
  return vendoredSpec(name);
}

/** The dependency spec of a tarball named `name` in vendor/. */
export function vendoredSpec(name: string): string {
  return `file:${VENDOR_DIR}/${name}`;
}
