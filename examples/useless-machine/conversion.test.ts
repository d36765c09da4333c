/**
 * Machine `v1` beside `v1alpha1`: the embedded API server converts through the operator's
 * conversion webhook (`cluster.run` serves it and registers the CRD's conversion by URL), so both
 * versions read and write the same objects, with the typed client and the real kubectl. With the
 * operator stopped, `v1` fails as it does on a cluster whose conversion webhook is down, and
 * `v1alpha1` (stored) still reads.
 */
import { Namespace } from "capstan/core";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MachineV1, machineV1 } from "./conversion.ts";
import { GROUP, Machine, uselessMachineOperator } from "./operator.ts";

const MACHINES_V1 = `machines.v1.${GROUP}`;
const MACHINES_V1ALPHA1 = `machines.v1alpha1.${GROUP}`;
const v1 = { group: GROUP, version: "v1", kind: "Machine", plural: "machines", namespaced: true };

describe("useless machine versions", () => {
  let cluster: TestCluster;
  const ns = "versions";
  beforeAll(async () => {
    cluster = await startTestCluster();
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: ns } }));
  });
  afterAll(() => cluster?.stop());

  it("converts losslessly both ways", () => {
    const hub = Machine.make({
      metadata: { name: "m", namespace: ns, labels: { a: "b" } },
      spec: { switchPosition: "up", switches: 2 },
      status: { positions: "ud" },
    });
    const spoke = machineV1.fromHub(structuredClone(hub));
    expect(spoke.spec).toEqual({ position: "up", switches: 2 });
    expect(machineV1.toHub(spoke)).toEqual(hub);
    expect(machineV1.fromHub(Machine.make({ metadata: { name: "n" }, spec: {} })).spec).toEqual({});
  });

  it("serves v1 and v1alpha1 of the same machines while the operator runs, and v1 fails clearly once it stops", async () => {
    const running = await cluster.run(uselessMachineOperator({ flipDelay: "200ms" }));
    try {
      // Written in v1 with kubectl: the operator (which reads v1alpha1) flips the switch down.
      const applied = await cluster.kubectl(["apply", "-n", ns, "-f", "examples/useless-machine/machine-v1.yaml"]);
      expect(applied).toMatchObject({ code: 0, stdout: "machine.useless.container.training/machine-v1 created\n" });
      await cluster.waitFor(Machine, `${ns}/machine-v1`, (m) => m.spec.switchPosition === "down");
      const position = await cluster.kubectl([
        "get",
        MACHINES_V1,
        "machine-v1",
        "-n",
        ns,
        "-o",
        "jsonpath={.apiVersion} {.spec.position} {.spec.switchPosition}",
      ]);
      expect(position).toMatchObject({ code: 0, stdout: `${GROUP}/v1 down ` });
      const stored = await cluster.kubectl([
        "get",
        MACHINES_V1ALPHA1,
        "machine-v1",
        "-n",
        ns,
        "-o",
        "jsonpath={.spec.switchPosition}",
      ]);
      expect(stored).toMatchObject({ code: 0, stdout: "down" });
      // v1's own printer columns, with kubectl's default version (v1, the highest).
      const wide = await cluster.kubectl(["get", "machines", "-n", ns, "-o", "wide"]);
      expect(wide.stdout).toMatch(/^NAME\s+SWITCHES\s+POSITIONS\s+POSITION\s+SEEN\s*\nmachine-v1\s+1\s+\S+\s+down\s/);

      // Written in v1alpha1 with the typed client, read in v1.
      await cluster.client
        .resource(Machine, ns)
        .create(Machine.make({ metadata: { name: "typed" }, spec: { switchPosition: "down" } }));
      const readV1 = (await cluster.client.resource(v1, ns).get("typed")) as MachineV1;
      expect(readV1.spec).toEqual({ position: "down" });
    } finally {
      await running.stop();
    }
    const down = await cluster.kubectl(["get", MACHINES_V1, "typed", "-n", ns]);
    expect(down.code).not.toBe(0);
    // kube-apiserver fails the response's conversion with a 500 of no reason: kubectl prints
    // "Error from server: <message>".
    expect(down.stderr).toMatch(
      new RegExp(
        `^Error from server: conversion webhook for ${GROUP.replaceAll(".", "\\.")}/v1alpha1, Kind=Machine failed: Post "https://127\\.0\\.0\\.1:\\d+/convert-useless-container-training-machine\\?timeout=30s": dial tcp 127\\.0\\.0\\.1:\\d+: connect: connection refused$`,
        "m",
      ),
    );
    const still = await cluster.kubectl([
      "get",
      MACHINES_V1ALPHA1,
      "typed",
      "-n",
      ns,
      "-o",
      "jsonpath={.spec.switchPosition}",
    ]);
    expect(still).toMatchObject({ code: 0, stdout: "down" });
  });
});
