/**
 * `capstan new <directory>`: scaffolds an operator project (project-template.ts) that runs, tests and
 * generates its manifests out of the box.
 *
 * Guarantees: nothing is written unless every argument is valid and the directory is absent or
 * empty (exit 2 with the reason otherwise); the project's `capstan` dependency is this Capstan: the
 * version's range when it runs from an installed package, `file:<checkout>` when it runs from a
 * source checkout (Capstan is then not on the registry), or what `--capstan` says.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Type } from "typebox";
import { defineResource } from "../resources/define-resource.ts";
import { parseCommandArgs } from "./command-args.ts";
import { type ProjectSpec, projectFiles } from "./project-template.ts";

const USAGE = `Usage: capstan new <directory> [options]

Creates an operator project in <directory> (absent or empty): a custom resource, a controller that
owns a ConfigMap, its end-to-end test on the embedded API server, a sample manifest and npm scripts
(dev, test, generate:crds, generate:all).

Options:
  --kind K       the custom resource's kind, PascalCase (default: from the directory name,
                 "backup-operator" -> Backup)
  --group G      its API group (default example.com)
  --version V    its version (default v1alpha1)
  --capstan SPEC the project's capstan dependency (default: this Capstan's version, or file:<path>
                 when it runs from a source checkout)
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
  const { dir, spec } = parsed.value;
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
  const shown = relative(process.cwd(), dir) || ".";
  process.stdout.write(
    [
      `Created ${spec.name} in ${shown}: kind ${spec.kind} (${spec.group}/${spec.version}), capstan ${spec.capstanDependency}`,
      "Next:",
      `  cd ${shown} && npm install`,
      "  npm run dev      # embedded API server + the operator, restarted on save",
      "  npm test         # typecheck + end-to-end test, no cluster needed",
      "",
    ].join("\n"),
  );
  return 0;
}

function parse(args: string[]): { dir: string; spec: ProjectSpec } | "help" {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      kind: { type: "string" },
      group: { type: "string", default: "example.com" },
      version: { type: "string", default: "v1alpha1" },
      capstan: { type: "string" },
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
  return { dir, spec: { name, group, version, kind, capstanDependency: values.capstan ?? ownDependency() } };
}

/** `backup-operator` -> `Backup`, `my-db` -> `MyDb`. */
export function kindFromName(name: string): string {
  const words = name.split("-").filter((w) => w !== "" && w !== "operator" && w !== "controller");
  const kind = (words.length > 0 ? words : ["widget"]).map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return /^[A-Z]/.test(kind) ? kind : `K${kind}`;
}

/** This Capstan, as a dependency: its version from an installed package, its path from a checkout. */
function ownDependency(): string {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  return root.split(sep).includes("node_modules") ? `^${version}` : `file:${root}`;
}
