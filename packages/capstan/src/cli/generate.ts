import { readFile } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { toCrd } from "../resources/crd.ts";
import { describeCrd, type KindDescriptions } from "../resources/crd-descriptions.ts";
import { compareRbac, leastPrivilegeNeeds, type ObservedAccess } from "../resources/observed-rbac.ts";
import { metricsReaderRole, rbacManifests } from "../resources/rbac.ts";
import { parseCommandArgs } from "./command-args.ts";
import { deploymentManifest, metricsServiceManifest, namespaceManifest } from "./deployment-manifest.ts";
import { dockerfile, dockerignore, ImageLayoutError, imageLayout } from "./dockerfile.ts";
import { fileDependencies, installInputs, unreachableDependencies } from "./file-dependencies.ts";
import { comparisonSummary, ObservedReportError, readObservedAccess } from "./observed-report.ts";
import { type LoadedOperator, loadOperator, OperatorModuleError } from "./operator-module.ts";
import { loadTypeScript, readDescriptions } from "./source-descriptions.ts";
import { crdsWithConversion, WEBHOOK_SERVER, webhookCertSecretName, webhookManifests } from "./webhook-manifests.ts";

const USAGE = `Usage: capstan generate crds|rbac|deploy|webhooks|all|dockerfile|dockerignore <operator.ts> [options]

Prints, on stdout, what deploying the operator needs, derived from its code:
  crds        the CustomResourceDefinitions of the defineResource kinds it uses (with
              conversion.strategy Webhook, calling its Service, for kinds it converts: op.convert)
  rbac        ServiceAccount, ClusterRole and ClusterRoleBinding with exactly the permissions it needs
              (and the reviews of its secure metrics endpoint), and the <name>-metrics-reader
              ClusterRole to bind to whoever scrapes /metrics (Prometheus)
  deploy      the Deployment running \`capstan run\`, the <name>-metrics-service Service of its HTTPS
              /metrics (and its Namespace unless it is a built-in one)
  webhooks    the Validating/MutatingWebhookConfigurations of its op.on.validate/mutate handlers,
              the Service of those and of its conversions, and a cert-manager Issuer and
              Certificate (CA injected by cert-manager)
  all         crds, rbac, webhooks (if any) and deploy in one stream, ready for \`kubectl apply -f -\`;
              as it ships the CRDs, the operator does not register them (--no-crd-registration
              implied): no write access to CRDs
  dockerfile  a multi-stage image: compiles a TypeScript operator (npm run build), then runs the
              compiled JavaScript with production dependencies only, as a non-root user
  dockerignore  the .dockerignore to keep beside that Dockerfile

CRD field descriptions come from TypeBox's description option and, where a field has none, from the
TSDoc comment (/** ... */) on it in the operator's source, read with the project's typescript package.

The Deployment and the image run the compiled module: for src/operator.ts, where the rootDir and
outDir of tsconfig.build.json (else tsconfig.json) put it (dist/operator.js in a capstan new project).

Options:
  --image IMG          container image of the Deployment (default <operator name>:latest)
  --namespace NS       namespace of the ServiceAccount and Deployment (default "default")
  --watch-namespace NS the operator watches only NS (repeatable): Roles in those namespaces instead
                       of one ClusterRole (cluster-scoped kinds keep a ClusterRole); default: all
  --leader-elect       several replicas with leader election (also grants Lease access)
  --no-crd-registration  the operator does not register its CRDs (apply \`capstan generate crds\`
                       yourself): no write access to CRDs, and the flag passed to \`capstan run\`
  --sharded            several replicas sharing the objects (capstan run --sharded; grants the
                       Leases of its members and patch of its kinds' labels)
  --shard-admission    with --sharded: new objects are assigned as they are created, by a mutating
                       webhook every replica serves (failurePolicy Ignore, 2 s timeout): webhooks
                       writes it into <operator>-mutating, deploy passes the flag to capstan run
  --replicas N         replicas with --leader-elect or --sharded (default 2)
  --health-port P      /healthz and /readyz port (default 8081)
  --metrics-port P     /metrics port, HTTPS with TokenReview/SubjectAccessReview (default 8443)
  --max-description-length N  crds: cut field descriptions to N characters (0: none), as controller-gen's
                       crd:maxDescLen; built-in schemas (capstan/schemas/...) carry Kubernetes' own docs,
                       which can exceed the 256 KiB client-side \`kubectl apply\` keeps in an annotation
  --observed FILE      rbac: the rules a test run used instead (repeatable; the JSON report of
                       capstan-dev/testing's cluster.writeRbacReport or CAPSTAN_RBAC_REPORT_DIR):
                       the generated rules cut down to those the ServiceAccount's requests used,
                       plus any request no generated rule allows; on stderr, what was used,
                       never used and missing
  --ca-bundle FILE     webhooks, crds: the PEM CA that signed the serving certificate, written into
                       the configurations and converted CRDs instead of cert-manager objects (create the Secret
                       <operator>-webhook-server-cert with tls.crt and tls.key yourself)
`;

