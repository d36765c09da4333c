/**
 * The derived RBAC rules are exactly enough: an operator using every feature that sends requests
 * (handlers with a finalizer, field handlers, status results, a timer, a daemon, Events and their
 * repeats, a child applied with `adopt`, a controller that owns children, CRD registration, leader
 * election) runs as a ServiceAccount bound only to what `capstan generate rbac --leader-elect`
 * prints, on a cluster that enforces RBAC, and nothing it does is refused; and each verb of those
 * rules is used: with any one taken away, a request of the same scenario gets a 403.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { isNotFound } from "../../packages/capstan/src/client/errors.ts";
import {
  ConfigMap,
  CustomResourceDefinition,
  Event,
  Lease,
  Namespace,
} from "../../packages/capstan/src/resources/builtins.ts";
import {
  type RunningOperator,
  startTestCluster,
  type TestCluster,
} from "../../packages/capstan-dev/src/testing/index.ts";
import { logCapture } from "../../packages/capstan-dev/src/testing/log-capture.ts";
import { everyFeatureOperator, Gear, Gizmo, OPERATOR_NAME, type Seen } from "./support/every-feature-operator.ts";

const FIXTURE = fileURLToPath(new URL("./support/every-feature-operator.ts", import.meta.url));
const SYSTEM_NS = "gizmo-system";

/**
 * Each case's operator releases the Lease when it stops, so the next one leads at once whatever the
 * lease duration. A renew deadline of 1 s made a leader under a loaded machine (its event loop late
 * by more than that) step down, and the case then waited in vain for its 403.
 */
const LEADER_ELECTION = { namespace: SYSTEM_NS, leaseDuration: "8s", renewDeadline: "6s", retryPeriod: 100 } as const;
const NS = "work";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

let cluster: TestCluster;
let generated: string;
let running: RunningOperator | undefined;

beforeAll(async () => {
  cluster = await startTestCluster();
  const result = await cluster.capstan(["generate", "rbac", FIXTURE, "--namespace", SYSTEM_NS, "--leader-elect"]);
  expect(result.code, result.stderr).toBe(0);
  generated = result.stdout;
}, 60_000); // `capstan generate` is a child process loading the operator: seconds on a busy machine
afterAll(async () => {
  await running?.stop();
  await cluster?.stop();
});

type Manifest = { kind: string; rules?: Rule[] } & Record<string, unknown>;

function manifests(): Manifest[] {
  return parseAllDocuments(generated).map((d) => d.toJS() as Manifest);
}

function clusterRoleRules(): string[] {
  const role = manifests().find((m) => m.kind === "ClusterRole");
  return (role?.rules ?? []).map(
    (r) =>
      `${r.apiGroups.join(",")}/${r.resources.join(",")}: ${r.verbs.join(",")}` +
      (r.resourceNames ? ` (${r.resourceNames.join(",")})` : ""),
  );
}

