import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Deployment } from "kubernetes-types/apps/v1.d.ts";
import type { ClusterRole } from "kubernetes-types/rbac/v1.d.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { imageLayout } from "../../packages/capstan/src/cli/dockerfile.ts";
import { generate } from "../../packages/capstan/src/cli/generate.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import op from "./fixtures/widget-operator.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");
/** A project laid out as \`capstan new\` makes one: src/operator.ts, built into dist/operator.js. */
const project = join(repo, "test/cli/fixtures/project");
const fixture = "src/operator.ts";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function capstan(args: string[], cwd = project): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

function docs(text: string): { kind: string; metadata: { name: string; namespace?: string } }[] {
  return parseAllDocuments(text).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS();
  });
}

function rulesFor(role: ClusterRole, group: string, resource: string): string[] {
  const rule = role.rules?.find((r) => r.apiGroups?.includes(group) && r.resources?.includes(resource));
  return rule?.verbs ?? [];
}

/** Every verb granted on `resource`, over all the rules that name it. */
function verbsFor(role: ClusterRole, group: string, resource: string): string[] {
  const rules = role.rules?.filter((r) => r.apiGroups?.includes(group) && r.resources?.includes(resource)) ?? [];
  return [...new Set(rules.flatMap((r) => r.verbs))].sort();
}

const defaults = { namespace: "default", leaderElect: false };

