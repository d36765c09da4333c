import { startTestCluster } from "capstan-dev/testing";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { machineCrd } from "./support/cluster.ts";

/** Not registered up front (unlike the Machine): starting the operator has CRD registration to do. */
const Sprocket = defineResource({
  group: "stops.capstan.test",
  version: "v1",
  kind: "Sprocket",
  scope: "Namespaced",
  spec: Type.Object({ teeth: Type.Integer() }),
});

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

describe("stopping an operator while it starts", () => {
  it("a stop during CRD registration resolves start() as a stop, not a failure", async () => {
    const op = operator({ name: "sprockets" });
    op.on.create(Sprocket, async () => undefined);
    const stop = new AbortController();
    const started = op.start({ client: cluster.client, signal: stop.signal });
    stop.abort(); // what `capstan dev` does when a file is saved while the operator is starting
    await expect(started).resolves.toBeUndefined();
  });
});
