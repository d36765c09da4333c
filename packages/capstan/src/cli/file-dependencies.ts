/**
 * A project's dependencies on local paths (`"capstan": "file:vendor/capstan-0.2.0.tgz"`), sorted by
 * whether they lie inside the project. Inside, the image's `npm ci` can read them once the Dockerfile
 * copies them in before it; outside (`file:/home/me/capstan/.packs/...`), no image build can, and
 * neither can a clone of the project on another machine.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

/** One dependency whose spec is a local path. */
export interface FileDependency {
  name: string;
  /** As package.json gives it. */
  spec: string;
  /** The path, relative to the project and `/`-separated when inside it, else absolute. */
  path: string;
  inside: boolean;
}

const SECTIONS = ["dependencies", "devDependencies", "optionalDependencies"] as const;

/** A package.json's dependency sections. */
export type DependencySections = Partial<Record<(typeof SECTIONS)[number], Record<string, string>>>;

/**
 * The local-path dependencies of the project in `projectDir`, as npm reads specs: `file:<path>`, or a
 * bare path (`./x`, `../x`, `/x`, `~/x`); none when package.json is missing or unreadable.
 */
export function fileDependencies(projectDir: string): FileDependency[] {
  let pkg: DependencySections;
  try {
    pkg = JSON.parse(readFileSync(join(projectDir, "package.json"), "utf8")) as DependencySections;
  } catch {
    return [];
  }
  return localDependencies(projectDir, pkg);
}

/** {@link fileDependencies} of a package.json already read. */
export function localDependencies(projectDir: string, pkg: DependencySections): FileDependency[] {
  const out: FileDependency[] = [];
  for (const section of SECTIONS) {
    for (const [name, spec] of Object.entries(pkg[section] ?? {})) {
      const local = localPath(spec);
      if (local === undefined) continue;
      const absolute = resolve(projectDir, local);
      const rel = relative(resolve(projectDir), absolute);
      const inside = rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
      out.push({ name, spec, path: inside ? rel.split(sep).join("/") : absolute, inside });
    }
  }
  return out;
}

/** The path a dependency spec names, or undefined for a registry, git or URL spec. */
function localPath(spec: string): string | undefined {
  if (spec.startsWith("file:")) {
    // npm accepts file:/abs, file://abs and file:///abs alike.
    const path = spec.slice("file:".length).replace(/^\/\/(?=\/)/, "");
    return path.startsWith("~/") ? join(process.env.HOME ?? "~", path.slice(2)) : path;
  }
  if (/^(\.\.?\/|\/)/.test(spec)) return spec;
  if (spec.startsWith("~/")) return join(process.env.HOME ?? "~", spec.slice(2));
  return undefined;
}

/**
 * What a Dockerfile must copy before `npm ci` for the inside dependencies: each one's top-level
 * folder (`vendor`), or the file itself when it sits at the project root.
 */
export function installInputs(deps: readonly FileDependency[]): string[] {
  const inputs = new Set<string>();
  for (const dep of deps) if (dep.inside) inputs.add(dep.path.split("/")[0]!);
  return [...inputs].sort();
}

/**
 * What is wrong, and the fix, when some local-path dependencies lie outside the project; undefined
 * when none does.
 */
export function unreachableDependencies(deps: readonly FileDependency[]): string | undefined {
  const outside = deps.filter((d) => !d.inside);
  if (outside.length === 0) return undefined;
  const own = outside.filter((d) => d.name === "capstan" || d.name === "capstan-dev");
  const others = outside.filter((d) => !own.includes(d));
  const fixes = [
    ...(own.length > 0
      ? [
          `run "npx capstan vendor --from <capstan checkout>" to copy the capstan tarballs into vendor/ and depend on them there`,
        ]
      : []),
    ...(others.length > 0
      ? [
          `copy ${others.map((d) => d.name).join(", ")} into the project (e.g. vendor/) and depend on "file:vendor/<file>"`,
        ]
      : []),
  ];
  return (
    `package.json depends on ${outside.map((d) => `${d.name} "${d.spec}"`).join(", ")}, outside the project: ` +
    `the image's "npm ci" (and a clone on any other machine) cannot read ${outside.length === 1 ? "it" : "them"}. ` +
    `Fix: ${fixes.join("; ")}; the Dockerfile then copies them before "npm ci".`
  );
}
