// `npm run build`: compiles both packages into their dist/ folders.
//
// - capstan-dev: tsc (JavaScript, declarations, source maps), one module per source file.
// - capstan (what a production operator loads): tsc for the declarations only, then esbuild bundles
//   the JavaScript of each entry point (index, core, client, runtime, resources, internal, cli/main,
//   schemas/<group>/<version>) with its dependencies into a few files, shared code in dist/chunks/. Loading ~1,000 small ES modules (TypeBox alone has 700)
//   costs more memory and start-up time than their code: measured, importing `capstan` took 38 MB of
//   RSS unbundled and 19 MB bundled (npm run bench:footprint has the whole process's figures).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
const capstan = join(root, "packages", "capstan");

const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
execFileSync(
  process.execPath,
  [tsc, "-b", "packages/capstan/tsconfig.build.json", "packages/capstan-dev/tsconfig.build.json"],
  { cwd: root, stdio: "inherit" },
);

const bundled = await build({
  absWorkingDir: capstan,
  entryPoints: [
    "src/index.ts",
    "src/core.ts",
    "src/client.ts",
    "src/runtime.ts",
    "src/resources.ts",
    "src/internal.ts",
    "src/cli/main.ts",
    // Built-in schemas, one entry point per group-version: an operator loads only the ones it imports.
    ...["core/v1", "apps/v1", "batch/v1", "meta/v1", "networking/v1", "rbac/v1", "policy/v1", "autoscaling/v2"].map(
      (groupVersion) => `src/schemas/${groupVersion}.ts`,
    ),
  ],
  outbase: "src",
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  // Class and function names survive bundling: errors are told apart by name across copies of capstan.
  keepNames: true,
  // Optional peers, found at run time from the user's project: never bundled.
  external: ["tsx", "capstan-dev", "typescript"],
  // CommonJS dependencies (prom-client, pino's helpers) call require() for Node's own modules.
  banner: {
    js: 'import { createRequire as __capstanCreateRequire } from "node:module";\nconst require = __capstanCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
  // Written below, only where the content changed: a rebuild of unchanged sources (the packaging
  // test packs while other test files run processes from dist/) rewrites nothing under them.
  write: false,
});
const outputs = new Set(bundled.outputFiles.map((file) => file.path));
for (const file of bundled.outputFiles) {
  if (existsSync(file.path) && readFileSync(file.path).equals(file.contents)) continue;
  mkdirSync(dirname(file.path), { recursive: true });
  const temp = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temp, file.contents);
  renameSync(temp, file.path);
}
// Chunks from an earlier build would otherwise pile up (their names carry a content hash).
const chunks = join(capstan, "dist", "chunks");
for (const name of existsSync(chunks) ? readdirSync(chunks) : []) {
  if (!outputs.has(join(chunks, name))) rmSync(join(chunks, name), { recursive: true, force: true });
}

copyChanged(
  join(root, "packages/capstan-dev/src/dashboard/page"),
  join(root, "packages/capstan-dev/dist/dashboard/page"),
);

/** Copies the files under `from` whose content differs from their copy under `to` (as the bundle above). */
function copyChanged(from, to) {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      copyChanged(source, target);
      continue;
    }
    const contents = readFileSync(source);
    if (existsSync(target) && readFileSync(target).equals(contents)) continue;
    mkdirSync(to, { recursive: true });
    writeFileSync(`${target}.${process.pid}.tmp`, contents);
    renameSync(`${target}.${process.pid}.tmp`, target);
  }
}
