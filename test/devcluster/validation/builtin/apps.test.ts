/**
 * The apps group's spec validation over HTTP, as kube-apiserver 1.32 answers: Deployments, ReplicaSets,
 * StatefulSets, DaemonSets and ControllerRevisions refused with its 422 (whole message and causes, in
 * its order), valid ones stored as sent plus defaults, and the update rules (immutable selectors, the
 * StatefulSet fields that may change).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, type Response, startRawHttpCluster } from "../../support/http.ts";
import { type Cause, expectInvalid as expectInvalid422 } from "./support/expect-invalid.ts";

const NS = "/apis/apps/v1/namespaces/default";

let t: RawHttpCluster;
beforeAll(async () => {
  t = await startRawHttpCluster({ kubelet: false });
});
afterAll(async () => {
  await t?.stop();
});

const expectInvalid = (res: Response, kind: string, name: string, causes: Cause[]) =>
  expectInvalid422(res, "apps", kind, name, causes);

const CONTAINERS = [{ name: "app", image: "nginx:1.27" }];

/** The pod template defaults of 1.32's scheme (SetDefaults_PodSpec, SetDefaults_Container). */
const DEFAULTED_POD_SPEC = {
  containers: [
    {
      name: "app",
      image: "nginx:1.27",
      resources: {},
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
      imagePullPolicy: "IfNotPresent",
    },
  ],
  restartPolicy: "Always",
  terminationGracePeriodSeconds: 30,
  dnsPolicy: "ClusterFirst",
  securityContext: {},
  schedulerName: "default-scheduler",
};

function template(labels: Record<string, string> | undefined, spec: Record<string, unknown> = {}) {
  return { metadata: labels ? { labels } : {}, spec: { containers: CONTAINERS, ...spec } };
}

function deployment(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: template({ app: name }), ...spec },
  };
}

function replicaSet(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: template({ app: name }), ...spec },
  };
}

function statefulSet(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name },
    spec: {
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: template({ app: name }),
      ...spec,
    },
  };
}

function daemonSet(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: template({ app: name }), ...spec },
  };
}

const MISMATCH = "`selector` does not match template `labels`";
const NEGATIVE = "must be greater than or equal to 0";
const PERCENT_MSG =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

async function create(plural: string, body: unknown): Promise<Response> {
  return t.request("POST", `${NS}/${plural}`, { body });
}

/** Creates `body`, then PUTs what `change` makes of the stored object. */
// biome-ignore lint/suspicious/noExplicitAny: the change edits arbitrary JSON
async function update(plural: string, body: { metadata: { name: string } }, change: (obj: any) => void) {
  const created = await create(plural, body);
  expect(created.status, created.text).toBe(201);
  const next = structuredClone(created.body);
  change(next);
  return t.request("PUT", `${NS}/${plural}/${body.metadata.name}`, { body: next });
}