describe("an operator using every feature, under the rules derived for it", () => {
  it("is granted exactly the verbs of the requests Capstan sends for it", () => {
    expect(clusterRoleRules()).toEqual([
      // Events: posted (create) and their repeats counted (patch). ConfigMaps: watched for the
      // controller (list, watch), applied by ctx.apply and by the handler through api (create, patch).
      "/configmaps: list,watch,create,patch",
      "/events: create,patch",
      "apiextensions.k8s.io/customresourcedefinitions: create",
      "apiextensions.k8s.io/customresourcedefinitions: get,update (gears.rbac.capstan.test,gizmos.rbac.capstan.test)",
      // The reviews of the secure metrics endpoint the generated Deployment serves (metrics-auth.e2e.test.ts).
      "authentication.k8s.io/tokenreviews: create",
      "authorization.k8s.io/subjectaccessreviews: create",
      "coordination.k8s.io/leases: create",
      "coordination.k8s.io/leases: get,update (every-feature-leader)",
      // Gears: informer only, their status patched, adopt's owner references.
      "rbac.capstan.test/gears: list,watch",
      "rbac.capstan.test/gears/finalizers,gizmos/finalizers: update",
      "rbac.capstan.test/gears/status,gizmos/status: patch",
      // Gizmos: informer, and the handler engine's merge patches (finalizer, progress, ctx.patch).
      "rbac.capstan.test/gizmos: list,watch,patch",
    ]);
  });

  it("runs every handler feature, the controller, CRD registration and leader election with no 403", async () => {
    const apply = await cluster.kubectl(["apply", "-f", "-"], { stdin: generated });
    expect(apply.code, apply.stderr).toBe(0);
    const sa = await cluster.serviceAccount(`${SYSTEM_NS}/${OPERATOR_NAME}`);
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: NS } }));
    const seen: Seen = { events: [], deleted: [], daemons: [] };
    // The CRDs are not there yet: the ServiceAccount registers them.
    running = await cluster.run(everyFeatureOperator(seen), {
      client: sa.client,
      leaderElection: LEADER_ELECTION,
    });
    const gizmos = cluster.client.resource(Gizmo, NS);

    // Create: handler result in status, label patch, a child applied with adopt through api.
    await gizmos.create(Gizmo.make({ metadata: { name: "g", namespace: NS }, spec: { size: 1 } }));
    const created = await cluster.waitFor(
      Gizmo,
      `${NS}/g`,
      (g) => g.status?.create === "done" && g.metadata.labels?.created === "yes",
    );
    expect(created.metadata.finalizers?.some((f) => f.startsWith(OPERATOR_NAME))).toBe(true);
    const child = await cluster.waitFor(ConfigMap, `${NS}/g-from-handler`, () => true);
    expect(child.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Gizmo", name: "g", blockOwnerDeletion: true });

    // Update: the update handler's ctx.patch.status and the field handler's result.
    await gizmos.patch("g", { spec: { size: 2 } }, { type: "merge" });
    await cluster.waitFor(Gizmo, `${NS}/g`, (g) => g.status?.size === 2 && g.status?.updatedTo === 2);

    // Timer: status patches, and a repeated Event counted by patching it.
    await cluster.waitFor(Gizmo, `${NS}/g`, (g) => (g.status?.ticks ?? 0) >= 3);
    await vi.waitFor(
      async () => {
        const events = await cluster.client.resource(Event, NS).list();
        const reasons = events.items.map((e) => e.reason);
        expect(reasons).toEqual(expect.arrayContaining(["Created", "Watching"]));
        expect(events.items.find((e) => e.reason === "Tick")?.count ?? 0).toBeGreaterThanOrEqual(2);
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(seen.daemons).toEqual(["g"]);
    expect(seen.events).toContain("ADDED g");

    // The controller: ctx.apply of an adopted child, ctx.patchStatus, ctx.event.
    await cluster.client
      .resource(Gear, NS)
      .create(Gear.make({ metadata: { name: "cog", namespace: NS }, spec: { teeth: 12 } }));
    await cluster.waitFor(Gear, `${NS}/cog`, (g) => g.status?.applied === true);
    const applied = await cluster.waitFor(ConfigMap, `${NS}/cog-gear`, () => true);
    expect(applied.data).toEqual({ teeth: "12" });
    expect(applied.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Gear", name: "cog", controller: true });

    // Leader election: the Lease is held by this operator.
    const lease = await cluster.client.resource(Lease, SYSTEM_NS).get(`${OPERATOR_NAME}-leader`);
    expect(lease.spec?.holderIdentity).toBeTruthy();

    // Delete: the delete handler runs, the finalizer is removed, the object goes.
    await gizmos.delete("g");
    await cluster.waitForDeletion(Gizmo, `${NS}/g`);
    expect(seen.deleted).toEqual(["g"]);

    const refused = running.logs.filter((r) => /forbidden|\b403\b/i.test(JSON.stringify(r)));
    expect(refused).toEqual([]);
    // Stopped here: it would hold the Lease, and the operators of the cases below would stand by.
    await running.stop();
    running = undefined;
  });
});

/** One verb of one generated rule, and what must be set up for the scenario to send its request. */
interface VerbCase {
  group: string;
  resource: string;
  verb: string;
  /** Sent only when the object is missing: the CRDs on a first start, the Lease on a first election. */
  before?: () => Promise<void>;
}

const GROUP = "rbac.capstan.test";
const deleteCrds = async () => {
  // Gizmos the cases left holding the operator's finalizer would keep their CRD terminating.
  for (const g of (await cluster.client.resource(Gizmo).list()).items) {
    await cluster.client
      .resource(Gizmo, g.metadata.namespace)
      .patch(g.metadata.name as string, { metadata: { finalizers: null } }, { type: "merge" });
  }
  for (const name of [Gizmo.crdName, Gear.crdName]) {
    await cluster.client.resource(CustomResourceDefinition).delete(name);
    await cluster.waitForDeletion(CustomResourceDefinition, name, { timeout: "20s" });
  }
};
const deleteLease = async () => {
  await cluster.client
    .resource(Lease, SYSTEM_NS)
    .delete(`${OPERATOR_NAME}-leader`)
    .catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
};

/**
 * Every verb of the generated rules but `<plural>/finalizers` update, which only clusters with the
 * OwnerReferencesPermissionEnforcement admission plugin check (the devcluster does not).
 */
