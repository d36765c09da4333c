/**
 * `capstan new <directory>`: scaffolds an operator project (project-template.ts) that runs, tests,
 * builds and packs into an image out of the box, then installs its dependencies (`npm install`, so
 * the project has its complete lock file at once).
 *
 * Guarantees: nothing is written unless every argument is valid and the directory is absent or
 * empty (exit 2 with the reason otherwise). The project depends on this Capstan's version as a
 * caret range of the published packages (`capstan`, and `capstan-dev` for development), or on what
 * `--capstan` / `--capstan-dev` say. Run from a source checkout, where the packages are not
 * published, it copies the checkout's packed tarballs (`npm run pack` makes them in `.packs/`) into
 * the project's `vendor/` and depends on them there (`file:vendor/...`), as it does with a tarball
 * given as `--capstan file:<path>.tgz`: the project never points outside itself, so it can move,
 * and its image builds without the checkout (vendored-packages.ts).
 *
 * A kind named like a built-in one (`CronJob`, `Job`, `Pod`...) is refused unless
 * `--allow-builtin-name`: the bare resource name (`kubectl get cronjobs`) would keep meaning the
 * built-in kind, and the project's own README would show the wrong objects. Refused rather than
 * warned because nothing is written yet, so the fix costs one flag or one word, while a warning
 * scrolls away above npm install's output and the confusion comes later, on a cluster.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Type } from "typebox";
import { defineResource } from "../resources/define-resource.ts";
import { pluralize } from "../resources/plural.ts";
import { builtinKindNamed } from "./builtin-kind-names.ts";
import { parseCommandArgs } from "./command-args.ts";
import { type ProjectSpec, projectFiles } from "./project-template.ts";
import {
  type CapstanPackage,
  type PackedTarballs,
  packedTarballs,
  runningCheckout,
  VendorError,
  vendoredSpec,
  vendorTarball,
} from "./vendored-packages.ts";
import { CAPSTAN_VERSION } from "./version.ts";

const USAGE = `Usage: capstan new <directory> [options]

Creates an operator project in <directory> (absent or empty): a custom resource, a controller that
owns a ConfigMap, its end-to-end test on the embedded API server, a sample manifest, a Dockerfile,
and npm scripts (dev, test, build, generate:crds, generate:all); then runs npm install in it.

Options:
  --kind K            the custom resource's kind, PascalCase (default: from the directory name,
                      "backup-operator" -> Backup)
  --group G           its API group (default example.com)
  --version V         its version (default v1alpha1)
  --capstan SPEC      the project's capstan dependency (default ^${CAPSTAN_VERSION}); a tarball
                      (file:<path>.tgz) is copied into the project's vendor/
  --capstan-dev SPEC  its capstan-dev devDependency (default ^${CAPSTAN_VERSION}), likewise
  --allow-builtin-name  accept a kind named like a built-in one (CronJob, Job, Pod...)
  --skip-install      write the files only (no npm install, so no lock file yet)

Run from a Capstan source checkout (packages not yet on the registry), the project gets the
checkout's packed tarballs ("npm run pack" there first) in vendor/, and depends on file:vendor/...
`;

/** A DNS label: the operator's name ends up in RBAC names, labels and the Deployment. */
const NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
/** A DNS subdomain with at least one dot, as CRD groups must be. */
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

/** `capstan new`. */
export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs("capstan new", USAGE, () => parse(args));
  if (!parsed.ok) return parsed.exitCode;
  const { dir, spec, tarballs, install } = parsed.value;
  let existing: string[] = [];
  try {
    existing = readdirSync(dir);
  } catch {
    // absent: created below
  }
  if (existing.length > 0) {
    process.stderr.write(`capstan new: ${dir} is not empty (${existing.slice(0, 3).join(", ")}...): nothing written\n`);
    return 2;
  }
  for (const [path, content] of Object.entries(projectFiles(spec))) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  for (const tarball of Object.values(tarballs)) vendorTarball(dir, tarball);
  const shown = relative(process.cwd(), dir) || ".";
  process.stdout.write(
    `Created ${spec.name} in ${shown}: kind ${spec.kind} (${spec.group}/${spec.version}), capstan ${spec.capstanDependency}\n`,
  );
  const copied = Object.values(tarballs);
  if (copied.length > 0) {
    process.stdout.write(
      `Copied ${copied.join(", ")} into its vendor/ (commit it: the project needs nothing outside itself; "npx capstan vendor --from <checkout>" there takes newer ones)\n`,
    );
  }
  if (install) {
    process.stdout.write("Installing its dependencies (npm install)...\n");
    const npm = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["install", "--no-audit", "--no-fund"], {
      cwd: dir,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (npm.status !== 0) {
      process.stderr.write(
        `capstan new: npm install failed in ${shown} (${npm.error?.message ?? `exit code ${npm.status}`}); the files are written: fix the cause and run npm install there\n`,
      );
      return 1;
    }
  }
  process.stdout.write(
    [
      "Next:",
      `  cd ${shown}${install ? "" : " && npm install"}`,
      "  npm run dev      # embedded API server + the operator, restarted on save",
      "  npm test         # typecheck + end-to-end test, no cluster needed",
      "  npm run build    # compiled JavaScript in dist/, what the Dockerfile's image runs",
      "",
    ].join("\n"),
  );
  return 0;
}

