/**
 * The useless machine's admission handlers, called by the embedded API server while the operator
 * runs (`cluster.run` serves them and registers their webhook configurations), through the typed
 * client and the real kubectl: a Switch must name a Machine of its namespace, and a Machine records
 * who created it in an annotation nobody can change afterwards. Then with the operator stopped and
 * its configurations left behind: the Switch check fails closed, the record fails open.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AdmissionContext, KubeObject, ObjectOf } from "capstan";
import { MutatingWebhookConfiguration, Namespace, ValidatingWebhookConfiguration } from "capstan/core";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { switchMachineExists } from "./admission.ts";
import { CREATED_BY_ANNOTATION, MACHINE_LABEL, Machine, Switch, uselessMachineOperator } from "./operator.ts";

/** The webhook names the API server puts in its messages: `<id>.<plural>.<operator>.capstan.dev`. */
const SWITCH_CHECK = "machine-exists.switches.useless-machine.capstan.dev";
const CREATED_BY = "created-by.machines.useless-machine.capstan.dev";

/** kubectl's jsonpath for the annotation (dots and the slash escaped). */
const CREATED_BY_PATH = `{.metadata.annotations.${CREATED_BY_ANNOTATION.replaceAll(".", "\\.")}}`;

const operatorUnderTest = () => uselessMachineOperator({ flipDelay: "200ms" });

async function namespace(cluster: TestCluster, name: string): Promise<string> {
  await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name } }));
  return name;
}

const switchOf = (ns: string, machine: string, name = "s") =>
  Switch.make({ metadata: { name, namespace: ns, labels: { [MACHINE_LABEL]: machine } }, spec: { position: "down" } });

/** A configuration as its own manifest would create it again: name only, no server-set metadata. */
const leftBehind = <T extends KubeObject>(config: T): T => ({ ...config, metadata: { name: config.metadata?.name } });

/** The rejection of `write`, or a failure if it succeeded. */
async function refusal(write: Promise<unknown>): Promise<{ code: number; message: string }> {
  return write.then(
    () => expect.fail("the write was admitted"),
    (err: { code: number; message: string }) => err,
  );
}

