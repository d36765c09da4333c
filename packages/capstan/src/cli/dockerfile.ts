/**
 * The container image of an operator: the Dockerfile `capstan generate dockerfile` prints (and
 * `capstan new` writes), its `.dockerignore`, and where the operator's compiled module is inside it.
 *
 * Guarantees of the image:
 * - it runs compiled JavaScript: a TypeScript operator is compiled in a build stage with the
 *   project's own `npm run build`, and the final stage holds only the build output, `package.json`
 *   and the production dependencies installed from the lock file (`npm ci --omit=dev`): no tsx, no
 *   compiler, no test runner, no sources;
 * - it runs as the official Node image's unprivileged `node` user, by number (so Kubernetes can check
 *   `runAsNonRoot`), and the files it runs are owned by root, so the operator cannot change its code.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { DEFAULT_HEALTH_PORT, DEFAULT_METRICS_PORT, NODE_IMAGE_UID } from "./deployment-manifest.ts";

/** Node 20 is the oldest Node Capstan supports (package.json engines); `-slim` (Debian) is glibc-based. */
export const BASE_IMAGE = "node:20-bookworm-slim";

/**
 * The build argument naming every stage's image (default {@link BASE_IMAGE}), so a newer Node is
 * chosen at build time without editing the file (docs/testing-cli.md says what Node 24 costs and saves).
 */
export const BASE_IMAGE_ARG = "NODE_IMAGE";

/** The `capstan` command inside the image, relative to its working directory. */
export const IMAGE_CAPSTAN_BIN = "node_modules/capstan/bin/capstan.js";

/** What the image runs: the operator module as the image holds it, and how it gets there. */
export interface ImageLayout {
  /** The operator module in the project (relative, `/`-separated), as given. */
  sourcePath: string;
  /** The module the image runs: the compiled one for TypeScript, else `sourcePath`. */
  imagePath: string;
  /** The compiler's output folder, copied from the build stage; undefined for a JavaScript operator. */
  outDir: string | undefined;
}

/** The image's problem with this project, with what to change. */
export class ImageLayoutError extends Error {
  override readonly name = "ImageLayoutError";
}

/**
 * Where `sourcePath` ends up in the image. A TypeScript operator is compiled by the project's
 * `build` script with the `rootDir`/`outDir` of `tsconfig.build.json` (else `tsconfig.json`), as
 * `capstan new` projects are set up.
 */
export function imageLayout(sourcePath: string, projectDir: string): ImageLayout {
  const ts = /\.([mc]?)ts$/.exec(sourcePath);
  if (!ts) return { sourcePath, imagePath: sourcePath, outDir: undefined };
  const pkg = readJson(join(projectDir, "package.json")) as { scripts?: Record<string, string> } | undefined;
  if (!pkg?.scripts?.build) {
    throw new ImageLayoutError(
      `${sourcePath} is TypeScript and the image runs compiled JavaScript, but package.json has no "build" script (e.g. "build": "tsc -p tsconfig.build.json")`,
    );
  }
  const tsconfigName = ["tsconfig.build.json", "tsconfig.json"].find((f) => existsSync(join(projectDir, f)));
  const options =
    (tsconfigName && (readJson(join(projectDir, tsconfigName)) as TsConfig | undefined)?.compilerOptions) || {};
  if (!tsconfigName || !options.outDir) {
    throw new ImageLayoutError(
      `${sourcePath} is TypeScript, but ${tsconfigName ?? "tsconfig.json"} sets no compilerOptions.outDir: the image needs to know where "npm run build" writes the compiled operator`,
    );
  }
  const outDir = posix.normalize(options.outDir.replace(/\\/g, "/")).replace(/^\.\/|\/$/g, "");
  const rootDir = posix.normalize((options.rootDir ?? ".").replace(/\\/g, "/")).replace(/^\.\/|\/$/g, "");
  const inRoot = rootDir === "." ? sourcePath : posix.relative(rootDir, sourcePath);
  if (inRoot.startsWith("../")) {
    throw new ImageLayoutError(`${sourcePath} is outside the rootDir "${rootDir}" of ${tsconfigName}`);
  }
  const compiled = inRoot.replace(/\.([mc]?)ts$/, (_, m: string) => `.${m}js`);
  return { sourcePath, imagePath: posix.join(outDir, compiled), outDir };
}