interface NewArgs {
  dir: string;
  spec: ProjectSpec;
  /** Tarballs to copy into the project's vendor/, which its package.json names. */
  tarballs: Partial<Record<CapstanPackage, string>>;
  install: boolean;
}

function parse(args: string[]): NewArgs | "help" {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      kind: { type: "string" },
      group: { type: "string", default: "example.com" },
      version: { type: "string", default: "v1alpha1" },
      capstan: { type: "string" },
      "capstan-dev": { type: "string" },
      "allow-builtin-name": { type: "boolean", default: false },
      "skip-install": { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  if (positionals.length !== 1) throw new Error("expected one directory");
  const dir = resolve(positionals[0]!);
  const name = basename(dir);
  if (!NAME.test(name)) {
    throw new Error(
      `the directory name "${name}" is the operator's name and must be a DNS label (e.g. widget-operator)`,
    );
  }
  const kind = values.kind ?? kindFromName(name);
  if (!KIND.test(kind)) throw new Error(`--kind "${kind}" must be PascalCase letters and digits (e.g. Widget)`);
  const group = values.group;
  if (!GROUP.test(group)) throw new Error(`--group "${group}" must be a DNS subdomain with a dot (e.g. example.com)`);
  const version = values.version;
  if (!VERSION.test(version)) throw new Error(`--version "${version}" must look like v1, v1alpha1 or v2beta3`);
  // The generated resources.ts calls defineResource with these names: its own checks (a group
  // reserved for Kubernetes, too long a name) refuse here rather than in the new project at load.
  defineResource({ group, version, kind, scope: "Namespaced", spec: Type.Object({}) });
  const builtin = builtinKindNamed(kind);
  if (builtin && !values["allow-builtin-name"]) {
    const what = values.kind === undefined ? `the kind ${kind} (from the directory name "${name}")` : `--kind ${kind}`;
    throw new Error(
      `${what} collides with ${builtin.apiVersion} ${builtin.kind}: \`kubectl get ${builtin.plural}\` ` +
        `would show the built-in kind, not yours. Choose another kind (e.g. --kind ${alternativeKind(group, kind)}), ` +
        `or pass --allow-builtin-name and name the resource with its group: ${pluralize(kind)}.${group}`,
    );
  }
  const tarballs: NewArgs["tarballs"] = {};
  let own: PackedTarballs | undefined;
  const dependency = (pkg: CapstanPackage, given: string | undefined): string => {
    if (given !== undefined) {
      const tarball = givenTarball(given);
      if (tarball === undefined) return given;
      tarballs[pkg] = tarball;
      return vendoredSpec(basename(tarball));
    }
    const checkout = runningCheckout();
    if (checkout === undefined) return `^${CAPSTAN_VERSION}`;
    try {
      own ??= packedTarballs(checkout);
    } catch (err) {
      if (!(err instanceof VendorError)) throw err;
      throw new Error(
        `this capstan runs from a source checkout, whose packages are not published: ${err.message}, or give --capstan and --capstan-dev`,
      );
    }
    tarballs[pkg] = own.tarballs[pkg];
    return vendoredSpec(basename(own.tarballs[pkg]));
  };
  return {
    dir,
    spec: {
      name,
      group,
      version,
      kind,
      capstanDependency: dependency("capstan", values.capstan),
      capstanDevDependency: dependency("capstan-dev", values["capstan-dev"]),
      shadowsBuiltin: builtin !== undefined,
    },
    tarballs,
    install: !values["skip-install"],
  };
}

/**
 * The tarball a `--capstan`/`--capstan-dev` spec names (`file:<path>.tgz` or a bare path, relative
 * to the working directory), checked to exist; undefined for any other spec (a range, a tag, a URL).
 */
function givenTarball(spec: string): string | undefined {
  // npm reads a spec without a scheme ending in .tgz as a file too (`capstan-0.2.0.tgz`).
  const path = spec.startsWith("file:") ? spec.slice("file:".length) : spec.includes(":") ? undefined : spec;
  if (path === undefined || !path.endsWith(".tgz")) return undefined;
  const tarball = resolve(path);
  if (!existsSync(tarball) || !statSync(tarball).isFile()) throw new Error(`${spec}: no such tarball (${tarball})`);
  return tarball;
}

/** A kind that does not collide, for the refusal's example: the group's first label before it. */
function alternativeKind(group: string, kind: string): string {
  const label = group.split(".")[0]!.replace(/[^a-z0-9]/g, "");
  const prefix = /^[a-z]/.test(label) ? label[0]!.toUpperCase() + label.slice(1) : "My";
  return `${prefix}${kind}`;
}

/** `backup-operator` -> `Backup`, `my-db` -> `MyDb`. */
export function kindFromName(name: string): string {
  const words = name.split("-").filter((w) => w !== "" && w !== "operator" && w !== "controller");
  const kind = (words.length > 0 ? words : ["widget"]).map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return /^[A-Z]/.test(kind) ? kind : `K${kind}`;
}
