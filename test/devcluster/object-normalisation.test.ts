/**
 * Objects come back as kube-apiserver prints them after decoding them into Go structs, whatever the
 * client wrote: metav1.Time in UTC whole seconds, metav1.MicroTime in UTC with 6 fractional digits,
 * time.Parse's error for a time it refuses, and ObjectMeta without its empty fields. Clients nobody
 * here wrote (the Python client's `isoformat()` times, `labels: {}` from templating tools) send these.
 */
import { describe, expect, it } from "vitest";
import { metaTimeJson, microTimeJson } from "../../packages/capstan-dev/src/devcluster/machinery/go-time.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { customServed } from "./support/custom-served.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

const TIME_LAYOUT = "2006-01-02T15:04:05Z07:00";
const MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00";

describe("metav1.Time as Go parses and prints it", () => {
  it.each([
    ["2026-11-27T02:04:58.823072+00:00", "2026-11-27T02:04:58Z"],
    ["2026-11-27T02:04:58Z", "2026-11-27T02:04:58Z"],
    ["2026-11-27T02:04:58+05:30", "2026-11-26T20:34:58Z"],
    ["2026-11-27T23:30:00-01:00", "2026-11-28T00:30:00Z"],
    ["2026-11-27T02:04:58.999999999999-00:00", "2026-11-27T02:04:58Z"],
    ["2026-11-27T02:04:58,5Z", "2026-11-27T02:04:58Z"],
    ["2026-11-27T2:04:58Z", "2026-11-27T02:04:58Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"],
    ["0001-01-01T00:00:00Z", null],
    ["0001-01-01T00:00:00.5Z", null],
    ["0001-01-01T01:00:00+01:00", null],
  ])("reads %s as %s", (text, printed) => {
    expect(metaTimeJson(text)).toBe(printed);
  });

  it.each([
    ["yesterday", `as "${TIME_LAYOUT}": cannot parse "yesterday" as "2006"`],
    ["2026-11-27", `as "${TIME_LAYOUT}": cannot parse "" as "T"`],
    ["2026-11-27 02:04:58Z", `as "${TIME_LAYOUT}": cannot parse " 02:04:58Z" as "T"`],
    ["2026-11-27T02:04:58", `as "${TIME_LAYOUT}": cannot parse "" as "Z07:00"`],
    ["2026-11-27T02:04:58z", `as "${TIME_LAYOUT}": cannot parse "z" as "Z07:00"`],
    ["2026-11-27T02:04:58+0100", `as "${TIME_LAYOUT}": cannot parse "+0100" as "Z07:00"`],
    ["2026-1é-27T02:04:58Z", `as "${TIME_LAYOUT}": cannot parse "1\\xc3\\xa9-27T02:04:58Z" as "01"`],
    ["2026-13-01T00:00:00Z", ": month out of range"],
    ["2026-02-29T00:00:00Z", ": day out of range"],
    ["2026-11-27T24:00:00Z", ": hour out of range"],
    ["2026-11-27T02:60:00Z", ": minute out of range"],
    ["2026-11-27T02:04:60Z", ": second out of range"],
    ["2026-11-27T02:04:58+25:00", ": time zone offset hour out of range"],
    ["2026-11-27T02:04:58Z ", ': extra text: " "'],
  ])("refuses %s with time.ParseError's text", (text, rest) => {
    const quoted = JSON.stringify(text).replace("é", "\\xc3\\xa9");
    expect(() => metaTimeJson(text)).toThrow(`parsing time ${quoted}${rest.startsWith(":") ? "" : " "}${rest}`);
  });
});

describe("metav1.MicroTime as Go parses and prints it", () => {
  it.each([
    ["2026-11-27T02:04:58.823072+00:00", "2026-11-27T02:04:58.823072Z"],
    ["2026-11-27T02:04:58.000001-07:00", "2026-11-27T09:04:58.000001Z"],
    ["0001-01-01T00:00:00.000000Z", null],
  ])("reads %s as %s", (text, printed) => {
    expect(microTimeJson(text)).toBe(printed);
  });

  it.each([
    ["2026-11-27T02:04:58Z", '"Z" as ".000000"'],
    ["2026-11-27T02:04:58.823Z", '".823Z" as ".000000"'],
    ["2026-11-27T02:04:58.8230721Z", '"1Z" as "Z07:00"'],
  ])("wants exactly 6 fractional digits: %s", (text, cannot) => {
    expect(() => microTimeJson(text)).toThrow(`parsing time "${text}" as "${MICRO_LAYOUT}": cannot parse ${cannot}`);
  });
});