const VERB_CASES: VerbCase[] = [
  ...["list", "watch", "create", "patch"].map((verb) => ({ group: "", resource: "configmaps", verb })),
  ...["create", "patch"].map((verb) => ({ group: "", resource: "events", verb })),
  { group: "coordination.k8s.io", resource: "leases", verb: "get" },
  { group: "coordination.k8s.io", resource: "leases", verb: "update" },
  { group: "coordination.k8s.io", resource: "leases", verb: "create", before: deleteLease },
  ...["list", "watch"].map((verb) => ({ group: GROUP, resource: "gears", verb })),
  { group: GROUP, resource: "gears/status", verb: "patch" },
  ...["list", "watch", "patch"].map((verb) => ({ group: GROUP, resource: "gizmos", verb })),
  { group: GROUP, resource: "gizmos/status", verb: "patch" },
  // Last: the create case deletes the CRDs, which the cases above need.
  { group: "apiextensions.k8s.io", resource: "customresourcedefinitions", verb: "get" },
  { group: "apiextensions.k8s.io", resource: "customresourcedefinitions", verb: "update" },
  { group: "apiextensions.k8s.io", resource: "customresourcedefinitions", verb: "create", before: deleteCrds },
];

/** The generated manifests with `verb` taken from `resource` only (a rule it shared is split). */
function withoutVerb({ group, resource, verb }: VerbCase): Manifest[] {
  return manifests().map((m) => {
    if (m.kind !== "ClusterRole") return m;
    const rules = (m.rules ?? []).flatMap((r) => {
      // The metrics-reader role's rule names non-resource URLs: no groups, no resources.
      if (!r.apiGroups?.includes(group) || !r.resources?.includes(resource)) return [r];
      const others = r.resources.filter((x) => x !== resource);
      const verbs = r.verbs.filter((v) => v !== verb);
      return [
        ...(others.length > 0 ? [{ ...r, resources: others }] : []),
        ...(verbs.length > 0 ? [{ ...r, resources: [resource], verbs }] : []),
      ];
    });
    return { ...m, rules };
  });
}

describe("each verb of the derived rules is one the operator uses", () => {
  it("has a case for every generated verb except finalizers and the metrics reviews", () => {
    // The reviews are sent only when /metrics is scraped: metrics-auth.e2e.test.ts proves them needed.
    const generatedVerbs = (manifests().find((m) => m.kind === "ClusterRole")?.rules ?? [])
      .flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${r.apiGroups[0]}/${res}:${v}`)))
      .filter((v) => !v.includes("/finalizers:") && !/\/(tokenreviews|subjectaccessreviews):/.test(v));
    expect(new Set(generatedVerbs)).toEqual(new Set(VERB_CASES.map((c) => `${c.group}/${c.resource}:${c.verb}`)));
  });

  VERB_CASES.forEach((c, i) => {
    it(`without ${c.verb} on ${c.group || "core"} ${c.resource}, a request is refused with a 403`, async () => {
      await c.before?.();
      const stdin = withoutVerb(c)
        .map((m) => `---\n${stringify(m)}`)
        .join("");
      const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin });
      expect(applied.code, applied.stderr).toBe(0);
      const sa = await cluster.serviceAccount(`${SYSTEM_NS}/${OPERATOR_NAME}`);
      const refused = `cannot ${c.verb} resource "${c.resource}" in API group "${c.group}"`;
      // Started directly, not with cluster.run: an operator that fails (CRD registration refused)
      // must not fail the cluster's waits in the cases after this one.
      const capture = logCapture("silent");
      const stop = new AbortController();
      let failure: unknown;
      const done = everyFeatureOperator()
        .start({
          client: sa.client,
          signal: stop.signal,
          logger: capture.logger,
          gracefulShutdownTimeout: "5s",
          leaderElection: LEADER_ELECTION,
        })
        .catch((err: unknown) => {
          failure = err;
        });
      try {
        if (c.resource !== "customresourcedefinitions") {
          // Registered by this operator when an earlier case (or the filter) left none.
          for (const name of [Gizmo.crdName, Gear.crdName]) {
            await cluster.waitFor(CustomResourceDefinition, name, (crd) =>
              (crd.status?.conditions ?? []).some((x) => x.type === "Established" && x.status === "True"),
            );
          }
          const ns = `verb-${i}`;
          await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: ns } }));
          await cluster.client
            .resource(Gizmo, ns)
            .create(Gizmo.make({ metadata: { name: "g", namespace: ns }, spec: { size: 1 } }));
          await cluster.client
            .resource(Gear, ns)
            .create(Gear.make({ metadata: { name: "cog", namespace: ns }, spec: { teeth: 1 } }));
        }
        await vi.waitFor(
          () => {
            const messages = [
              String((failure as Error | undefined)?.message),
              ...capture.records.map((r) => String((r.err as { message?: string } | undefined)?.message)),
            ];
            expect(
              messages.some((m) => m.includes(refused)),
              `a 403: ${refused}`,
            ).toBe(true);
          },
          { timeout: 15_000, interval: 100 },
        );
      } finally {
        stop.abort();
        await done;
      }
    }, 60_000);
  });
});
