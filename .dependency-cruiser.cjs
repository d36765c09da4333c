// The layer rule of DESIGN.md: dependencies flow one way,
// cli -> testing/operator -> runtime -> client, and devcluster is a world of its own
// that the rest reaches only over HTTP. Each entry names what a layer may import.
const allowed = {
  client: [],
  resources: ["client"], // type-only, checked below
  runtime: ["client"],
  webhooks: ["client", "resources"],
  operator: ["client", "resources", "runtime"],
  devcluster: ["resources"],
  dashboard: ["client", "resources"], // resources: the built-in kinds, definitions only
  testing: ["client", "resources", "runtime", "operator", "webhooks", "devcluster"],
  cli: ["client", "resources", "runtime", "operator", "webhooks", "devcluster", "testing", "dashboard", "index.ts"],
};
const layers = Object.keys(allowed);

const forbidden = layers.map((layer) => {
  const ok = [layer, ...allowed[layer]].map((l) => l.replace(".", "\\.")).join("|");
  return {
    name: `layer-${layer}`,
    comment: `src/${layer} may import only: ${allowed[layer].join(", ") || "nothing else in src"}`,
    severity: "error",
    from: { path: `^src/${layer}/` },
    to: { path: `^src/(?!(${ok})(/|$))` },
  };
});

forbidden.push(
  {
    name: "resources-types-only-from-client",
    comment: "src/resources may use client types, never client code",
    severity: "error",
    from: { path: "^src/resources/" },
    to: { path: "^src/client/", dependencyTypesNot: ["type-only"] },
  },
  {
    name: "public-entry-not-devcluster",
    comment: "the operator-side public API (src/index.ts) must not pull in the devcluster or the cli",
    severity: "error",
    from: { path: "^src/index\\.ts$" },
    to: { path: "^src/(devcluster|cli|testing|dashboard)/" },
  },
  {
    name: "examples-use-public-entry-points",
    comment: "examples are written as users write them: only through capstan's public entry points",
    severity: "error",
    from: { path: "^examples/" },
    to: { path: "^src/", pathNot: "^src/(index\\.ts|testing/index\\.ts|core\\.ts)$" },
  },
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
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "types", "default"] },
  },
};