describe("useless machine admission, with the operator running", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
    await cluster.run(operatorUnderTest());
  });
  afterAll(() => cluster?.stop());

  /** Runs kubectl; a non-zero exit fails the test with kubectl's stderr. */
  async function kubectl(args: string[], options: { stdin?: string } = {}) {
    const r = await cluster.kubectl(args, options);
    expect(r.code, `kubectl ${args.join(" ")}: ${r.stderr}`).toBe(0);
    return r;
  }

  it("refuses a Switch whose machine label names no Machine of its namespace, and admits one that does", async () => {
    const ns = await namespace(cluster, "typed-switches");
    const switches = cluster.client.resource(Switch, ns);
    expect(await refusal(switches.create(switchOf(ns, "ghost")))).toMatchObject({
      code: 403,
      message: `admission webhook "${SWITCH_CHECK}" denied the request: no Machine "ghost" in namespace "${ns}"`,
    });

    // A Machine of that name in another namespace does not count.
    const other = await namespace(cluster, "typed-switches-other");
    await cluster.client.resource(Machine, other).create(Machine.make({ metadata: { name: "ghost" }, spec: {} }));
    expect((await refusal(switches.create(switchOf(ns, "ghost")))).message).toContain(
      `no Machine "ghost" in namespace "${ns}"`,
    );

    await cluster.client.resource(Machine, ns).create(Machine.make({ metadata: { name: "m" }, spec: { switches: 1 } }));
    const created = await switches.create(switchOf(ns, "m"));
    expect(created.metadata.labels).toEqual({ [MACHINE_LABEL]: "m" });
    // The operator's own Switches pass the same check: it adopted ours and keeps the count at one.
    await cluster.waitFor(Machine, `${ns}/m`, (m) => m.status?.positions === "d");
  });

  it("checks the label of a relabelled Switch, and admits one whose label is removed", async () => {
    const ns = await namespace(cluster, "typed-relabel");
    const switches = cluster.client.resource(Switch, ns);
    await cluster.client.resource(Machine, ns).create(Machine.make({ metadata: { name: "m" }, spec: { switches: 1 } }));
    await cluster.waitFor(Machine, `${ns}/m`, (m) => m.status?.positions === "d");
    const [made] = (await switches.list({ labelSelector: `${MACHINE_LABEL}=m` })).items;
    const name = made?.metadata.name as string;

    const relabel = (machine: string | null) =>
      switches.patch(name, { metadata: { labels: { [MACHINE_LABEL]: machine } } }, { type: "merge" });
    expect((await refusal(relabel("ghost"))).message).toBe(
      `admission webhook "${SWITCH_CHECK}" denied the request: no Machine "ghost" in namespace "${ns}"`,
    );
    // Without the label it belongs to no machine, which the reconciler expects: it releases it.
    const released = await relabel(null);
    expect(released.metadata.labels?.[MACHINE_LABEL]).toBeUndefined();
    await cluster.waitFor(Switch, `${ns}/${name}`, (s) => (s.metadata.ownerReferences ?? []).length === 0);
    expect((await relabel("m")).metadata.labels?.[MACHINE_LABEL]).toBe("m");
  });

  it("records the creating user of a Machine and keeps it through later updates", async () => {
    const ns = await namespace(cluster, "typed-created-by");
    const machines = cluster.client.resource(Machine, ns);
    // Who the admin client is, as the API server authenticates it (kubectl auth whoami on any version).
    const { username: admin } = await cluster.whoami();
    expect(admin).not.toBe("");

    // A creator cannot claim to be someone else: the API server's user wins.
    const created = await machines.create(
      Machine.make({ metadata: { name: "m", annotations: { [CREATED_BY_ANNOTATION]: "mallory" } }, spec: {} }),
    );
    expect(created.metadata.annotations?.[CREATED_BY_ANNOTATION]).toBe(admin);

    const patched = await machines.patch(
      "m",
      { metadata: { annotations: { [CREATED_BY_ANNOTATION]: "mallory" } }, spec: { switches: 1 } },
      { type: "merge" },
    );
    expect(patched.spec.switches).toBe(1);
    expect(patched.metadata.annotations?.[CREATED_BY_ANNOTATION]).toBe(admin);

    // A PUT of an object without the annotation keeps it too, and the rest of the write is admitted
    // (once the operator is done writing the machine's status, so the PUT does not conflict).
    const settled = await cluster.waitFor(Machine, `${ns}/m`, (m) => m.status?.positions === "d");
    const { [CREATED_BY_ANNOTATION]: _recorded, ...others } = settled.metadata.annotations ?? {};
    const replaced = await machines.update({
      ...settled,
      metadata: { ...settled.metadata, annotations: others },
      spec: { switches: 2 },
    });
    expect(replaced.spec.switches).toBe(2);
    expect(replaced.metadata.annotations?.[CREATED_BY_ANNOTATION]).toBe(admin);
  });

  it("with kubectl: prints the denial of a Switch of no machine, creates one of a machine, and annotates its creator", async () => {
    const ns = await namespace(cluster, "kubectl-admission");
    const switchYaml = (machine: string) =>
      `apiVersion: useless.container.training/v1alpha1
kind: Switch
metadata:
  name: s-${machine}
  namespace: ${ns}
  labels:
    machine: ${machine}
spec:
  position: down
`;
    const denied = await cluster.kubectl(["apply", "-f", "-"], { stdin: switchYaml("ghost") });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(
      `admission webhook "${SWITCH_CHECK}" denied the request: no Machine "ghost" in namespace "${ns}"`,
    );

    await kubectl(["create", "-n", ns, "-f", "-"], {
      stdin: `apiVersion: useless.container.training/v1alpha1
kind: Machine
metadata:
  name: machine-k
spec:
  switches: 1
`,
    });
    const { stdout: applied } = await kubectl(["apply", "-f", "-"], { stdin: switchYaml("machine-k") });
    expect(applied).toContain("switch.useless.container.training/s-machine-k created");

    const { username: admin } = await cluster.whoami();
    const { stdout: createdBy } = await kubectl([
      "get",
      "machine",
      "machine-k",
      "-n",
      ns,
      "-o",
      `jsonpath=${CREATED_BY_PATH}`,
    ]);
    expect(createdBy).toBe(admin);

    // kubectl annotate --overwrite: admitted with the record kept, and kubectl shows why.
    const annotated = await kubectl([
      "annotate",
      "machine",
      "machine-k",
      "-n",
      ns,
      "--overwrite",
      `${CREATED_BY_ANNOTATION}=mallory`,
    ]);
    expect(annotated.stderr).toContain(
      `Warning: ${CREATED_BY_ANNOTATION} records who created the machine and cannot be changed; it was kept`,
    );
    const { stdout: kept } = await kubectl([
      "get",
      "machine",
      "machine-k",
      "-n",
      ns,
      "-o",
      `jsonpath=${CREATED_BY_PATH}`,
    ]);
    expect(kept).toBe(admin);
  });
});

