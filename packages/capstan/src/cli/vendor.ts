/**
 * `capstan vendor [--from <checkout or folder>]`: copies Capstan's packed packages into the project in
 * the working directory (`vendor/`), points its package.json at them (`file:vendor/...`), and runs
 * `npm install` for them so the lock file follows. For projects on a source checkout's packages
 * until they are on the npm registry: how a project made by `capstan new` from a checkout takes a
 * newer checkout's packages (`npm run pack` there, then this), and how a project whose package.json
 * still points into a checkout (`file:/.../.packs/...`) becomes one that builds anywhere.
 *
 * Guarantees: nothing is changed unless both tarballs are found, of one version, and the project
 * has a `capstan` dependency. The tarballs the two dependencies named in vendor/ before, if others,
 * are removed. `npm install` is given both specs explicitly: a rebuilt tarball of an unchanged
 * version has the same file name, and a plain `npm install` keeps the lock file's old integrity (and
 * then installs the old contents from npm's cache).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { parseCommandArgs } from "./command-args.ts";
import { localDependencies } from "./file-dependencies.ts";
import {
  type CapstanPackage,
  packedTarballs,
  runningCheckout,
  VENDOR_DIR,
  VendorError,
  vendorTarball,
} from "./vendored-packages.ts";

const USAGE = `Usage: capstan vendor [--from <dir>] [--skip-install]

Copies the packed capstan and capstan-dev tarballs into this project's ${VENDOR_DIR}/, points package.json
at them (file:${VENDOR_DIR}/...), removes the tarballs they replace, and runs npm install for them (the lock
file follows). For a project on a Capstan source checkout's packages, until they are on the npm
registry; to take a newer checkout's packages, run "npm run pack" in the checkout, then this here.

Options:
  --from DIR      a Capstan checkout (its .packs/, at its packages' version), or a folder holding one
                  capstan-<v>.tgz and one capstan-dev-<v>.tgz (default: the checkout this capstan
                  runs from, when it runs from one)
  --skip-install  change the files only (run npm install for capstan and capstan-dev yourself)
`;

type Sections = Record<"dependencies" | "devDependencies" | "optionalDependencies", Record<string, string> | undefined>;

/** `capstan vendor`. */
export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs("capstan vendor", USAGE, () => parse(args));
  if (!parsed.ok) return parsed.exitCode;
  const { from, install } = parsed.value;
  const project = process.cwd();
  const manifestPath = join(project, "package.json");
  if (!existsSync(manifestPath)) {
    process.stderr.write(`capstan vendor: no package.json in ${project}: run it in the project's folder\n`);
    return 2;
  }
  const text = readFileSync(manifestPath, "utf8");
  const pkg = JSON.parse(text) as Partial<Sections> & Record<string, unknown>;
  const sectionOf = (name: CapstanPackage) =>
    (["dependencies", "devDependencies", "optionalDependencies"] as const).find((s) => pkg[s]?.[name] !== undefined);
  if (sectionOf("capstan") === undefined) {
    process.stderr.write(`capstan vendor: ${manifestPath} has no capstan dependency: nothing to vendor\n`);
    return 2;
  }
  let packed: ReturnType<typeof packedTarballs>;
  try {
    packed = packedTarballs(from);
  } catch (err) {
    if (!(err instanceof VendorError)) throw err;
    process.stderr.write(`capstan vendor: ${err.message}\n`);
    return 1;
  }
  const before = localDependencies(project, pkg);
  const specs: string[] = [];
  const kept = new Set<string>();
  for (const name of ["capstan", "capstan-dev"] as const) {
    const section = sectionOf(name);
    // capstan-dev is optional: a project may use capstan alone.
    if (section === undefined) continue;
    const spec = vendorTarball(project, packed.tarballs[name]);
    kept.add(`${VENDOR_DIR}/${basename(packed.tarballs[name])}`);
    pkg[section]![name] = spec;
    specs.push(`${name}@${spec}`);
  }
  for (const old of before) {
    const isOwn = old.name === "capstan" || old.name === "capstan-dev";
    if (isOwn && old.inside && old.path.startsWith(`${VENDOR_DIR}/`) && !kept.has(old.path)) {
      rmSync(join(project, old.path), { force: true });
    }
  }
  // Keeps the file's own indentation (npm writes two spaces, but a user may not).
  const indent = /^\{\s*\n([ \t]+)"/.exec(text)?.[1] ?? "  ";
  writeFileSync(manifestPath, `${JSON.stringify(pkg, null, indent)}\n`);
  process.stdout.write(
    `Vendored ${specs.map((s) => s.split("@")[0]).join(" and ")} ${packed.version} from ${from} into ${VENDOR_DIR}/ (package.json: ${specs.join(", ")})\n`,
  );
  const dockerfilePath = join(project, "Dockerfile");
  if (
    existsSync(dockerfilePath) &&
    !readFileSync(dockerfilePath, "utf8").includes(`COPY ${VENDOR_DIR} ./${VENDOR_DIR}`)
  ) {
    process.stdout.write(
      `The Dockerfile does not copy ${VENDOR_DIR}/ before npm ci: regenerate it (npx capstan generate dockerfile <operator.ts> > Dockerfile)\n`,
    );
  }
  if (!install) {
    process.stdout.write(`Next: npm install ${specs.join(" ")}\n`);
    return 0;
  }
  process.stdout.write(`Installing them (npm install ${specs.join(" ")})...\n`);
  const npm = spawnSync(
    process.platform === "win32" ? "npm.cmd" : "npm",
    ["install", "--no-audit", "--no-fund", ...specs],
    { cwd: project, stdio: ["ignore", "inherit", "inherit"] },
  );
  if (npm.status !== 0) {
    process.stderr.write(
      `capstan vendor: npm install failed (${npm.error?.message ?? `exit code ${npm.status}`}); package.json and ${VENDOR_DIR}/ are updated: fix the cause and run npm install ${specs.join(" ")}\n`,
    );
    return 1;
  }
  return 0;
}

function parse(args: string[]): { from: string; install: boolean } | "help" {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      from: { type: "string" },
      "skip-install": { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"`);
  const from = values.from ?? runningCheckout();
  if (from === undefined) {
    throw new Error(
      "this capstan is an installed package, not a checkout: say where the tarballs are, with --from <capstan checkout> (after npm run pack there) or --from <folder of capstan-<v>.tgz and capstan-dev-<v>.tgz>",
    );
  }
  return { from, install: !values["skip-install"] };
}