const WIDGET = customServed("norm.example.com", "Gadget", {
  schema: {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: { due: { type: "string", format: "date-time" }, size: { type: "integer" } },
      },
    },
  },
});

const t = fileFixture(async () => {
  const cluster = await startRawHttpCluster({ builtinPlugins: false });
  cluster.server.internals.registry.add(WIDGET);
  return cluster;
});

const NS = "/api/v1/namespaces/default";
const CMS = `${NS}/configmaps`;
const GADGETS = "/apis/norm.example.com/v1/namespaces/default/gadgets";
const MERGE = "application/merge-patch+json";
const JSON_PATCH = "application/json-patch+json";
const STRATEGIC = "application/strategic-merge-patch+json";
const APPLY = "application/apply-patch+yaml";

function gadget(name: string, metadata: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): object {
  return { apiVersion: "norm.example.com/v1", kind: "Gadget", metadata: { name, ...metadata }, spec };
}

// biome-ignore lint/suspicious/noExplicitAny: managedFields entries are read as JSON
function managerEntry(body: any, manager: string): any {
  // biome-ignore lint/suspicious/noExplicitAny: see above
  return body.metadata.managedFields?.find((e: any) => e.manager === manager);
}

describe("times of built-in kinds", () => {
  it("prints pod status times in UTC seconds, and a condition's unset lastProbeTime as null", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "timed" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    };
    expect((await t.request("POST", `${NS}/pods`, { body: pod })).status).toBe(201);
    const current = await t.request("GET", `${NS}/pods/timed`);
    const res = await t.request("PUT", `${NS}/pods/timed/status`, {
      body: {
        ...current.body,
        status: {
          phase: "Running",
          startTime: "2026-11-27T02:04:58.823072+00:00",
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-27T03:04:58+01:00" }],
          containerStatuses: [
            {
              name: "c",
              image: "busybox",
              imageID: "",
              ready: true,
              restartCount: 0,
              state: { running: { startedAt: "2026-11-27T02:04:58.123456789Z" } },
              lastState: {
                terminated: {
                  exitCode: 0,
                  startedAt: "2026-11-26T20:00:00-06:00",
                  finishedAt: "2026-11-27T02:00:00.5Z",
                },
              },
            },
          ],
        },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.status.startTime).toBe("2026-11-27T02:04:58Z");
    expect(res.body.status.conditions).toEqual([
      { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: "2026-11-27T02:04:58Z" },
    ]);
    const [cs] = res.body.status.containerStatuses;
    expect(cs.state.running).toEqual({ startedAt: "2026-11-27T02:04:58Z" });
    expect(cs.lastState.terminated).toMatchObject({
      startedAt: "2026-11-27T02:00:00Z",
      finishedAt: "2026-11-27T02:00:00Z",
    });
    // Stored as printed: a read gives the same text.
    expect((await t.request("GET", `${NS}/pods/timed`)).body.status.startTime).toBe("2026-11-27T02:04:58Z");
  });

  it("prints a core/v1 Event's Time fields in seconds and its MicroTime eventTime in microseconds", async () => {
    const res = await t.request("POST", `${NS}/events`, {
      body: {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: "ev-core" },
        involvedObject: { kind: "Pod", name: "timed", namespace: "default" },
        reason: "Started",
        firstTimestamp: "2026-11-27T02:04:58.823072+00:00",
        lastTimestamp: "2026-11-27T04:04:58+02:00",
        eventTime: "2026-11-27T03:04:58.823072+01:00",
        series: { count: 2, lastObservedTime: "2026-11-27T02:04:59.000100Z" },
        reportingComponent: "test",
        reportingInstance: "test-1",
        action: "Start",
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.firstTimestamp).toBe("2026-11-27T02:04:58Z");
    expect(res.body.lastTimestamp).toBe("2026-11-27T02:04:58Z");
    expect(res.body.eventTime).toBe("2026-11-27T02:04:58.823072Z");
    expect(res.body.series.lastObservedTime).toBe("2026-11-27T02:04:59.000100Z");
  });

  it("prints a core/v1 Event's unset value times as null, as Go's encoder never omits them", async () => {
    const res = await t.request("POST", `${NS}/events`, {
      body: {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: "ev-untimed" },
        involvedObject: { kind: "Pod", name: "timed", namespace: "default" },
        reason: "Started",
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ firstTimestamp: null, lastTimestamp: null, eventTime: null });
  });

  it("reads events.k8s.io eventTime and series as MicroTime, deprecatedFirstTimestamp as Time", async () => {
    const res = await t.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events", {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "ev-new" },
        eventTime: "2026-11-27T02:04:58.823072-00:30",
        series: { count: 2, lastObservedTime: "2026-11-27T02:34:59.000001+00:00" },
        deprecatedFirstTimestamp: "2026-11-27T02:04:58.9+00:00",
        reportingController: "example.com/test",
        reportingInstance: "test-1",
        action: "Start",
        reason: "Started",
        regarding: { kind: "Pod", name: "timed", namespace: "default" },
        type: "Normal",
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.eventTime).toBe("2026-11-27T02:34:58.823072Z");
    expect(res.body.series.lastObservedTime).toBe("2026-11-27T02:34:59.000001Z");
    expect(res.body.deprecatedFirstTimestamp).toBe("2026-11-27T02:04:58Z");
    expect(res.body.deprecatedLastTimestamp).toBeNull();
  });

  it("refuses a MicroTime without 6 fractional digits with time.Parse's error", async () => {
    const res = await t.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events", {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "ev-seconds" },
        eventTime: "2026-11-27T02:04:58Z",
        reportingController: "example.com/test",
        reportingInstance: "test-1",
        action: "Start",
        reason: "Started",
        type: "Normal",
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe("BadRequest");
    expect(res.body.message).toBe(
      `Event in version "v1" cannot be handled as a Event: parsing time "2026-11-27T02:04:58Z" as "${MICRO_LAYOUT}": cannot parse "Z" as ".000000"`,
    );
  });

  it("reads a Lease's times as MicroTime and drops a null one (a pointer)", async () => {
    const res = await t.request("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", {
      body: {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "leader" },
        spec: {
          holderIdentity: "me",
          acquireTime: "2026-11-27T02:04:58.823072+00:00",
          renewTime: null,
        },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({ holderIdentity: "me", acquireTime: "2026-11-27T02:04:58.823072Z" });
    const renewed = await t.request("PATCH", "/apis/coordination.k8s.io/v1/namespaces/default/leases/leader", {
      body: { spec: { renewTime: "2026-11-27T03:04:58.000500+01:00" } },
      contentType: MERGE,
    });
    expect(renewed.status).toBe(200);
    expect(renewed.body.spec.renewTime).toBe("2026-11-27T02:04:58.000500Z");
  });

  it("prints Job and CronJob status times in UTC seconds", async () => {
    const template = {
      spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] },
    };
    const job = await t.request("POST", "/apis/batch/v1/namespaces/default/jobs", {
      body: { apiVersion: "batch/v1", kind: "Job", metadata: { name: "timed" }, spec: { template } },
    });
    expect(job.status).toBe(201);
    const started = await t.request("PATCH", "/apis/batch/v1/namespaces/default/jobs/timed/status", {
      body: { status: { startTime: "2026-11-27T02:04:58.5+00:00" } },
      contentType: MERGE,
    });
    expect(started.status).toBe(200);
    expect(started.body.status.startTime).toBe("2026-11-27T02:04:58Z");

    const cron = await t.request("POST", "/apis/batch/v1/namespaces/default/cronjobs", {
      body: {
        apiVersion: "batch/v1",
        kind: "CronJob",
        metadata: { name: "timed" },
        spec: { schedule: "* * * * *", jobTemplate: { spec: { template } } },
      },
    });
    expect(cron.status).toBe(201);
    const scheduled = await t.request("PATCH", "/apis/batch/v1/namespaces/default/cronjobs/timed/status", {
      body: { status: { lastScheduleTime: "2026-11-27T12:00:00+10:00" } },
      contentType: MERGE,
    });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.status.lastScheduleTime).toBe("2026-11-27T02:00:00Z");
  });

  it("refuses an unparsable or non-string metadata time of a built-in kind with the decoder's 400", async () => {
    const garbled = await t.request("POST", CMS, {
      body: configMap("bad-time", {}, { creationTimestamp: "yesterday" }),
    });
    expect(garbled.status).toBe(400);
    expect(garbled.body.message).toBe(
      `ConfigMap in version "v1" cannot be handled as a ConfigMap: parsing time "yesterday" as "${TIME_LAYOUT}": cannot parse "yesterday" as "2006"`,
    );
    const numeric = await t.request("POST", CMS, { body: configMap("bad-time", {}, { creationTimestamp: 5 }) });
    expect(numeric.status).toBe(400);
    expect(numeric.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    );
  });

  it("re-encodes the times of managedFields a client sends", async () => {
    await t.request("POST", `${CMS}?fieldManager=creator`, { body: configMap("sent-managed", { a: "1", b: "2" }) });
    const current = await t.request("GET", `${CMS}/sent-managed`);
    const res = await t.request("PUT", `${CMS}/sent-managed?fieldManager=updater`, {
      body: {
        ...current.body,
        metadata: { ...current.body.metadata, managedFields: [sentEntry("v1", "2026-11-27T03:04:58.823072+01:00")] },
        data: { a: "changed", b: "2" },
      },
    });
    expect(res.status).toBe(200);
    expect(managerEntry(res.body, "someone")?.time).toBe("2026-11-27T02:04:58Z");
  });
});

