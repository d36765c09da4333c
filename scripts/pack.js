// `npm run pack`: builds both packages and packs them into .packs/ (capstan-<v>.tgz, capstan-dev-<v>.tgz),
// the tarballs the packaging tests install and `capstan new` uses when run from this checkout.
// Prints the tarballs' paths, one per line.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const out = join(root, ".packs");
mkdirSync(out, { recursive: true });
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
execFileSync(npm, ["run", "build"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
// One CHANGELOG for both packages, released together.
for (const pkg of ["capstan", "capstan-dev"])
  copyFileSync(join(root, "CHANGELOG.md"), join(root, "packages", pkg, "CHANGELOG.md"));
const packed = JSON.parse(
  execFileSync(
    npm,
    [
      "pack",
      "--json",
      "--pack-destination",
      out,
      "--workspace",
      "packages/capstan",
      "--workspace",
      "packages/capstan-dev",
    ],
    { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  ),
);
for (const p of packed) process.stdout.write(`${join(out, p.filename)}\n`);
