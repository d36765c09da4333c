/**
 * The files of a new operator project (`capstan new`): one custom resource, a level-triggered
 * controller owning a ConfigMap, its end-to-end test on the embedded API server, a sample manifest,
 * a Dockerfile, and the scripts to run, test, build and generate its manifests. Everything a user
 * needs to see the whole loop work in a minute, small enough to replace with their own logic.
 *
 * The project type-checks only its own code (Capstan ships compiled JavaScript with `.d.ts`), builds
 * `src/` into `dist/` with tsc, and runs the compiled `dist/operator.js` in its image.
 */
import { pluralize } from "../resources/plural.ts";
import { dockerfile, dockerignore, type ImageLayout } from "./dockerfile.ts";
import { installInputs, localDependencies } from "./file-dependencies.ts";
import { VENDOR_DIR } from "./vendored-packages.ts";

/** What a project is generated from. */
export interface ProjectSpec {
  /** npm package name and operator name (a DNS label: `widget-operator`). */
  name: string;
  /** The custom resource's API group (`example.com`). */
  group: string;
  /** Its version (`v1alpha1`). */
  version: string;
  /** Its kind, PascalCase (`Widget`). */
  kind: string;
  /**
   * The `capstan` dependency: a semver range, or `file:vendor/<tarball>` for a tarball copied into
   * the project (vendored-packages.ts).
   */
  capstanDependency: string;
  /** The `capstan-dev` devDependency, likewise. */
  capstanDevDependency: string;
  /**
   * The kind shares its name with a built-in kind (builtin-kind-names.ts), so the README names the
   * resource with its group (`cronjobs.example.com`): the bare plural would mean the built-in one.
   */
  shadowsBuiltin?: boolean;
}

/** Where the project's build puts the operator, and so what its image runs. */
const IMAGE: ImageLayout = { sourcePath: "src/operator.ts", imagePath: "dist/operator.js", outDir: "dist" };

/** Relative path -> file content. */
export type ProjectFiles = Record<string, string>;

export function projectFiles(spec: ProjectSpec): ProjectFiles {
  const plural = pluralize(spec.kind);
  const lower = spec.kind.toLowerCase();
  const pkg = packageJson(spec);
  // The project's own path does not matter: only whether each local dependency lies inside it.
  const local = localDependencies("/project", pkg);
  const vendored = local.some((d) => d.inside && d.path.startsWith(`${VENDOR_DIR}/`));
  return {
    "package.json": `${JSON.stringify(pkg, null, 2)}\n`,
    "tsconfig.json": `${JSON.stringify(TSCONFIG, null, 2)}\n`,
    "tsconfig.build.json": `${JSON.stringify(TSCONFIG_BUILD, null, 2)}\n`,
    "vitest.config.ts": VITEST_CONFIG,
    ".gitignore": "node_modules/\ndist/\n.capstan/\n",
    Dockerfile: dockerfile(IMAGE, installInputs(local)),
    ".dockerignore": dockerignore(IMAGE),
    "src/resources.ts": resourcesTs(spec),
    "src/operator.ts": operatorTs(spec),
    "src/operator.test.ts": operatorTestTs(spec),
    [`manifests/${lower}.yaml`]: sampleYaml(spec),
    "README.md": readme(spec, spec.shadowsBuiltin ? `${plural}.${spec.group}` : plural, lower, vendored),
  };
}

function packageJson(spec: ProjectSpec): Record<string, unknown> & {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
} {
  return {
    name: spec.name,
    version: "0.1.0",
    private: true,
    type: "module",
    engines: { node: ">=20" },
    scripts: {
      dev: "capstan dev src/operator.ts",
      start: "capstan run src/operator.ts",
      build: "tsc -p tsconfig.build.json",
      test: "tsc --noEmit && vitest run",
      "generate:crds": "capstan generate crds src/operator.ts",
      "generate:all": `capstan generate all src/operator.ts --image ${spec.name}:latest --namespace ${spec.name}`,
    },
    dependencies: { capstan: spec.capstanDependency },
    devDependencies: {
      "@types/node": "^20.19.0",
      "capstan-dev": spec.capstanDevDependency,
      // Runs src/operator.ts for `npm start` and `npm run dev`; the image runs dist/ and needs none.
      tsx: "^4.19.0",
      typescript: "^5.9.0",
      vitest: "^4.1.0",
    },
    // esbuild (under tsx and vitest) installs its platform binary from an install script; npm 11
    // lists every package whose install script package.json has not reviewed on each install.
    allowScripts: { esbuild: true },
  };
}