describe("capstan generate", () => {
  it("prints the CRDs of the defineResource kinds the operator uses", () => {
    const out = docs(generate("crds", op, fixture, defaults, project));
    expect(out.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "CustomResourceDefinition/widgets.widgets.capstan.test",
    ]);
  });

  it("cuts the CRDs' descriptions with --max-description-length (0 removes them)", () => {
    const full = generate("crds", op, fixture, defaults, project);
    expect(full).toContain("description: State of Capstan operators' handlers");
    const cut = generate("crds", op, fixture, { ...defaults, maxDescriptionLength: 12 }, project);
    expect(cut).toContain("description: State of...");
    expect(generate("crds", op, fixture, { ...defaults, maxDescriptionLength: 0 }, project)).not.toContain(
      "description:",
    );
  });

  it("derives the ClusterRole from what the operator watches, owns and writes, and nothing more", () => {
    const out = docs(generate("rbac", op, fixture, defaults, project));
    expect(out.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "ServiceAccount/widgets",
      "ClusterRole/widgets",
      "ClusterRoleBinding/widgets",
      "ClusterRole/widgets-metrics-reader",
    ]);
    const role = out[1] as unknown as ClusterRole;
    // Declared get/create/update (the reconciler's own requests), list/watch of `owns`, create/patch of ctx.apply.
    expect(rulesFor(role, "", "configmaps")).toEqual(["get", "list", "watch", "create", "update", "patch"]);
    expect(rulesFor(role, "widgets.capstan.test", "widgets")).toEqual(["list", "watch"]);
    expect(rulesFor(role, "widgets.capstan.test", "widgets/status")).toEqual(["patch"]);
    expect(
      role.rules
        ?.filter((r) => r.resources?.includes("customresourcedefinitions"))
        .map((r) => ({ verbs: r.verbs, resourceNames: r.resourceNames })),
    ).toEqual([
      { verbs: ["create"], resourceNames: undefined },
      { verbs: ["get", "update"], resourceNames: ["widgets.widgets.capstan.test"] },
    ]);
    expect(rulesFor(role, "", "events")).toEqual(["create", "patch"]);
    expect(rulesFor(role, "coordination.k8s.io", "leases")).toEqual([]);
    expect(role.rules?.some((r) => r.verbs.includes("*") || r.resources?.includes("*"))).toBe(false);
  });

  it("lets the operator review the scrapes of its secure metrics, and makes the role that may scrape them", () => {
    const out = docs(generate("rbac", op, fixture, defaults, project));
    const role = out[1] as unknown as ClusterRole;
    expect(rulesFor(role, "authentication.k8s.io", "tokenreviews")).toEqual(["create"]);
    expect(rulesFor(role, "authorization.k8s.io", "subjectaccessreviews")).toEqual(["create"]);
    expect(out[3]).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: {
        name: "widgets-metrics-reader",
        labels: { "app.kubernetes.io/name": "widgets", "app.kubernetes.io/managed-by": "capstan" },
      },
      rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
    });
  });

  it("grants the Lease only with --leader-elect", () => {
    const out = docs(generate("rbac", op, fixture, { ...defaults, leaderElect: true }, project));
    const role = out.find((d) => d.kind === "ClusterRole") as unknown as ClusterRole;
    const leases = role.rules?.filter((r) => r.resources?.includes("leases"));
    expect(leases?.map((r) => ({ verbs: r.verbs, resourceNames: r.resourceNames }))).toEqual([
      { verbs: ["create"], resourceNames: undefined },
      { verbs: ["get", "update"], resourceNames: ["widgets-leader"] },
    ]);
  });

  it("grants a sharded operator its Leases and patch of its kinds' labels, and runs several replicas with --sharded", () => {
    const plain = docs(generate("rbac", op, fixture, defaults, project)).find((d) => d.kind === "ClusterRole");
    // Without sharding the controller's Widgets are only watched (its status is patched through /status).
    expect(verbsFor(plain as unknown as ClusterRole, "widgets.capstan.test", "widgets")).not.toContain("patch");
    expect(verbsFor(plain as unknown as ClusterRole, "coordination.k8s.io", "leases")).toEqual([]);
    const sharded = { ...defaults, sharded: true };
    const role = docs(generate("rbac", op, fixture, sharded, project)).find(
      (d) => d.kind === "ClusterRole",
    ) as unknown as ClusterRole;
    expect(verbsFor(role, "coordination.k8s.io", "leases")).toEqual([
      "create",
      "delete",
      "get",
      "list",
      "update",
      "watch",
    ]);
    expect(verbsFor(role, "widgets.capstan.test", "widgets")).toContain("patch");
    expect(verbsFor(role, "", "configmaps")).toContain("patch");
    const [deployment] = docs(generate("deploy", op, fixture, sharded, project));
    const d = deployment as unknown as Deployment;
    expect(d.spec?.replicas).toBe(2);
    expect(d.spec?.strategy?.type).toBe("RollingUpdate");
    expect(d.spec?.template.spec?.containers[0]?.args).toContain("--sharded");
    expect(d.spec?.template.spec?.containers[0]?.args).not.toContain("--leader-elect");
  });

  it("grants no write access to CRDs, and tells capstan run not to register them, with --no-crd-registration", () => {
    const options = { ...defaults, registerCrds: false };
    const role = docs(generate("rbac", op, fixture, options, project)).find((d) => d.kind === "ClusterRole");
    expect(rulesFor(role as unknown as ClusterRole, "apiextensions.k8s.io", "customresourcedefinitions")).toEqual([]);
    const [deployment] = docs(generate("deploy", op, fixture, options, project));
    expect((deployment as unknown as Deployment).spec?.template.spec?.containers[0]?.args).toContain(
      "--no-crd-registration",
    );
  });

  it("all: ships the CRDs, so the operator does not register them and gets no access to CRDs", () => {
    const out = docs(generate("all", op, fixture, defaults, project));
    expect(out.filter((d) => d.kind === "CustomResourceDefinition").map((d) => d.metadata.name)).toEqual([
      "widgets.widgets.capstan.test",
    ]);
    const role = out.find((d) => d.kind === "ClusterRole" && d.metadata.name === "widgets");
    expect(rulesFor(role as unknown as ClusterRole, "apiextensions.k8s.io", "customresourcedefinitions")).toEqual([]);
    const deployment = out.find((d) => d.kind === "Deployment") as unknown as Deployment;
    expect(deployment.spec?.template.spec?.containers[0]?.args).toContain("--no-crd-registration");
    // rbac alone still grants what registration needs: it may be applied without the CRDs.
    const alone = docs(generate("rbac", op, fixture, defaults, project)).find((d) => d.kind === "ClusterRole");
    expect(rulesFor(alone as unknown as ClusterRole, "apiextensions.k8s.io", "customresourcedefinitions")).toEqual([
      "create",
    ]);
  });

  it("grants Roles in the watched namespaces only, keeping a ClusterRole for the cluster-scoped CRD registration", () => {
    const options = { ...defaults, namespace: "ops", watchNamespaces: ["shop", "billing"] };
    const out = docs(generate("rbac", op, fixture, options, project));
    expect(out.map((d) => `${d.kind}/${d.metadata.namespace ?? ""}`)).toEqual([
      "Namespace/",
      "ServiceAccount/ops",
      "Role/shop",
      "RoleBinding/shop",
      "Role/billing",
      "RoleBinding/billing",
      "ClusterRole/",
      "ClusterRoleBinding/",
      "ClusterRole/",
    ]);
    const role = out[2] as unknown as ClusterRole;
    expect(rulesFor(role, "", "configmaps")).toContain("create");
    expect(rulesFor(role, "apiextensions.k8s.io", "customresourcedefinitions")).toEqual([]);
    const clusterRole = out[6] as unknown as ClusterRole;
    expect(clusterRole.rules?.map((r) => r.resources?.join())).toEqual([
      "customresourcedefinitions",
      "customresourcedefinitions",
      "tokenreviews",
      "subjectaccessreviews",
    ]);
    const [, deployment] = docs(generate("deploy", op, fixture, options, project));
    expect((deployment as unknown as Deployment).spec?.template.spec?.containers[0]?.args).toEqual(
      expect.arrayContaining(["--namespace=shop", "--namespace=billing"]),
    );
  });

  it("refuses an image for a module outside the build context", () => {
    expect(() => generate("deploy", op, "../elsewhere/operator.ts", defaults, project)).toThrow(
      "../elsewhere/operator.ts is outside the current folder; run capstan generate from the project root",
    );
  });

  it("runs one replica with Recreate, probes on the health port, HTTPS metrics behind a Service, as non-root", () => {
    const [deployment, service] = docs(
      generate("deploy", op, fixture, { ...defaults, image: "example/widgets:1.0" }, project),
    );
    const d = deployment as unknown as Deployment;
    expect(d.spec?.replicas).toBe(1);
    expect(d.spec?.strategy).toEqual({ type: "Recreate" });
    const pod = d.spec?.template.spec;
    const container = pod?.containers[0];
    expect(container?.image).toBe("example/widgets:1.0");
    expect(container?.args).toEqual([
      "dist/operator.js",
      "--health-probe-bind-address=:8081",
      "--metrics-bind-address=:8443",
      "--metrics-secure=true",
      "--log-format=json",
    ]);
    expect(container?.ports).toEqual([
      { name: "health", containerPort: 8081, protocol: "TCP" },
      { name: "metrics", containerPort: 8443, protocol: "TCP" },
    ]);
    expect(service).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "widgets-metrics-service",
        namespace: "default",
        labels: { "app.kubernetes.io/name": "widgets", "app.kubernetes.io/managed-by": "capstan" },
      },
      spec: {
        selector: { "app.kubernetes.io/name": "widgets" },
        ports: [{ name: "https", port: 8443, targetPort: "metrics", protocol: "TCP" }],
      },
    });
    expect(container?.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "health" });
    expect(container?.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "health" });
    expect(pod?.securityContext?.runAsNonRoot).toBe(true);
    expect(container?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(pod?.serviceAccountName).toBe("widgets");
    expect(d.spec?.selector.matchLabels).toEqual({ "app.kubernetes.io/name": "widgets" });
    expect(d.spec?.template.metadata?.labels).toMatchObject({ "app.kubernetes.io/name": "widgets" });
  });

  it("runs several replicas with rolling updates and --leader-elect when asked", () => {
    const [deployment] = docs(
      generate("deploy", op, fixture, { ...defaults, leaderElect: true, replicas: 3 }, project),
    );
    const d = deployment as unknown as Deployment;
    expect(d.spec?.replicas).toBe(3);
    expect(d.spec?.strategy?.type).toBe("RollingUpdate");
    expect(d.spec?.template.spec?.containers[0]?.args).toContain("--leader-elect");
  });

  it("writes a Dockerfile that compiles in one stage and runs the compiled module as non-root in the last", () => {
    const text = generate("dockerfile", op, fixture, defaults, project);
    // Every stage on one image, a build argument whose default is the oldest Node Capstan supports.
    expect(text.match(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m)).not.toBeNull();
    expect(text.indexOf("ARG NODE_IMAGE=")).toBeLessThan(text.indexOf("FROM "));
    const image = "$" + "{NODE_IMAGE}"; // the Dockerfile's variable, not this file's
    expect(text.match(/^FROM .*$/gm)).toEqual([`FROM ${image} AS build`, `FROM ${image} AS deps`, `FROM ${image}`]);
    expect(text).toMatch(/^RUN npm run build$/m);
    expect(text).toMatch(/^RUN npm ci --omit=dev --no-audit --no-fund$/m);
    expect(text).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(text).toMatch(/^COPY --from=deps \/app\/node_modules \.\/node_modules$/m);
    expect(text).toMatch(/^USER 1000:1000$/m);
    expect(text).toContain('ENTRYPOINT ["node","node_modules/capstan/bin/capstan.js","run"]');
    expect(text).toContain('CMD ["dist/operator.js","--log-format=json"]');
    // Nothing but the build output, package.json and production dependencies reaches the last stage.
    const last = text.slice(text.lastIndexOf("FROM "));
    expect(last.match(/^COPY .*$/gm)).toEqual([
      "COPY package.json ./",
      "COPY --from=build /app/dist ./dist",
      "COPY --from=deps /app/node_modules ./node_modules",
    ]);
    expect(generate("dockerignore", op, fixture, defaults, project).split("\n")).toEqual(
      expect.arrayContaining(["node_modules", "dist", ".capstan"]),
    );
  });

  it("copies the folders of the project's file: dependencies before each npm ci", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-vendored-"));
    try {
      await writeFile(
        join(dir, "package.json"),
        JSON.stringify({
          scripts: { build: "tsc -p tsconfig.build.json" },
          dependencies: { capstan: "file:vendor/capstan-0.2.0.tgz", lib: "file:./libs/lib-1.0.0.tgz" },
          devDependencies: { "capstan-dev": "file:vendor/capstan-dev-0.2.0.tgz", typescript: "^5.9.0" },
          // Outside the project: no COPY can bring it in (the command line warns instead).
          optionalDependencies: { far: "file:../far-1.0.0.tgz" },
        }),
      );
      await writeFile(
        join(dir, "tsconfig.build.json"),
        '{ "compilerOptions": { "outDir": "dist", "rootDir": "src" } }',
      );
      const text = generate("dockerfile", op, fixture, defaults, dir);
      const install = "COPY package.json package-lock.json ./\nCOPY libs ./libs\nCOPY vendor ./vendor\nRUN npm ci";
      expect(text.split(install)).toHaveLength(3);
      expect(text).not.toContain("far");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("maps the operator module to the build's output by the tsconfig's rootDir and outDir", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-layout-"));
    try {
      expect(imageLayout("operator.js", dir)).toEqual({
        sourcePath: "operator.js",
        imagePath: "operator.js",
        outDir: undefined,
      });
      expect(() => imageLayout("src/op.ts", dir)).toThrow('package.json has no "build" script');
      await writeFile(join(dir, "package.json"), '{ "scripts": { "build": "tsc" } }');
      await writeFile(join(dir, "tsconfig.json"), "{ /* no outDir */ }");
      expect(() => imageLayout("src/op.ts", dir)).toThrow("tsconfig.json sets no compilerOptions.outDir");
      await writeFile(join(dir, "tsconfig.json"), '{ "compilerOptions": { "outDir": "./build/", "rootDir": "." } }');
      expect(imageLayout("src/op.mts", dir).imagePath).toBe("build/src/op.mjs");
      await writeFile(join(dir, "tsconfig.build.json"), '{ "compilerOptions": { "outDir": "out", "rootDir": "src" } }');
      expect(imageLayout("src/op.ts", dir)).toEqual({ sourcePath: "src/op.ts", imagePath: "out/op.js", outDir: "out" });
      expect(() => imageLayout("lib/op.ts", dir)).toThrow(
        'lib/op.ts is outside the rootDir "src" of tsconfig.build.json',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("capstan generate on the command line", () => {
  let cluster: TestCluster;
  let dir: string;
  beforeAll(async () => {
    cluster = await startTestCluster();
    dir = await mkdtemp(join(tmpdir(), "capstan-generate-"));
  });
  afterAll(async () => {
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  function kubectl(args: string[], stdin?: string): Promise<Result> {
    return new Promise((resolve) => {
      const child = execFile(
        process.env.KUBECTL ?? "kubectl",
        ["--kubeconfig", cluster.kubeconfigPath, ...args],
        { timeout: 20_000, env: { ...process.env, HOME: dir, KUBECACHEDIR: join(dir, "cache") } },
        (err, stdout, stderr) => {
          resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
        },
      );
      child.stdin?.end(stdin ?? "");
    });
  }

  it("prints manifests that kubectl applies cleanly to the embedded API server, twice", async () => {
    const out = await capstan(["generate", "all", fixture, "--namespace", "widgets-system", "--leader-elect"]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(docs(out.stdout).map((d) => d.kind)).toEqual([
      "CustomResourceDefinition",
      "Namespace",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRole",
      "Deployment",
      "Service",
    ]);
    const applied = await kubectl(["apply", "-f", "-"], out.stdout);
    expect(applied.stderr).toBe("");
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(
      "customresourcedefinition.apiextensions.k8s.io/widgets.widgets.capstan.test created",
    );
    expect(applied.stdout).toContain("deployment.apps/widgets created");
    expect(applied.stdout).toContain("clusterrole.rbac.authorization.k8s.io/widgets-metrics-reader created");
    expect(applied.stdout).toContain("service/widgets-metrics-service created");
    const again = await kubectl(["apply", "-f", "-"], out.stdout);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("deployment.apps/widgets unchanged");
    const get = await kubectl([
      "get",
      "deployment",
      "widgets",
      "-n",
      "widgets-system",
      "-o",
      "jsonpath={.spec.replicas}",
    ]);
    expect(get.stdout).toBe("2");
  }, 60_000); // two process start-ups through tsx and three kubectl runs on a shared machine

  it("warns, with the fix, of file: dependencies outside the project, which the image's npm ci cannot read", async () => {
    const outside = join(dir, "outside");
    await mkdir(join(outside, "src"), { recursive: true });
    await writeFile(
      join(outside, "package.json"),
      JSON.stringify({
        type: "module",
        scripts: { build: "tsc -p tsconfig.build.json" },
        dependencies: { capstan: "file:/home/me/capstan/.packs/capstan-0.2.0.tgz" },
        devDependencies: { "capstan-dev": "file:../capstan/.packs/capstan-dev-0.2.0.tgz" },
      }),
    );
    await writeFile(
      join(outside, "tsconfig.build.json"),
      '{ "compilerOptions": { "outDir": "dist", "rootDir": "src" } }',
    );
    await writeFile(
      join(outside, "src/operator.ts"),
      `export { default } from ${JSON.stringify(join(repo, "test/cli/fixtures/widget-operator.ts"))};\n`,
    );
    const out = await capstan(["generate", "dockerfile", "src/operator.ts"], outside);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain("RUN npm ci --omit=dev");
    expect(out.stderr).toBe(
      'capstan generate: warning: package.json depends on capstan "file:/home/me/capstan/.packs/capstan-0.2.0.tgz", ' +
        'capstan-dev "file:../capstan/.packs/capstan-dev-0.2.0.tgz", outside the project: the image\'s "npm ci" (and a clone ' +
        'on any other machine) cannot read them. Fix: run "npx capstan vendor --from <capstan checkout>" to copy the ' +
        'capstan tarballs into vendor/ and depend on them there; the Dockerfile then copies them before "npm ci".\n',
    );
    // The fixture project depends on nothing local: no warning.
    const clean = await capstan(["generate", "dockerfile", fixture]);
    expect(clean.stderr).toBe("");
  }, 60_000);

  it("exits 2 naming an unknown target, and 1 for a module without an operator", async () => {
    const unknown = await capstan(["generate", "helm", fixture]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'cannot generate "helm"; choose one of crds, rbac, deploy, webhooks, all, dockerfile, dockerignore',
    );
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    const empty = join(dir, "not-an-operator.ts");
    await writeFile(empty, "export const x = 1;\n");
    const missing = await capstan(["generate", "crds", empty]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("exports no operator");
  }, 60_000);
});