describe("useless machine admission, with the operator stopped", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(() => cluster?.stop());

  it("refuses every Switch (failurePolicy Fail) but admits Machines without the record (Ignore)", async () => {
    const ns = await namespace(cluster, "stopped");
    const running = await cluster.run(operatorUnderTest());
    const validating = await cluster.client.resource(ValidatingWebhookConfiguration).get("useless-machine-validating");
    const mutating = await cluster.client.resource(MutatingWebhookConfiguration).get("useless-machine-mutating");
    expect(validating.webhooks?.map((w) => [w.name, w.failurePolicy])).toEqual([[SWITCH_CHECK, "Fail"]]);
    expect(mutating.webhooks?.find((w) => w.name === CREATED_BY)?.failurePolicy).toBe("Ignore");
    await cluster.client.resource(Machine, ns).create(Machine.make({ metadata: { name: "m" }, spec: {} }));

    // `run` removes the configurations it registered when the operator stops; an operator that
    // crashed or was uninstalled leaves them behind, pointing at a server nobody answers on.
    await running.stop();
    await cluster.client.resource(ValidatingWebhookConfiguration).create(leftBehind(validating));
    await cluster.client.resource(MutatingWebhookConfiguration).create(leftBehind(mutating));

    const failed = await refusal(cluster.client.resource(Switch, ns).create(switchOf(ns, "m")));
    expect(failed.code).toBe(500);
    expect(failed.message).toMatch(
      new RegExp(
        `^Internal error occurred: failed calling webhook "${SWITCH_CHECK.replaceAll(".", "\\.")}": .*connection refused`,
      ),
    );
    // kubectl prints the same.
    const file = join(cluster.dir, "switch.json");
    await writeFile(file, JSON.stringify(switchOf(ns, "m", "by-kubectl")));
    const byKubectl = await cluster.kubectl(["create", "-f", file]);
    expect(byKubectl.code).toBe(1);
    expect(byKubectl.stderr).toContain(`Internal error occurred: failed calling webhook "${SWITCH_CHECK}"`);

    // The created-by webhook cannot be reached either: the Machine is admitted, with no record.
    const machine = await cluster.client
      .resource(Machine, ns)
      .create(Machine.make({ metadata: { name: "n" }, spec: {} }));
    expect(machine.metadata.annotations?.[CREATED_BY_ANNOTATION]).toBeUndefined();
  });
});

describe("the Switch check alone", () => {
  /** An UPDATE of a Switch from `oldLabel` to `label`, whose `api` fails the test if it is used. */
  const update = (oldLabel: string, label: string) =>
    ({
      operation: "UPDATE",
      namespace: "ns",
      obj: switchOf("ns", label),
      oldObj: switchOf("ns", oldLabel),
      api: { resource: () => expect.fail("the check read from the API server") },
      signal: new AbortController().signal,
    }) as unknown as AdmissionContext<ObjectOf<typeof Switch>>;

  it("admits an update that keeps the label without looking the machine up (it may be gone since)", async () => {
    await expect(switchMachineExists(update("gone", "gone"))).resolves.toBeUndefined();
  });
});
