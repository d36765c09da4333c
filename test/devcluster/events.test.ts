import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { startRawHttpCluster } from "./support/http.ts";

const t = fileFixture(() => startRawHttpCluster());

const CORE = "/api/v1/namespaces/default/events";
const V1 = "/apis/events.k8s.io/v1/namespaces/default/events";

describe("events: core/v1 and events.k8s.io/v1 are two views of one store", () => {
  it("shows a core Event through events.k8s.io with regarding, note and reportingController", async () => {
    const created = await t.request("POST", CORE, {
      body: {
        metadata: { name: "e1" },
        involvedObject: { kind: "Pod", name: "p", namespace: "default" },
        message: "pulled",
        reason: "Pulled",
        type: "Normal",
        reportingComponent: "kubelet",
        count: 3,
      },
    });
    expect(created.status).toBe(201);
    const view = await t.request("GET", `${V1}/e1`);
    expect(view.body).toMatchObject({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      regarding: { kind: "Pod", name: "p", namespace: "default" },
      note: "pulled",
      reason: "Pulled",
      reportingController: "kubelet",
      deprecatedCount: 3,
    });
    expect(view.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
  });

  it("stores an events.k8s.io Event as a core Event, selectable by regarding.name and involvedObject.name", async () => {
    const created = await t.request("POST", V1, {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "e2" },
        eventTime: "2026-01-01T00:00:00.000000Z",
        regarding: { kind: "Deployment", name: "web" },
        note: "scaled",
        reason: "ScalingReplicaSet",
        type: "Normal",
        action: "Scale",
        reportingController: "deployment-controller",
        reportingInstance: "x",
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.apiVersion).toBe("events.k8s.io/v1");
    expect(created.body.note).toBe("scaled");
    const core = await t.request("GET", `${CORE}/e2`);
    expect(core.body).toMatchObject({
      apiVersion: "v1",
      involvedObject: { kind: "Deployment", name: "web" },
      message: "scaled",
    });
    const byRegarding = await t.request("GET", `${V1}?fieldSelector=regarding.name%3Dweb`);
    expect(byRegarding.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["e2"]);
    expect(byRegarding.body.kind).toBe("EventList");
    expect(byRegarding.body.apiVersion).toBe("events.k8s.io/v1");
    const byInvolved = await t.request("GET", `${CORE}?fieldSelector=involvedObject.name%3Dweb`);
    expect(byInvolved.body.items).toHaveLength(1);
  });

  it("watches through events.k8s.io and patches through it", async () => {
    const w = await t.watch(`${V1}?watch=true&resourceVersion=1&fieldSelector=metadata.name%3De3`);
    await t.request("POST", CORE, { body: { metadata: { name: "e3" }, involvedObject: { name: "n" }, message: "m1" } });
    const added = await w.next();
    expect(added).toMatchObject({ type: "ADDED", object: { apiVersion: "events.k8s.io/v1", note: "m1" } });
    const patched = await t.request("PATCH", `${V1}/e3`, {
      body: { note: "m2" },
      contentType: "application/merge-patch+json",
    });
    expect(patched.body.note).toBe("m2");
    expect((await t.request("GET", `${CORE}/e3`)).body.message).toBe("m2");
    expect((await w.next())?.object.note).toBe("m2");
    w.close();
  });
});