/** Type-checks src/ (tests included) against Capstan's .d.ts; imports name their .ts files. */
const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    types: ["node"],
  },
  include: ["src"],
};

/** `npm run build`: src/ to dist/ (tests left out), `.ts` imports rewritten to `.js`. */
const TSCONFIG_BUILD = {
  extends: "./tsconfig.json",
  compilerOptions: { noEmit: false, rootDir: "src", outDir: "dist", rewriteRelativeImportExtensions: true },
  include: ["src"],
  exclude: ["src/**/*.test.ts"],
};

const VITEST_CONFIG = `import { defineConfig } from "vitest/config";

// On a real cluster (CAPSTAN_TEST_BACKEND=envtest or kubeconfig) a control plane takes seconds to
// start, and garbage collection of a kind just registered up to a minute (cluster.timeouts).
const realCluster = (process.env.CAPSTAN_TEST_BACKEND?.trim() || "embedded") !== "embedded";

export default defineConfig({
  test: {
    // Each test starts an embedded API server and the operator: seconds, not milliseconds.
    testTimeout: realCluster ? 120_000 : 30_000,
    hookTimeout: realCluster ? 120_000 : 30_000,
  },
});
`;

function resourcesTs(spec: ProjectSpec): string {
  return `import { defineResource, type ObjectOf, Type } from "capstan";

// The custom resource this operator manages. Its schema gives the TypeScript types, the CRD
// (\`npm run generate:crds\`, the TSDoc comments below becoming its descriptions for kubectl explain)
// and the validation the API server applies.

/** A message the operator keeps in a ConfigMap it owns. */
export const ${spec.kind} = defineResource({
  group: "${spec.group}",
  version: "${spec.version}",
  kind: "${spec.kind}",
  scope: "Namespaced",
  spec: Type.Object({
    /** What the operator writes into the ConfigMap it owns. */
    message: Type.String({ minLength: 1 }),
  }),
  status: Type.Object({
    /** The ConfigMap holding the message, once written. */
    configMap: Type.Optional(Type.String()),
  }),
  printerColumns: [
    { name: "Message", type: "string", jsonPath: ".spec.message" },
    { name: "ConfigMap", type: "string", jsonPath: ".status.configMap" },
  ],
});

export type ${spec.kind}Object = ObjectOf<typeof ${spec.kind}>;
`;
}

function operatorTs(spec: ProjectSpec): string {
  return `import { isDeleted, operator } from "capstan";
import { ConfigMap } from "capstan/core";
import { ${spec.kind} } from "./resources.ts";

export { ${spec.kind} } from "./resources.ts";

/** The ConfigMap a ${spec.kind} named \`name\` owns. */
export function configMapName(name: string): string {
  return \`\${name}-message\`;
}

const op = operator({ name: "${spec.name}" });

/**
 * Level-triggered: called with the ${spec.kind} as it is now (after any change to it or to a
 * ConfigMap it owns), it makes the world match its spec. Thrown errors are retried with backoff.
 */
op.controller(${spec.kind})
  .owns(ConfigMap)
  .reconcile(async (obj, ctx) => {
    // Deleted: nothing to do, its ConfigMap is garbage-collected with it (owner reference).
    if (isDeleted(obj)) return;
    const name = configMapName(ctx.key.name);
    await ctx.apply(ConfigMap, ctx.adopt({ metadata: { name }, data: { message: obj.spec.message } }));
    if (obj.status?.configMap !== name) await ctx.patchStatus({ configMap: name });
  });

export default op;
`;
}

