// `npm run check:docs [--built] [file.md ...]`: type-checks every ```ts and ```js block of README.md,
// docs/, the examples' and the packages' READMEs against the public entry points (capstan, capstan/core,
// capstan/runtime, capstan/client, capstan/resources, capstan-dev, capstan-dev/testing), as a user's
// project imports them. Exits 1 on any error, each printed as `docs/runtime.md:123:5 TS2305: ...`.
// The convention for blocks that are not whole modules: README.md, "Code blocks in the docs".
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type DocBlock, extractBlocks } from "./check-docs/blocks.ts";
import { checkBlocks, type DocError } from "./check-docs/check.ts";

/** What one run found: the errors, and how many blocks were checked and how many are fragments. */
export interface DocsReport {
  readonly files: number;
  readonly checked: number;
  readonly fragments: readonly DocBlock[];
  readonly errors: readonly DocError[];
  readonly milliseconds: number;
}

/** Folders never searched for pages: installed packages, build output, `capstan dev`'s state. */
const skipped = new Set(["node_modules", "dist", ".capstan", ".packs"]);

/** The markdown files under `dir` (relative to `root`) whose name `accept`s, sorted. */
function pagesUnder(root: string, dir: string, accept: (name: string) => boolean): string[] {
  if (!existsSync(join(root, dir))) return [];
  const pages: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && !skipped.has(entry.name)) pages.push(...pagesUnder(root, path, accept));
    else if (entry.isFile() && accept(entry.name)) pages.push(path);
  }
  return pages.sort();
}

/** The markdown files checked by default, relative to the workspace root. */
export function defaultFiles(root: string): string[] {
  const packages = readdirSync(join(root, "packages")).map((p) => join("packages", p, "README.md"));
  return [
    "README.md",
    ...pagesUnder(root, "docs", (name) => name.endsWith(".md")),
    ...pagesUnder(root, "examples", (name) => name === "README.md"),
    ...packages.filter((p) => existsSync(join(root, p))),
  ];
}

/** Extracts and checks the blocks of `files` (paths relative to `root`, as errors print them). */
export function checkDocs(root: string, files: readonly string[], against: "source" | "built" = "source"): DocsReport {
  const started = performance.now();
  const blocks: DocBlock[] = [];
  const errors: DocError[] = [];
  for (const file of files) {
    const found = extractBlocks(file, readFileSync(resolve(root, file), "utf8"));
    blocks.push(...found.blocks);
    errors.push(...found.problems.map((p) => ({ ...p, column: 1, code: "check:docs" })));
  }
  errors.push(...checkBlocks(blocks, { root, against }));
  const shown = blocks.filter((b) => !b.hidden);
  const fragments = shown.filter((b) => b.mode === "fragment");
  return {
    files: files.length,
    checked: shown.length - fragments.length,
    fragments,
    errors,
    milliseconds: performance.now() - started,
  };
}

/** The report as printed: one line per error (with the markdown line under it), then the counts. */
export function formatReport(report: DocsReport, root: string): string {
  const out: string[] = [];
  const sources = new Map<string, string[]>();
  for (const e of report.errors) {
    out.push(`${e.file}:${e.line}:${e.column} ${e.code}: ${e.message}`);
    if (!sources.has(e.file)) sources.set(e.file, readFileSync(resolve(root, e.file), "utf8").split(/\r?\n/));
    const text = sources.get(e.file)?.[e.line - 1];
    if (text !== undefined) out.push(`    ${text.trimEnd()}`, `    ${" ".repeat(Math.max(0, e.column - 1))}^`);
  }
  const seconds = (report.milliseconds / 1000).toFixed(1);
  const fragments = report.fragments.map((f) => `${f.file}:${f.line}`).join(", ");
  out.push(
    `check:docs: ${count(report.checked, "block")} checked, ${count(report.fragments.length, "fragment")} not checked${fragments ? ` (${fragments})` : ""}, in ${count(report.files, "markdown file")}, ${seconds} s`,
  );
  if (report.errors.length > 0) {
    out.push(
      `check:docs: ${count(report.errors.length, "error")}. Each block is a module of its own, checked against the public entry points:`,
      "  fix the code to the real API, add the imports it needs, or declare what it uses without showing it",
      "  (<!-- check:docs preamble ... -->), continue the previous block (```ts continued), or as a last resort",
      '  mark it ```ts fragment. README.md, "Code blocks in the docs", has the convention.',
    );
  }
  return out.join("\n");
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(fileURLToPath(import.meta.url), "../..");
  const args = process.argv.slice(2);
  const against = args.includes("--built") ? "built" : "source";
  const named = args.filter((a) => !a.startsWith("--")).map((f) => relative(root, resolve(f)));
  const report = checkDocs(root, named.length > 0 ? named : defaultFiles(root), against);
  console.log(formatReport(report, root));
  process.exitCode = report.errors.length > 0 ? 1 : 0;
}