/** Input that cannot produce manifests, with the reason. */
export class GenerateError extends Error {
  override readonly name = "GenerateError";
}

const TARGETS = ["crds", "rbac", "deploy", "webhooks", "all", "dockerfile", "dockerignore"] as const;
type Target = (typeof TARGETS)[number];

interface GenerateOptions {
  image?: string;
  namespace: string;
  /** Namespaces the operator watches; all when absent or empty. */
  watchNamespaces?: string[];
  leaderElect: boolean;
  sharded?: boolean;
  /** `--shard-admission` (with `sharded`): the shard assignment webhook, and the flag to `capstan run`. */
  shardAdmission?: boolean;
  /** The operator registers its CRDs at start-up (default true). */
  registerCrds?: boolean;
  replicas?: number;
  healthPort?: number;
  metricsPort?: number;
  /** PEM of the webhook serving certificate's CA (`--ca-bundle`); cert-manager's otherwise. */
  caBundle?: string;
  /** `--max-description-length`: see `ToCrdOptions.maxDescriptionLength`. */
  maxDescriptionLength?: number;
  /** Descriptions from the source's TSDoc comments, added to the CRDs where they have none. */
  descriptions?: readonly KindDescriptions[];
  /** rbac: what the ServiceAccount did in a test run (`--observed`): grant that, not what is declared. */
  observed?: ObservedAccess;
}

/** `capstan generate`: manifests and a Dockerfile for one operator module. */
export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs("capstan generate", USAGE, () => parse(args));
  if (!parsed.ok) return parsed.exitCode;
  const { target, file, options, caBundleFile, observedFiles } = parsed.value;
  if (caBundleFile !== undefined) {
    try {
      options.caBundle = await readFile(caBundleFile, "utf8");
    } catch (err) {
      process.stderr.write(`capstan generate: --ca-bundle ${caBundleFile}: ${(err as Error).message}\n`);
      return 1;
    }
    if (!options.caBundle.includes("-----BEGIN CERTIFICATE-----")) {
      process.stderr.write(`capstan generate: --ca-bundle ${caBundleFile} holds no PEM certificate\n`);
      return 1;
    }
  }
  let op: LoadedOperator;
  try {
    op = await loadOperator(file);
  } catch (err) {
    if (!(err instanceof OperatorModuleError)) throw err;
    process.stderr.write(`capstan generate: ${err.message}\n`);
    return 1;
  }
  if (target === "crds" || target === "all") {
    const ts = await loadTypeScript(file);
    if (ts === undefined) {
      process.stderr.write(
        "capstan generate: typescript is not installed, so the CRDs have no descriptions from TSDoc comments (npm install --save-dev typescript); description options are kept\n",
      );
    } else {
      options.descriptions = readDescriptions(ts, file);
    }
  }
  if (observedFiles.length > 0) {
    try {
      options.observed = await readObservedAccess(
        observedFiles,
        `system:serviceaccount:${options.namespace}:${op.name}`,
      );
    } catch (err) {
      if (!(err instanceof ObservedReportError)) throw err;
      process.stderr.write(`capstan generate: ${err.message}\n`);
      return 1;
    }
  }
  let text: string;
  try {
    text = generate(target, op, file, options);
  } catch (err) {
    if (!(err instanceof GenerateError) && !(err instanceof ImageLayoutError)) throw err;
    process.stderr.write(`capstan generate: ${err.message}\n`);
    return 1;
  }
  if (options.observed !== undefined) process.stderr.write(observedSummary(op, options));
  process.stdout.write(text);
  if (target === "dockerfile") {
    // The Dockerfile is still printed: it is right for the project once the dependencies move in.
    const warning = unreachableDependencies(fileDependencies(process.cwd()));
    if (warning !== undefined) process.stderr.write(`capstan generate: warning: ${warning}\n`);
  }
  return 0;
}

