// The layer rule of DESIGN.md: dependencies flow one way,
// cli -> testing/operator -> runtime -> client, and devcluster is a world of its own
// that the rest reaches only over HTTP. Two packages: `capstan` (what a production operator
// installs) and `capstan-dev` (development and tests), which uses `capstan` only through its
// package entry points and is never used by it. Each entry names what a layer may import.
const prod = "packages/capstan/src";
const dev = "packages/capstan-dev/src";
// The capstan package's entry points (package.json exports), the only files capstan-dev may import.
const entryPoints = "(index|core|client|runtime|resources|internal)\\.ts";
// The public tiers: each entry point re-exports its own layers only (index.ts: the author's API, any).
const tiers = {
  "client.ts": ["client"],
  "core.ts": ["resources"],
  "resources.ts": ["resources"],
  "runtime.ts": ["runtime", "operator"],
};

const allowed = {
  [`${prod}/client`]: [],
  [`${prod}/resources`]: [`${prod}/client`], // type-only, checked below
  [`${prod}/runtime`]: [`${prod}/client`],
  [`${prod}/webhooks`]: [`${prod}/client`, `${prod}/resources`],
  [`${prod}/operator`]: [`${prod}/client`, `${prod}/resources`, `${prod}/runtime`, `${prod}/webhooks`],
  [`${prod}/cli`]: [
    `${prod}/client`,
    `${prod}/resources`,
    `${prod}/runtime`,
    `${prod}/operator`,
    `${prod}/webhooks`,
    `${prod}/index.ts`,
  ],
  [`${dev}/devcluster`]: [],
  [`${dev}/dashboard`]: [`${prod}/${entryPoints}`], // resources: the built-in kinds, definitions only
  [`${dev}/testing`]: [`${prod}/${entryPoints}`, `${dev}/devcluster`],
  [`${dev}/cli`]: [`${prod}/${entryPoints}`, `${dev}/devcluster`, `${dev}/testing`, `${dev}/dashboard`],
};

const regex = (p) => p.replaceAll(".", "\\.").replaceAll("/", "\\/");
const forbidden = Object.entries(allowed).map(([layer, may]) => {
  const ok = [layer, ...may].map((l) => (l.includes("(") ? l.replaceAll("/", "\\/") : regex(l))).join("|");
  return {
    name: `layer-${layer.split("/").slice(1).join("-")}`,
    comment: `${layer} may import only: ${may.join(", ") || "nothing else in the packages"}`,
    severity: "error",
    from: { path: `^${regex(layer)}/` },
    to: { path: "^packages/", pathNot: `^(${ok})(/|$)` },
  };
});

// Inside the devcluster, one direction too, in kube-apiserver's layers (README-internals.md). Ranks
// bottom to top: a layer may import its own files and the ranks below it, never a peer of its rank nor
// anything above. A folder is named with its slash, a file at the devcluster's root by its name.
const devcluster = `${dev}/devcluster`;
const devclusterRanks = [
  // apimachinery (Status errors, clock, semantic equality, Go's JSON errors); certificates and kubeconfigs
  { machinery: ["machinery/"], pki: ["tls.ts", "kubeconfig.ts", "reflect-metadata-shim.ts"] },
  // request bodies: JSON, YAML, protobuf
  { serializer: ["serializer/"] },
  // endpoints/request: request info, authentication, the pipeline's stages
  { request: ["request/"] },
  // leaves; the HTTPS client webhooks are called with
  { validation: ["validation/"], storage: ["storage/"], "webhook-client": ["webhook-client/"] },
  // the scheme: served resources, built-in kinds, scale, built-in schemas
  { registry: ["registry/"] },
  // patch algorithms; apply and managedFields, which need the scheme (scale, served resources)
  { patch: ["patch/"] },
  { apply: ["apply/"] },
  // the generic store and strategies, the patch Content-Type dispatcher
  { rest: ["rest/"] },
  // dynamic admission, and CRD conversion webhooks (the store calls both through rest/types.ts)
  { admission: ["admission/"], conversion: ["conversion/"] },
  // Tables, built-in printers, JSONPath
  { printers: ["printers/"] },
  // the doors onto the store: HTTP handlers, the fault stage, the in-process (loopback) API
  { endpoints: ["endpoints/"], faults: ["faults/"], "in-process-api": ["in-process-api.ts"] },
  // users of the in-process API; server.ts and index.ts sit on top of everything
  { auth: ["auth/"], controllers: ["controllers/"] },
];
const devclusterPath = (parts) =>
  parts.map((p) => regex(`${devcluster}/${p}`) + (p.endsWith("/") ? "" : "$")).join("|");
devclusterRanks.forEach((rank, r) => {
  const below = devclusterRanks.slice(0, r).flatMap((lower) => Object.keys(lower));
  const belowParts = devclusterRanks.slice(0, r).flatMap((lower) => Object.values(lower).flat());
  for (const [layer, parts] of Object.entries(rank)) {
    forbidden.push({
      name: `devcluster-${layer}`,
      comment: `devcluster ${layer} may import only: ${below.join(", ") || "nothing else in the devcluster"}`,
      severity: "error",
      from: { path: `^(${devclusterPath(parts)})` },
      to: { path: `^${regex(devcluster)}/`, pathNot: `^(${devclusterPath([...parts, ...belowParts])})` },
    });
  }
});
forbidden.push({
  name: "devcluster-every-file-has-a-layer",
  comment: "a devcluster file outside the ranks above (other than server.ts and index.ts) needs a place in them",
  severity: "error",
  from: {
    path: `^${regex(devcluster)}/`,
    pathNot: `^(${devclusterPath([...devclusterRanks.flatMap((rank) => Object.values(rank).flat()), "server.ts", "index.ts"])})`,
  },
  to: { path: `^${regex(devcluster)}/` },
});

forbidden.push(
  {
    name: "resources-types-only-from-client",
    comment: "resources may use client types, never client code",
    severity: "error",
    from: { path: `^${regex(prod)}/resources/` },
    to: { path: `^${regex(prod)}/client/`, dependencyTypesNot: ["type-only"] },
  },
  {
    name: "production-package-not-development",
    comment: "the capstan package (what a production operator installs) never imports capstan-dev",
    severity: "error",
    from: { path: "^packages/capstan/" },
    to: { path: "^packages/capstan-dev/" },
  },
  {
    name: "examples-use-public-entry-points",
    comment: "examples are written as users write them: only through the packages' public entry points",
    severity: "error",
    from: { path: "^examples/" },
    to: {
      path: "^packages/",
      // capstan/schemas/<group>/<version> (the built-in schemas) are entry points too.
      pathNot: `^(${regex(prod)}/((index|core|client|runtime|resources)|schemas/[a-z]+/v[0-9a-z]+)\\.ts|${regex(dev)}/testing/index\\.ts)$`,
    },
  },
  ...Object.entries(tiers).map(([entry, layers]) => ({
    name: `tier-${entry.replace(".ts", "")}`,
    comment: `the public entry point ${entry} re-exports only from ${layers.join(", ")}`,
    severity: "error",
    from: { path: `^${regex(prod)}/${regex(entry)}$` },
    to: { path: "^packages/", pathNot: `^${regex(prod)}/(${layers.join("|")})/` },
  })),
  {
    name: "no-circular",
    severity: "error",
    from: {},
    to: { circular: true },
  },
);

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["capstan-source", "import", "types", "default"],
    },
  },
};