describe("Deployments", () => {
  it("stores a valid Deployment as sent plus the scheme's defaults", async () => {
    const res = await create("deployments", deployment("web"));
    expect(res.status, res.text).toBe(201);
    const stored = await t.request("GET", `${NS}/deployments/web`);
    expect(stored.body.spec).toEqual({
      replicas: 1,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" }, creationTimestamp: null }, spec: DEFAULTED_POD_SPEC },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    });
  });

  it("refuses a template its selector does not select, printing the labels as Go's %#v", async () => {
    const res = await create("deployments", deployment("mismatch", { template: template({ app: "y" }) }));
    expect(res.body.message).toBe(
      'Deployment.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`',
    );
    expectInvalid(res, "Deployment", "mismatch", [
      [
        "FieldValueInvalid",
        "spec.template.metadata.labels",
        `Invalid value: map[string]string{"app":"y"}: ${MISMATCH}`,
      ],
    ]);
  });

  it("requires a selector (and then no template labels match it)", async () => {
    const body = deployment("noselector");
    delete (body.spec as Record<string, unknown>)["selector"];
    expectInvalid(await create("deployments", body), "Deployment", "noselector", [
      ["FieldValueRequired", "spec.selector", "Required value"],
      [
        "FieldValueInvalid",
        "spec.template.metadata.labels",
        `Invalid value: map[string]string{"app":"noselector"}: ${MISMATCH}`,
      ],
    ]);
  });

  it("refuses an empty selector", async () => {
    expectInvalid(
      await create("deployments", deployment("empty", { selector: { matchLabels: {} } })),
      "Deployment",
      "empty",
      [
        [
          "FieldValueInvalid",
          "spec.selector",
          "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
        ],
      ],
    );
  });

  it("reports a selector that does not convert, and then skips the template", async () => {
    const body = deployment("badsel", {
      selector: { matchLabels: { app: "-x" } },
      template: template({ other: "z" }, { restartPolicy: "Never" }),
    });
    expectInvalid(await create("deployments", body), "Deployment", "badsel", [
      [
        "FieldValueInvalid",
        "spec.selector.matchLabels",
        "Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ],
      [
        "FieldValueInvalid",
        "spec.selector",
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"-x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: invalid label selector',
      ],
    ]);
  });

  it("refuses a restartPolicy other than Always, activeDeadlineSeconds and negative counts, in kube's order", async () => {
    const body = deployment("counts", {
      replicas: -1,
      minReadySeconds: -2,
      revisionHistoryLimit: -3,
      template: template({ app: "counts" }, { restartPolicy: "OnFailure", activeDeadlineSeconds: 30 }),
    });
    expectInvalid(await create("deployments", body), "Deployment", "counts", [
      ["FieldValueInvalid", "spec.replicas", `Invalid value: -1: ${NEGATIVE}`],
      [
        "FieldValueNotSupported",
        "spec.template.spec.restartPolicy",
        'Unsupported value: "OnFailure": supported values: "Always"',
      ],
      [
        "FieldValueForbidden",
        "spec.template.spec.activeDeadlineSeconds",
        "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
      ],
      ["FieldValueInvalid", "spec.minReadySeconds", `Invalid value: -2: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.revisionHistoryLimit", `Invalid value: -3: ${NEGATIVE}`],
    ]);
  });

  it("checks the rolling update's maxSurge and maxUnavailable", async () => {
    const zero = deployment("zero", {
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: "0%" } },
    });
    expectInvalid(await create("deployments", zero), "Deployment", "zero", [
      [
        "FieldValueInvalid",
        "spec.strategy.rollingUpdate.maxUnavailable",
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: may not be 0 when `maxSurge` is 0',
      ],
    ]);
    const bad = deployment("bad", {
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "5x", maxUnavailable: "120%" } },
    });
    expectInvalid(await create("deployments", bad), "Deployment", "bad", [
      [
        "FieldValueInvalid",
        "spec.strategy.rollingUpdate.maxSurge",
        `Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"5x"}: ${PERCENT_MSG}`,
      ],
      [
        "FieldValueInvalid",
        "spec.strategy.rollingUpdate.maxUnavailable",
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%',
      ],
    ]);
    const negative = deployment("negative", { strategy: { rollingUpdate: { maxSurge: -1 } } });
    expectInvalid(await create("deployments", negative), "Deployment", "negative", [
      ["FieldValueInvalid", "spec.strategy.rollingUpdate.maxSurge", `Invalid value: -1: ${NEGATIVE}`],
    ]);
  });

  it("checks the strategy type, Recreate without rollingUpdate, and progressDeadlineSeconds", async () => {
    expectInvalid(
      await create("deployments", deployment("recreate", { strategy: { type: "Recreate", rollingUpdate: {} } })),
      "Deployment",
      "recreate",
      [
        [
          "FieldValueForbidden",
          "spec.strategy.rollingUpdate",
          "Forbidden: may not be specified when strategy `type` is 'Recreate'",
        ],
      ],
    );
    expectInvalid(
      await create("deployments", deployment("canary", { strategy: { type: "Canary" } })),
      "Deployment",
      "canary",
      [
        [
          "FieldValueNotSupported",
          "spec.strategy",
          'Unsupported value: apps.DeploymentStrategy{Type:"Canary", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"',
        ],
      ],
    );
    expectInvalid(
      await create("deployments", deployment("deadline", { minReadySeconds: 30, progressDeadlineSeconds: 30 })),
      "Deployment",
      "deadline",
      [
        [
          "FieldValueInvalid",
          "spec.progressDeadlineSeconds",
          "Invalid value: 30: must be greater than minReadySeconds",
        ],
      ],
    );
    const recreate = await create("deployments", deployment("recreate-ok", { strategy: { type: "Recreate" } }));
    expect(recreate.status, recreate.text).toBe(201);
    expect(recreate.body.spec.strategy).toEqual({ type: "Recreate" });
  });

  it("keeps the selector on update (apps/v1) and lets the template change", async () => {
    const res = await update("deployments", deployment("immutable"), (obj) => {
      obj.spec.selector = { matchLabels: { app: "immutable", tier: "web" } };
      obj.spec.template.metadata.labels.tier = "web";
    });
    expectInvalid(res, "Deployment", "immutable", [
      [
        "FieldValueInvalid",
        "spec.selector",
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"immutable", "tier":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
      ],
    ]);
    const stored = await t.request("GET", `${NS}/deployments/immutable`);
    const next = structuredClone(stored.body);
    next.spec.template.metadata.labels.version = "2";
    next.spec.replicas = 3;
    const ok = await t.request("PUT", `${NS}/deployments/immutable`, { body: next });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.spec.template.metadata.labels).toEqual({ app: "immutable", version: "2" });
  });
});

describe("ReplicaSets", () => {
  it("stores a valid ReplicaSet and refuses a mismatched template with the Deployment's words", async () => {
    const ok = await create("replicasets", replicaSet("rs"));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.spec).toEqual({
      replicas: 1,
      selector: { matchLabels: { app: "rs" } },
      template: { metadata: { labels: { app: "rs" }, creationTimestamp: null }, spec: DEFAULTED_POD_SPEC },
    });
    expectInvalid(
      await create("replicasets", replicaSet("rs-empty", { selector: {}, minReadySeconds: -1 })),
      "ReplicaSet",
      "rs-empty",
      [
        ["FieldValueInvalid", "spec.minReadySeconds", `Invalid value: -1: ${NEGATIVE}`],
        [
          "FieldValueInvalid",
          "spec.selector",
          "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
        ],
      ],
    );
    expectInvalid(
      await create(
        "replicasets",
        replicaSet("rs-expr", {
          selector: { matchExpressions: [{ key: "app", operator: "In", values: ["a", "b"] }] },
          template: template({ app: "c" }),
        }),
      ),
      "ReplicaSet",
      "rs-expr",
      [
        [
          "FieldValueInvalid",
          "spec.template.metadata.labels",
          `Invalid value: map[string]string{"app":"c"}: ${MISMATCH}`,
        ],
      ],
    );
  });

  it("validates the spec twice on update, so each cause is listed twice", async () => {
    const res = await update("replicasets", replicaSet("rs-twice"), (obj) => {
      obj.spec.replicas = -1;
    });
    expectInvalid(res, "ReplicaSet", "rs-twice", [
      ["FieldValueInvalid", "spec.replicas", `Invalid value: -1: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.replicas", `Invalid value: -1: ${NEGATIVE}`],
    ]);
    expect(res.body.message).toBe(
      `ReplicaSet.apps "rs-twice" is invalid: spec.replicas: Invalid value: -1: ${NEGATIVE}`,
    );
  });

  it("keeps the selector on update", async () => {
    const res = await update("replicasets", replicaSet("rs-sel"), (obj) => {
      obj.spec.selector = { matchExpressions: [{ key: "app", operator: "Exists" }] };
    });
    expectInvalid(res, "ReplicaSet", "rs-sel", [
      [
        "FieldValueInvalid",
        "spec.selector",
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Exists", Values:[]string(nil)}}}: field is immutable',
      ],
    ]);
  });
});

describe("StatefulSets", () => {
  it("stores a valid StatefulSet with its defaults, and checks no more of its pod template than 1.32 does", async () => {
    const res = await create("statefulsets", statefulSet("db"));
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).toEqual({
      replicas: 1,
      serviceName: "db",
      selector: { matchLabels: { app: "db" } },
      template: { metadata: { labels: { app: "db" }, creationTimestamp: null }, spec: DEFAULTED_POD_SPEC },
      podManagementPolicy: "OrderedReady",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
    });
    // 1.32's StatefulSet validation leaves the pod spec alone: a template without containers is stored.
    const bare = statefulSet("bare", { template: { metadata: { labels: { app: "bare" } }, spec: { containers: [] } } });
    expect((await create("statefulsets", bare)).status).toBe(201);
  });

  it("takes DNS labels as names", async () => {
    expectInvalid(await create("statefulsets", statefulSet("db.v1")), "StatefulSet", "db.v1", [
      ["FieldValueInvalid", "metadata.name", 'Invalid value: "db.v1": must not contain dots'],
    ]);
  });

  it("checks its policies, strategy, counts, selector and template labels, in kube's order", async () => {
    const body = statefulSet("bad", {
      podManagementPolicy: "Random",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: -1 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Keep" },
      replicas: -1,
      ordinals: { start: -1 },
      template: {
        metadata: { labels: { app: "other", "-x": "y" } },
        spec: { containers: CONTAINERS, restartPolicy: "Never", activeDeadlineSeconds: 5 },
      },
    });
    expectInvalid(await create("statefulsets", body), "StatefulSet", "bad", [
      [
        "FieldValueInvalid",
        "spec.podManagementPolicy",
        `Invalid value: "Random": must be 'OrderedReady' or 'Parallel'`,
      ],
      ["FieldValueInvalid", "spec.updateStrategy.rollingUpdate.partition", `Invalid value: -1: ${NEGATIVE}`],
      [
        "FieldValueNotSupported",
        "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
        'Unsupported value: "Keep": supported values: "Retain", "Delete"',
      ],
      ["FieldValueInvalid", "spec.replicas", `Invalid value: -1: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.ordinals.start", `Invalid value: -1: ${NEGATIVE}`],
      [
        "FieldValueInvalid",
        "spec.template.metadata.labels",
        `Invalid value: map[string]string{"-x":"y", "app":"other"}: ${MISMATCH}`,
      ],
      [
        "FieldValueInvalid",
        "spec.template.labels",
        "Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
      [
        "FieldValueNotSupported",
        "spec.template.spec.restartPolicy",
        'Unsupported value: "Never": supported values: "Always"',
      ],
      [
        "FieldValueForbidden",
        "spec.template.spec.activeDeadlineSeconds",
        "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
      ],
    ]);
  });

  it("refuses an unknown update strategy and a rollingUpdate with OnDelete", async () => {
    expectInvalid(
      await create("statefulsets", statefulSet("sts-type", { updateStrategy: { type: "Blue" } })),
      "StatefulSet",
      "sts-type",
      [
        [
          "FieldValueInvalid",
          "spec.updateStrategy",
          "Invalid value: apps.StatefulSetUpdateStrategy{Type:\"Blue\", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'",
        ],
      ],
    );
    expectInvalid(
      await create(
        "statefulsets",
        statefulSet("sts-ondelete", { updateStrategy: { type: "OnDelete", rollingUpdate: { partition: 2 } } }),
      ),
      "StatefulSet",
      "sts-ondelete",
      [
        [
          "FieldValueInvalid",
          "spec.updateStrategy.rollingUpdate",
          "Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:2, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'",
        ],
      ],
    );
    expectInvalid(
      await create("statefulsets", statefulSet("sts-empty", { selector: {} })),
      "StatefulSet",
      "sts-empty",
      [
        [
          "FieldValueInvalid",
          "spec.selector",
          "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset",
        ],
      ],
    );
  });

  it("lets an update change only replicas, ordinals, template, updateStrategy, the PVC retention policy and minReadySeconds", async () => {
    const ok = await update("statefulsets", statefulSet("sts-up"), (obj) => {
      obj.spec.replicas = 3;
      obj.spec.minReadySeconds = 5;
      obj.spec.ordinals = { start: 2 };
      obj.spec.updateStrategy = { type: "OnDelete" };
      obj.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: "Delete", whenScaled: "Retain" };
      obj.spec.template.metadata.labels.version = "2";
    });
    expect(ok.status, ok.text).toBe(200);
    const stored = await t.request("GET", `${NS}/statefulsets/sts-up`);
    const next = structuredClone(stored.body);
    next.spec.serviceName = "other";
    next.spec.podManagementPolicy = "Parallel";
    expectInvalid(await t.request("PUT", `${NS}/statefulsets/sts-up`, { body: next }), "StatefulSet", "sts-up", [
      [
        "FieldValueForbidden",
        "spec",
        "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ],
    ]);
  });
});

describe("DaemonSets", () => {
  it("stores a valid DaemonSet with its defaults", async () => {
    const res = await create("daemonsets", daemonSet("agent"));
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).toEqual({
      selector: { matchLabels: { app: "agent" } },
      template: { metadata: { labels: { app: "agent" }, creationTimestamp: null }, spec: DEFAULTED_POD_SPEC },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      revisionHistoryLimit: 10,
    });
  });

  it("checks the selector against the template, without requiring a selector", async () => {
    const body = daemonSet("ds-nosel");
    delete (body.spec as Record<string, unknown>)["selector"];
    expectInvalid(await create("daemonsets", body), "DaemonSet", "ds-nosel", [
      [
        "FieldValueInvalid",
        "spec.template.metadata.labels",
        `Invalid value: map[string]string{"app":"ds-nosel"}: ${MISMATCH}`,
      ],
    ]);
    expectInvalid(
      await create(
        "daemonsets",
        daemonSet("ds-empty", { selector: { matchLabels: {} }, template: template(undefined) }),
      ),
      "DaemonSet",
      "ds-empty",
      [
        [
          "FieldValueInvalid",
          "spec.selector",
          "Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset",
        ],
      ],
    );
  });

  it("checks the update strategy", async () => {
    expectInvalid(
      await create(
        "daemonsets",
        daemonSet("ds-zero", { updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0 } } }),
      ),
      "DaemonSet",
      "ds-zero",
      [
        [
          "FieldValueRequired",
          "spec.updateStrategy.rollingUpdate.maxUnavailable",
          "Required value: cannot be 0 when maxSurge is 0",
        ],
      ],
    );
    expectInvalid(
      await create(
        "daemonsets",
        daemonSet("ds-both", { updateStrategy: { rollingUpdate: { maxUnavailable: "10%", maxSurge: 2 } } }),
      ),
      "DaemonSet",
      "ds-both",
      [
        [
          "FieldValueInvalid",
          "spec.updateStrategy.rollingUpdate.maxSurge",
          'Invalid value: intstr.IntOrString{Type:0, IntVal:2, StrVal:""}: may not be set when maxUnavailable is non-zero',
        ],
      ],
    );
    expectInvalid(
      await create("daemonsets", daemonSet("ds-type", { updateStrategy: { type: "Surge" } })),
      "DaemonSet",
      "ds-type",
      [
        [
          "FieldValueNotSupported",
          "spec.updateStrategy",
          'Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Surge", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
        ],
      ],
    );
    const onDelete = await create("daemonsets", daemonSet("ds-ondelete", { updateStrategy: { type: "OnDelete" } }));
    expect(onDelete.status, onDelete.text).toBe(201);
  });

  it("validates the spec twice on update and keeps the selector", async () => {
    const res = await update("daemonsets", daemonSet("ds-up"), (obj) => {
      obj.spec.minReadySeconds = -1;
      obj.spec.selector.matchLabels.tier = "x";
      obj.spec.template.metadata.labels.tier = "x";
    });
    expectInvalid(res, "DaemonSet", "ds-up", [
      ["FieldValueInvalid", "spec.minReadySeconds", `Invalid value: -1: ${NEGATIVE}`],
      ["FieldValueInvalid", "spec.minReadySeconds", `Invalid value: -1: ${NEGATIVE}`],
      [
        "FieldValueInvalid",
        "spec.selector",
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"ds-up", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
      ],
    ]);
  });
});

describe("ControllerRevisions", () => {
  const revision = (name: string, extra: Record<string, unknown>) => ({
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: { name },
    revision: 1,
    ...extra,
  });

  it("requires a JSON object as data and a non-negative revision", async () => {
    expectInvalid(
      await create("controllerrevisions", revision("cr-none", { revision: -1 })),
      "ControllerRevision",
      "cr-none",
      [
        ["FieldValueInvalid", "revision", `Invalid value: -1: ${NEGATIVE}`],
        ["FieldValueRequired", "data", "Required value: data is mandatory"],
      ],
    );
    expectInvalid(
      await create("controllerrevisions", revision("cr-list", { data: [1] })),
      "ControllerRevision",
      "cr-list",
      [["FieldValueRequired", "data", "Required value: data must be a valid JSON object"]],
    );
  });

  it("keeps data on update", async () => {
    const res = await update("controllerrevisions", revision("cr-up", { data: { a: 1 } }), (obj) => {
      obj.data = { b: 2 };
    });
    expectInvalid(res, "ControllerRevision", "cr-up", [
      [
        "FieldValueInvalid",
        "data",
        "Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x22, 0x62, 0x22, 0x3a, 0x32, 0x7d}, Object:runtime.Object(nil)}: field is immutable",
      ],
    ]);
  });
});

describe("the pod template rules (core-pod.ts) inside the workload", () => {
  it("refuses a Deployment whose selector misses its template and whose template has no containers", async () => {
    const body = deployment("nocontainers", {
      selector: { matchLabels: { app: "x" } },
      template: { metadata: { labels: { app: "y" } }, spec: { containers: [] } },
    });
    const res = await create("deployments", body);
    expect(res.body.message).toBe(
      'Deployment.apps "nocontainers" is invalid: [spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`, spec.template.spec.containers: Required value]',
    );
    expectInvalid(res, "Deployment", "nocontainers", [
      [
        "FieldValueInvalid",
        "spec.template.metadata.labels",
        `Invalid value: map[string]string{"app":"y"}: ${MISMATCH}`,
      ],
      ["FieldValueRequired", "spec.template.spec.containers", "Required value"],
    ]);
  });

  it("refuses ReplicaSet and DaemonSet templates without containers", async () => {
    const rs = replicaSet("rs-nocontainers", {
      template: { metadata: { labels: { app: "rs-nocontainers" } }, spec: {} },
    });
    expectInvalid(await create("replicasets", rs), "ReplicaSet", "rs-nocontainers", [
      ["FieldValueRequired", "spec.template.spec.containers", "Required value"],
    ]);
    const ds = daemonSet("ds-nocontainers", {
      template: { metadata: { labels: { app: "ds-nocontainers" } }, spec: {} },
    });
    expectInvalid(await create("daemonsets", ds), "DaemonSet", "ds-nocontainers", [
      ["FieldValueRequired", "spec.template.spec.containers", "Required value"],
    ]);
  });
});