function parse(args: string[]):
  | {
      target: Target;
      file: string;
      options: GenerateOptions;
      caBundleFile: string | undefined;
      observedFiles: string[];
    }
  | "help" {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      image: { type: "string" },
      namespace: { type: "string", default: "default" },
      "watch-namespace": { type: "string", multiple: true },
      "leader-elect": { type: "boolean", default: false },
      sharded: { type: "boolean", default: false },
      "shard-admission": { type: "boolean", default: false },
      "no-crd-registration": { type: "boolean", default: false },
      replicas: { type: "string" },
      "health-port": { type: "string" },
      "metrics-port": { type: "string" },
      "ca-bundle": { type: "string" },
      "max-description-length": { type: "string" },
      observed: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const [target, file, ...extra] = positionals;
  if (target === undefined || !(TARGETS as readonly string[]).includes(target)) {
    throw new Error(
      target === undefined
        ? "what to generate is missing"
        : `cannot generate "${target}"; choose one of ${TARGETS.join(", ")}`,
    );
  }
  if (file === undefined) throw new Error("the operator module is missing");
  if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(" ")}`);
  for (const [flag, ns] of [
    ["--namespace", values.namespace],
    ...(values["watch-namespace"] ?? []).map((n) => ["--watch-namespace", n]),
  ] as const) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) throw new Error(`${flag} "${ns}" is not a valid namespace name`);
  }
  const replicas = values.replicas === undefined ? undefined : integer("--replicas", values.replicas, 1, 100);
  if (values.sharded && values["leader-elect"]) {
    throw new Error(
      "--sharded and --leader-elect exclude each other: sharded replicas all work (one of them, elected, assigns the objects)",
    );
  }
  if (values["shard-admission"] && !values.sharded) throw new Error("--shard-admission needs --sharded");
  if (replicas !== undefined && replicas > 1 && !values["leader-elect"] && !values.sharded) {
    throw new Error(
      "--replicas above 1 needs --leader-elect or --sharded: without either, every replica would reconcile the same objects",
    );
  }
  const observedFiles = values.observed ?? [];
  if (observedFiles.length > 0 && target !== "rbac") throw new Error(`--observed is for rbac, not ${target}`);
  return {
    target: target as Target,
    file,
    caBundleFile: values["ca-bundle"],
    observedFiles,
    options: {
      image: values.image,
      namespace: values.namespace,
      watchNamespaces: values["watch-namespace"],
      leaderElect: values["leader-elect"],
      sharded: values.sharded,
      shardAdmission: values["shard-admission"],
      registerCrds: !values["no-crd-registration"],
      replicas,
      healthPort:
        values["health-port"] === undefined ? undefined : integer("--health-port", values["health-port"], 1, 65535),
      metricsPort:
        values["metrics-port"] === undefined ? undefined : integer("--metrics-port", values["metrics-port"], 1, 65535),
      maxDescriptionLength:
        values["max-description-length"] === undefined
          ? undefined
          : integer("--max-description-length", values["max-description-length"], 0, Number.MAX_SAFE_INTEGER),
    },
  };
}

function integer(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${flag} must be an integer from ${min} to ${max}, got "${text}"`);
  return n;
}