function operatorTestTs(spec: ProjectSpec): string {
  return `import { ConfigMap } from "capstan/core";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import op, { configMapName, ${spec.kind} } from "./operator.ts";

// An embedded Kubernetes API server, started in milliseconds: no cluster, no Docker. The same
// tests run on an existing cluster with CAPSTAN_TEST_BACKEND=kubeconfig, or on kube-apiserver and
// etcd binaries with CAPSTAN_TEST_BACKEND=envtest KUBEBUILDER_ASSETS=<dir> (docs: "Backends"), in a
// namespace of their own: cluster.namespace ("default" on the embedded server).
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.run(op);
});
afterAll(async () => {
  await cluster?.stop();
});

it("writes the message into a ConfigMap it owns, and keeps it in step", async () => {
  const ns = cluster.namespace;
  const objects = cluster.client.resource(${spec.kind}, ns);
  await objects.create(${spec.kind}.make({ metadata: { name: "hello" }, spec: { message: "hi" } }));
  await cluster.waitFor(ConfigMap, \`\${ns}/\${configMapName("hello")}\`, (cm) => cm.data?.["message"] === "hi");

  await objects.patch("hello", { spec: { message: "hello again" } }, { type: "merge" });
  const cm = await cluster.waitFor(
    ConfigMap,
    \`\${ns}/\${configMapName("hello")}\`,
    (c) => c.data?.["message"] === "hello again",
  );
  expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "${spec.kind}", name: "hello", controller: true });
  const obj = await cluster.waitFor(${spec.kind}, \`\${ns}/hello\`, (o) => o.status?.configMap !== undefined);
  expect(obj.status?.configMap).toBe(configMapName("hello"));
});

it("refuses an object its schema rejects, as a real API server does", async () => {
  const objects = cluster.client.resource(${spec.kind}, cluster.namespace);
  await expect(objects.create(${spec.kind}.make({ metadata: { name: "empty" }, spec: { message: "" } }))).rejects.toThrow(
    /spec.message/,
  );
});
`;
}

function sampleYaml(spec: ProjectSpec): string {
  return `apiVersion: ${spec.group}/${spec.version}
kind: ${spec.kind}
metadata:
  name: hello
spec:
  message: hello from ${spec.name}
`;
}

function readme(spec: ProjectSpec, resource: string, lower: string, vendored: boolean): string {
  return `# ${spec.name}

A Kubernetes operator written with Capstan: each
\`${spec.kind}\` (\`${pluralize(spec.kind)}.${spec.group}\`) gets a ConfigMap holding its \`spec.message\`, kept in step
and garbage-collected with it.

\`\`\`sh
npm install
npm run dev          # the embedded API server + this operator, restarted when you save; a dashboard
# in another terminal:
export KUBECONFIG=.capstan/kubeconfig
kubectl apply -f manifests/${lower}.yaml
kubectl get ${resource}                       # MESSAGE, CONFIGMAP
kubectl get configmap hello-message -o yaml

npm test             # typecheck, and the end-to-end test on an embedded API server (no cluster)
npm run build        # dist/: the compiled operator the image runs
docker build -t ${spec.name}:latest .   # a non-root image with production dependencies only
npm run generate:all # CRD, RBAC and Deployment for a real cluster: | kubectl apply -f -
\`\`\`

- \`src/resources.ts\`: the custom resource (TypeBox schema -> types, CRD, validation)
- \`src/operator.ts\`: the controller
- \`src/operator.test.ts\`: its end-to-end test
${vendored ? VENDORED_README : ""}`;
}

const VENDORED_README = `
## Capstan from a source checkout

This project was made from a Capstan checkout, whose packages are not on the npm registry yet:
\`${VENDOR_DIR}/\` holds them, package.json and package-lock.json name them by relative
\`file:${VENDOR_DIR}/...\` paths, and the Dockerfile copies \`${VENDOR_DIR}/\` before \`npm ci\`. Commit
\`${VENDOR_DIR}/\` with the project: it builds anywhere, without the checkout.

To take a newer checkout's packages: \`npm run pack\` in the checkout, then here
\`npx capstan vendor --from <checkout>\` (copies the tarballs, points package.json and the lock file
at them, removes the old ones). Once Capstan is on the registry:
\`npm install capstan@latest && npm install -D capstan-dev@latest\`, then delete \`${VENDOR_DIR}/\`.
`;
