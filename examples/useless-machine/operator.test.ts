/**
 * The useless machine against the embedded API server (or another backend), through the typed
 * client, with one operator: the scenarios of operator-scenarios.ts.
 */
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe } from "vitest";
import { uselessMachineOperator } from "./operator.ts";
import { FLIP_DELAY, uselessMachineScenarios } from "./operator-scenarios.ts";

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.run(uselessMachineOperator({ flipDelay: FLIP_DELAY }));
});
afterAll(() => cluster?.stop());

describe("useless machine", () => {
  uselessMachineScenarios(() => cluster);
});