/** The text for `target` (multi-document YAML, or the Dockerfile). */
export function generate(
  target: Target,
  op: LoadedOperator,
  file: string,
  givenOptions: GenerateOptions,
  cwd = process.cwd(),
): string {
  let options = givenOptions;
  const operatorPath = relative(cwd, resolve(cwd, file)).split(sep).join("/");
  if (target !== "crds" && target !== "rbac" && (operatorPath.startsWith("../") || isAbsolute(operatorPath))) {
    // The image holds the build context (the project root): a module outside it is not in the image.
    throw new GenerateError(`${file} is outside the current folder; run capstan generate from the project root`);
  }
  // The image, and so the Deployment, runs the compiled module.
  const image = () => imageLayout(operatorPath, cwd);
  if (target === "dockerfile") return dockerfile(image(), installInputs(fileDependencies(cwd)));
  if (target === "dockerignore") return dockerignore(image());
  const labels = { "app.kubernetes.io/name": op.name, "app.kubernetes.io/managed-by": "capstan" };
  // `all` applies the CRDs with everything else: an operator registering them again at start would
  // need cluster-wide create on CRDs for nothing (least privilege, docs/rbac.md).
  if (target === "all") options = { ...options, registerCrds: false };
  const conversions = op.conversions?.() ?? [];
  const crds = () =>
    crdsWithConversion(
      // The comments' descriptions first, so that the length limit applies to them too.
      op
        .requirements()
        .crds.map((kind) =>
          toCrd(
            { crd: describeCrd(toCrd(kind), options.descriptions ?? []) },
            { maxDescriptionLength: options.maxDescriptionLength },
          ),
        ),
      { name: op.name, namespace: options.namespace, conversions, caBundle: options.caBundle },
    );
  const watchNamespaces = [...new Set(options.watchNamespaces ?? [])];
  const declared = () => declaredNeeds(op, options);
  const rbac = () =>
    rbacManifests({
      name: op.name,
      namespace: options.namespace,
      needs: options.observed === undefined ? declared() : leastPrivilegeNeeds(declared(), options.observed),
      labels,
      ...(watchNamespaces.length > 0
        ? // The Lease lives in the operator's own namespace: its Role must be there too.
          {
            scope: "Namespace" as const,
            namespaces: [
              ...new Set([...watchNamespaces, ...(options.leaderElect || options.sharded ? [options.namespace] : [])]),
            ],
          }
        : {}),
    }).concat(metricsReaderRole(op.name, labels));
  // With --shard-admission, the webhooks assigning new objects to members (the default ring: the operator's name).
  const admissionWebhooks = op.webhooks(
    options.sharded === true && options.shardAdmission === true ? { sharding: { admission: true } } : {},
  );
  const webhooks = () =>
    webhookManifests({
      name: op.name,
      namespace: options.namespace,
      labels,
      webhooks: admissionWebhooks,
      conversions,
      caBundle: options.caBundle,
    });
  const hasWebhooks = admissionWebhooks.length > 0 || conversions.length > 0;
  if (target === "webhooks" && !hasWebhooks) {
    throw new GenerateError(
      `operator ${op.name} has no admission handlers (op.on.validate, op.on.mutate) or conversions (op.convert)`,
    );
  }
  const deploy = () =>
    deploymentManifest({
      name: op.name,
      namespace: options.namespace,
      image: options.image ?? `${op.name}:latest`,
      operatorPath: image().imagePath,
      watchNamespaces,
      leaderElect: options.leaderElect,
      sharded: options.sharded === true,
      shardAdmission: options.shardAdmission === true,
      registerCrds: options.registerCrds ?? true,
      replicas: options.replicas,
      healthPort: options.healthPort,
      metricsPort: options.metricsPort,
      labels,
      ...(hasWebhooks ? { webhookServer: { ...WEBHOOK_SERVER, certSecret: webhookCertSecretName(op.name) } } : {}),
    });
  const metricsService = () =>
    metricsServiceManifest({ name: op.name, namespace: options.namespace, metricsPort: options.metricsPort, labels });
  const namespace = namespaceManifest(options.namespace, labels);
  const docs: object[] =
    target === "crds"
      ? crds()
      : target === "rbac"
        ? [...namespace, ...rbac()]
        : target === "deploy"
          ? [...namespace, deploy(), metricsService()]
          : target === "webhooks"
            ? [...namespace, ...webhooks()]
            : [...crds(), ...namespace, ...rbac(), ...webhooks(), deploy(), metricsService()];
  return docs.map((doc) => `---\n${stringify(doc, { lineWidth: 0 })}`).join("");
}

/** What the operator declares it needs, as `generate rbac` grants it. */
function declaredNeeds(op: LoadedOperator, options: GenerateOptions) {
  return op.permissions({
    leaderElection: options.leaderElect,
    sharding: options.sharded === true,
    registerCrds: options.registerCrds ?? true,
    // The generated Deployment serves /metrics securely: the operator reviews every scrape.
    secureMetrics: true,
  });
}

/** The stderr summary of `generate rbac --observed`: the declared rules against the observed access. */
export function observedSummary(op: LoadedOperator, options: GenerateOptions): string {
  if (options.observed === undefined) return "";
  const generated = rbacManifests({ name: op.name, namespace: options.namespace, needs: declaredNeeds(op, options) })
    .filter((m) => m.kind === "ClusterRole" || m.kind === "Role")
    .flatMap((m) => ("rules" in m ? (m.rules ?? []) : []));
  return comparisonSummary(options.observed, compareRbac(generated, options.observed));
}