/** A managedFields entry for `someone`, owning `data.b` and `spec.due`, written at `time`. */
function sentEntry(apiVersion: string, time: string): object {
  return {
    manager: "someone",
    operation: "Update",
    apiVersion,
    time,
    fieldsType: "FieldsV1",
    fieldsV1: apiVersion === "v1" ? { "f:data": { "f:b": {} } } : { "f:spec": { "f:due": {} } },
  };
}

describe("times of custom resources", () => {
  it("re-encodes metadata times and keeps spec date-time strings as sent (only metadata is typed)", async () => {
    const due = "2026-11-27T02:04:58.823072+00:00";
    const created = await t.request("POST", `${GADGETS}?fieldManager=creator`, {
      body: gadget("timed", {}, { due, size: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.body.spec.due).toBe(due);
    const res = await t.request("PUT", `${GADGETS}/timed?fieldManager=updater`, {
      body: {
        ...created.body,
        metadata: {
          ...created.body.metadata,
          managedFields: [sentEntry("norm.example.com/v1", "2026-11-27T02:04:58.823072-01:00")],
        },
        spec: { due, size: 2 },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.spec.due).toBe(due);
    expect(managerEntry(res.body, "someone")?.time).toBe("2026-11-27T03:04:58Z");
  });

  it("refuses an unparsable metadata time with the decoder's 400, its metadata decoded alone", async () => {
    const garbled = await t.request("POST", GADGETS, { body: gadget("bad-time", { creationTimestamp: "2026-11-27" }) });
    expect(garbled.status).toBe(400);
    expect(garbled.body.message).toBe(
      `Gadget in version "v1" cannot be handled as a Gadget: parsing time "2026-11-27" as "${TIME_LAYOUT}": cannot parse "" as "T"`,
    );
    const numeric = await t.request("POST", GADGETS, { body: gadget("bad-time", { deletionTimestamp: 5 }) });
    expect(numeric.status).toBe(400);
    expect(numeric.body.message).toBe(
      'Gadget in version "v1" cannot be handled as a Gadget: json: cannot unmarshal number into Go struct field ObjectMeta.deletionTimestamp of type string',
    );
    const labels = await t.request("POST", GADGETS, { body: gadget("bad-labels", { labels: "a=b" }) });
    expect(labels.status).toBe(400);
    expect(labels.body.message).toBe(
      'Gadget in version "v1" cannot be handled as a Gadget: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string',
    );
  });

  it("lets a time error win over a type error met before it, as it stops Go's decoder", async () => {
    const res = await t.request("POST", GADGETS, {
      body: gadget("both", { labels: "a=b", creationTimestamp: "soon" }),
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('parsing time "soon"');
  });
});

const EMPTY = { labels: {}, annotations: {}, finalizers: [], ownerReferences: [] };

describe("empty metadata fields", () => {
  it.each([
    ["a built-in kind", CMS, (name: string, meta: Record<string, unknown>) => configMap(name, { a: "1" }, meta)],
    ["a custom resource", GADGETS, (name: string, meta: Record<string, unknown>) => gadget(name, meta, { size: 1 })],
  ])("drops them on create of %s, and managedFields do not list them", async (_kind, path, body) => {
    const res = await t.request("POST", `${path}?fieldManager=creator`, { body: body("empty-create", EMPTY) });
    expect(res.status).toBe(201);
    for (const key of Object.keys(EMPTY)) expect(res.body.metadata).not.toHaveProperty(key);
    const entry = managerEntry(res.body, "creator");
    expect(entry.fieldsV1).not.toHaveProperty("f:metadata");
    const read = await t.request("GET", `${path}/empty-create`);
    for (const key of Object.keys(EMPTY)) expect(read.body.metadata).not.toHaveProperty(key);
  });

  it("drops a null metadata field and reads a null label value as an empty string", async () => {
    const res = await t.request("POST", CMS, {
      body: configMap("nulls", {}, { labels: { a: null }, annotations: null, deletionGracePeriodSeconds: null }),
    });
    expect(res.status).toBe(201);
    expect(res.body.metadata.labels).toEqual({ a: "" });
    expect(res.body.metadata).not.toHaveProperty("annotations");
    expect(res.body.metadata).not.toHaveProperty("deletionGracePeriodSeconds");
  });

  it.each([
    ["a built-in kind", CMS, (name: string, meta: Record<string, unknown>) => configMap(name, { a: "1" }, meta)],
    ["a custom resource", GADGETS, (name: string, meta: Record<string, unknown>) => gadget(name, meta, { size: 1 })],
  ])("drops them on update of %s, and the updater owns no label any more", async (_kind, path, body) => {
    await t.request("POST", `${path}?fieldManager=creator`, {
      body: body("empty-update", { labels: { a: "b" }, annotations: { c: "d" } }),
    });
    const current = await t.request("GET", `${path}/empty-update`);
    const res = await t.request("PUT", `${path}/empty-update?fieldManager=updater`, {
      body: { ...current.body, metadata: { ...current.body.metadata, ...EMPTY } },
    });
    expect(res.status).toBe(200);
    for (const key of Object.keys(EMPTY)) expect(res.body.metadata).not.toHaveProperty(key);
    // The creator's labels and annotations were removed, so it owns nothing of metadata.
    expect(managerEntry(res.body, "creator")?.fieldsV1?.["f:metadata"]).toBeUndefined();
    expect(managerEntry(res.body, "updater")?.fieldsV1?.["f:metadata"]).toBeUndefined();
  });

  it.each([
    ["a merge patch", MERGE, { metadata: { labels: { a: null } } }],
    ["a strategic merge patch", STRATEGIC, { metadata: { labels: { a: null } } }],
    ["a JSON patch", JSON_PATCH, [{ op: "replace", path: "/metadata/labels", value: {} }]],
  ])("drops labels that %s leaves empty", async (_name, contentType, patch) => {
    const name = `patched-${contentType.length}`;
    await t.request("POST", CMS, { body: configMap(name, {}, { labels: { a: "b" } }) });
    const res = await t.request("PATCH", `${CMS}/${name}?fieldManager=patcher`, { body: patch, contentType });
    expect(res.status).toBe(200);
    expect(res.body.metadata).not.toHaveProperty("labels");
  });

  it("drops labels that a patch of a custom resource leaves empty", async () => {
    await t.request("POST", GADGETS, { body: gadget("patched", { labels: { a: "b" }, finalizers: ["x/y"] }) });
    const merged = await t.request("PATCH", `${GADGETS}/patched`, {
      body: { metadata: { labels: { a: null } } },
      contentType: MERGE,
    });
    expect(merged.status).toBe(200);
    expect(merged.body.metadata).not.toHaveProperty("labels");
    const json = await t.request("PATCH", `${GADGETS}/patched`, {
      body: [{ op: "remove", path: "/metadata/finalizers/0" }],
      contentType: JSON_PATCH,
    });
    expect(json.status).toBe(200);
    expect(json.body.metadata).not.toHaveProperty("finalizers");
  });

  it("applies empty labels: none are stored, and the applier owns the labels field (an empty map is a leaf)", async () => {
    const res = await t.request("PATCH", `${CMS}/applied?fieldManager=applier`, {
      body: JSON.stringify(configMap("applied", { a: "1" }, { labels: {}, annotations: {} })),
      contentType: APPLY,
    });
    expect(res.status).toBe(201);
    expect(res.body.metadata).not.toHaveProperty("labels");
    expect(res.body.metadata).not.toHaveProperty("annotations");
    expect(managerEntry(res.body, "applier").fieldsV1["f:metadata"]).toEqual({ "f:annotations": {}, "f:labels": {} });
  });

  it("reads managedFields: [] as a reset on a built-in kind but not on a custom resource", async () => {
    // kube-apiserver decodes a built-in object into its struct (an empty, non-nil slice: the field
    // manager's reset request, after which an existing object is no longer tracked), a custom
    // object's metadata through ObjectMeta's ToUnstructured (gone: the live managedFields are kept).
    for (const [path, body] of [
      [CMS, configMap("reset", { a: "1" })],
      [GADGETS, gadget("reset", {}, { size: 1 })],
    ] as const) {
      await t.request("POST", `${path}?fieldManager=creator`, { body });
      const current = await t.request("GET", `${path}/reset`);
      const res = await t.request("PUT", `${path}/reset?fieldManager=updater`, {
        body: { ...current.body, metadata: { ...current.body.metadata, labels: { l: "v" }, managedFields: [] } },
      });
      expect(res.status).toBe(200);
      // biome-ignore lint/suspicious/noExplicitAny: managedFields entries are read as JSON
      const managers = res.body.metadata.managedFields?.map((e: any) => e.manager);
      expect(managers).toEqual(path === CMS ? undefined : ["creator", "updater"]);
    }
  });
});