interface TsConfig {
  compilerOptions?: { outDir?: string; rootDir?: string };
}

function readJson(path: string): unknown {
  try {
    // tsconfig files may hold comments and trailing commas; drop them before parsing.
    const text = readFileSync(path, "utf8")
      .replace(/("(?:\\.|[^"\\])*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_, s: string | undefined) => s ?? "")
      .replace(/,(\s*[}\]])/g, "$1");
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The Dockerfile text for an operator laid out as `layout` says. `installInputs` are the project's
 * paths `npm ci` reads besides package.json and the lock file: the folders of its `file:`
 * dependencies (file-dependencies.ts), such as the `vendor/` of a project made from a checkout.
 */
export function dockerfile(layout: ImageLayout, installInputs: readonly string[] = []): string {
  // Copied with the manifests, before `npm ci`: the layer cache still skips the install when only
  // sources change.
  const manifests = [
    "COPY package.json package-lock.json ./",
    ...installInputs.map((path) => `COPY ${path} ./${path}`),
  ].join("\n");
  const entrypoint = JSON.stringify(["node", IMAGE_CAPSTAN_BIN, "run"]);
  const cmd = JSON.stringify([layout.imagePath, "--log-format=json"]);
  const build =
    layout.outDir === undefined
      ? ""
      : `# Stage 1: compile the operator, with every dependency the compiler needs.
FROM \${${BASE_IMAGE_ARG}} AS build
WORKDIR /app
${manifests}
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

`;
  const n = layout.outDir === undefined ? 1 : 2;
  // A JavaScript operator's sources are what runs: the whole context (less .dockerignore) is copied.
  const program =
    layout.outDir === undefined
      ? "COPY . .\n"
      : `COPY package.json ./\nCOPY --from=build /app/${layout.outDir} ./${layout.outDir}\n`;
  return `# syntax=docker/dockerfile:1
# Generated by \`capstan generate dockerfile ${layout.sourcePath}\`. Build from the project root:
#   docker build -t <image> .
# with the .dockerignore of \`capstan generate dockerignore\` (node_modules and build output stay out).

# Every stage's Node.js image (Node 20 is the oldest Capstan supports). Another, without editing this file:
#   docker build --build-arg ${BASE_IMAGE_ARG}=node:24-bookworm-slim -t <image> .
ARG ${BASE_IMAGE_ARG}=${BASE_IMAGE}

${build}# Stage ${n}: production dependencies only, installed from the lock file.
FROM \${${BASE_IMAGE_ARG}} AS deps
WORKDIR /app
${manifests}
RUN npm ci --omit=dev --no-audit --no-fund

# Stage ${n + 1}: the runtime image. Files stay owned by root, so the operator cannot modify its own code.
FROM \${${BASE_IMAGE_ARG}}
ENV NODE_ENV=production
WORKDIR /app
${program}COPY --from=deps /app/node_modules ./node_modules
# The official image's unprivileged "node" user, by number so Kubernetes can check runAsNonRoot.
USER ${NODE_IMAGE_UID}:${NODE_IMAGE_UID}
EXPOSE ${DEFAULT_METRICS_PORT} ${DEFAULT_HEALTH_PORT}
ENTRYPOINT ${entrypoint}
CMD ${cmd}
`;
}

/** The `.dockerignore` beside it: what never belongs in the build context. */
export function dockerignore(layout: ImageLayout): string {
  return `# Generated by \`capstan generate dockerignore\`: kept out of the image's build context.
node_modules
${layout.outDir ?? "dist"}
.capstan
.git
coverage
*.log
.env
Dockerfile
.dockerignore
`;
}
