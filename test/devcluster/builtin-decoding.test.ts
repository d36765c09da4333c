/**
 * Built-in objects decoded into their Go structs, as kube-apiserver decodes them: a value of the wrong
 * JSON type is a 400 with encoding/json's message, unknown fields follow `fieldValidation` and are not
 * stored.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { startRawHttpCluster } from "./support/http.ts";

const t = fileFixture(() => startRawHttpCluster());

const DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments";
const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";
const SERVICES = "/api/v1/namespaces/default/services";
const PODS = "/api/v1/namespaces/default/pods";

function deployment(name: string, container: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "web", image: "nginx", ...container }] },
      },
      ...spec,
    },
  };
}

const cannotHandle = (kind: string, version: string, message: string) =>
  `${kind} in version "${version}" cannot be handled as a ${kind}: ${message}`;

describe("type errors", () => {
  it("refuses an env var name that YAML read as a bool, with Go's unmarshal message", async () => {
    const res = await t.request("POST", DEPLOYMENTS, {
      body: deployment("env-bool", { env: [{ name: true, value: "x" }] }),
    });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe("BadRequest");
    expect(res.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal bool into Go struct field EnvVar.spec.template.spec.containers.env.name of type string",
      ),
    );
    expect((await t.request("GET", `${DEPLOYMENTS}/env-bool`)).status).toBe(404);
  });

  it("refuses replicas given as a string and containers given as an object", async () => {
    const replicas = await t.request("POST", DEPLOYMENTS, { body: deployment("replicas", {}, { replicas: "3" }) });
    expect(replicas.status).toBe(400);
    expect(replicas.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
      ),
    );
    const body = deployment("containers");
    (body.spec.template.spec as Record<string, unknown>)["containers"] = {};
    const containers = await t.request("POST", DEPLOYMENTS, { body });
    expect(containers.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container",
      ),
    );
  });

  it("reports the first type error only, as Go's decoder keeps the first", async () => {
    const res = await t.request("POST", DEPLOYMENTS, {
      body: deployment("two-errors", { env: [{ name: 1 }], ports: [{ containerPort: "80" }] }, { replicas: "3" }),
    });
    expect(res.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
      ),
    );
  });

  it("names a number that does not fit an int32 with its literal", async () => {
    const res = await t.request("POST", DEPLOYMENTS, { body: deployment("half", {}, { replicas: 1.5 }) });
    expect(res.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
      ),
    );
  });

  it("names the Go named type of an enum-like field, as k8s.io/api declares it", async () => {
    const policy = await t.request("POST", DEPLOYMENTS, { body: deployment("policy", { imagePullPolicy: true }) });
    expect(policy.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal bool into Go struct field Container.spec.template.spec.containers.imagePullPolicy of type v1.PullPolicy",
      ),
    );
    const caps = await t.request("POST", DEPLOYMENTS, {
      body: deployment("caps", { securityContext: { capabilities: { add: "NET_ADMIN" } } }),
    });
    expect(caps.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal string into Go struct field Capabilities.spec.template.spec.containers.securityContext.capabilities.add of type []v1.Capability",
      ),
    );
    const uid = await t.request("POST", CONFIGMAPS, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "uid", uid: 5 } },
    });
    expect(uid.body.message).toBe(
      cannotHandle(
        "ConfigMap",
        "v1",
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID",
      ),
    );
  });

  it("refuses a ConfigMap data value that is not a string", async () => {
    const res = await t.request("POST", CONFIGMAPS, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "num" }, data: { port: 8080 } },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      cannotHandle(
        "ConfigMap",
        "v1",
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
      ),
    );
  });

  it("accepts int and string target ports, numeric quantities and null optional fields", async () => {
    const svc = await t.request("POST", SERVICES, {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "ports" },
        spec: {
          selector: { app: "x" },
          ports: [
            { name: "a", port: 80, targetPort: 8080 },
            { name: "b", port: 81, targetPort: "http" },
          ],
        },
      },
    });
    expect(svc.status).toBe(201);
    const dep = await t.request("POST", DEPLOYMENTS, {
      body: deployment(
        "quantities",
        { resources: { limits: { cpu: 1, memory: "64Mi" }, requests: { cpu: "100m" } }, env: null },
        { strategy: null, minReadySeconds: null },
      ),
    });
    expect(dep.status).toBe(201);
    expect(dep.headers["warning"]).toBeUndefined();
  });

  it("refuses an IntOrString that is neither, with the int32 unmarshal message in the field's context", async () => {
    const res = await t.request("POST", SERVICES, {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "bad-port" },
        spec: { ports: [{ port: 80, targetPort: true }] },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      cannotHandle(
        "Service",
        "v1",
        "json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32",
      ),
    );
  });

  it("refuses a quantity that is not one with ParseQuantity's message", async () => {
    const res = await t.request("POST", PODS, {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "bad-cpu" },
        spec: { containers: [{ name: "c", image: "busybox", resources: { limits: { cpu: "lots" } } }] },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      cannotHandle(
        "Pod",
        "v1",
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      ),
    );
  });

  it("refuses a metadata timestamp that is not a string with metav1.Time's inner string error", async () => {
    const res = await t.request("POST", CONFIGMAPS, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ts", creationTimestamp: 5 } },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      cannotHandle(
        "ConfigMap",
        "v1",
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string",
      ),
    );
  });

  it("lets a failing UnmarshalJSON (a quantity) win over an earlier plain type error", async () => {
    const res = await t.request("POST", DEPLOYMENTS, {
      body: deployment("both", { resources: { limits: { cpu: true } } }, { replicas: "3" }),
    });
    expect(res.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      ),
    );
  });

  it("reports a type error rather than the unknown fields when both are present, even under Strict", async () => {
    const res = await t.request("POST", `${DEPLOYMENTS}?fieldValidation=Strict`, {
      body: deployment("type-first", { imagee: "x" }, { replicas: "3" }),
    });
    expect(res.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
      ),
    );
  });

  it("checks the body of an update and the result of a patch", async () => {
    const created = await t.request("POST", DEPLOYMENTS, { body: deployment("later") });
    expect(created.status).toBe(201);
    const put = created.body;
    put.spec.replicas = "2";
    const updated = await t.request("PUT", `${DEPLOYMENTS}/later`, { body: put });
    expect(updated.status).toBe(400);
    expect(updated.body.message).toContain("DeploymentSpec.spec.replicas of type int32");
    const patched = await t.request("PATCH", `${DEPLOYMENTS}/later`, {
      body: { spec: { template: { spec: { containers: [{ name: "web", env: [{ name: false }] }] } } } },
      contentType: "application/strategic-merge-patch+json",
    });
    expect(patched.status).toBe(400);
    expect(patched.body.message).toContain("EnvVar.spec.template.spec.containers.env.name of type string");
    expect((await t.request("GET", `${DEPLOYMENTS}/later`)).body.spec.replicas).toBe(1);
  });
});

describe("unknown fields", () => {
  it("fails a Strict create listing every unknown field in document order", async () => {
    const body = deployment("strict", { imagee: "nginx", imagePullPolicy: "Always" }, { replica: 2 });
    (body.metadata as Record<string, unknown>)["foo"] = "bar";
    const res = await t.request("POST", `${DEPLOYMENTS}?fieldValidation=Strict`, { body });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      cannotHandle(
        "Deployment",
        "v1",
        'strict decoding error: unknown field "metadata.foo", unknown field "spec.template.spec.containers[0].imagee", unknown field "spec.replica"',
      ),
    );
    expect((await t.request("GET", `${DEPLOYMENTS}/strict`)).status).toBe(404);
  });

  it("warns about each unknown field by default and does not store it", async () => {
    const res = await t.request("POST", DEPLOYMENTS, {
      body: deployment("warned", { imagee: "nginx", resources: { limit: { cpu: "1" } } }),
    });
    expect(res.status).toBe(201);
    expect(res.headers["warning"]).toEqual([
      '299 - "unknown field \\"spec.template.spec.containers[0].imagee\\""',
      '299 - "unknown field \\"spec.template.spec.containers[0].resources.limit\\""',
    ]);
    const stored = (await t.request("GET", `${DEPLOYMENTS}/warned`)).body;
    expect(stored.spec.template.spec.containers[0]).not.toHaveProperty("imagee");
    expect(stored.spec.template.spec.containers[0].resources).toEqual({});
  });

  it("drops unknown fields silently under Ignore", async () => {
    const res = await t.request("POST", `${CONFIGMAPS}?fieldValidation=Ignore`, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ignored", foo: 1 }, data: { a: "b" }, extra: {} },
    });
    expect(res.status).toBe(201);
    expect(res.headers["warning"]).toBeUndefined();
    const stored = (await t.request("GET", `${CONFIGMAPS}/ignored`)).body;
    expect(stored).not.toHaveProperty("extra");
    expect(stored.metadata).not.toHaveProperty("foo");
    expect(stored.data).toEqual({ a: "b" });
  });

  it("takes the unknown fields of a patch from the patched result", async () => {
    await t.request("POST", CONFIGMAPS, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "patched" }, data: { a: "b" } },
    });
    const strict = await t.request("PATCH", `${CONFIGMAPS}/patched?fieldValidation=Strict`, {
      body: { datta: { c: "d" } },
      contentType: "application/merge-patch+json",
    });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('strict decoding error: unknown field "datta"');
    const warned = await t.request("PATCH", `${CONFIGMAPS}/patched`, {
      body: { datta: { c: "d" }, data: { c: "d" } },
      contentType: "application/merge-patch+json",
    });
    expect(warned.status).toBe(200);
    expect(warned.headers["warning"]).toBe('299 - "unknown field \\"datta\\""');
    expect(warned.body).not.toHaveProperty("datta");
    expect(warned.body.data).toEqual({ a: "b", c: "d" });
  });

  it("refuses a Strict strategic merge patch's unknown field with patch.go's 422, the patch printed as a Go map", async () => {
    expect((await t.request("POST", DEPLOYMENTS, { body: deployment("smp") })).status).toBe(201);
    const res = await t.request("PATCH", `${DEPLOYMENTS}/smp?fieldValidation=Strict`, {
      body: {
        spec: {
          template: { spec: { containers: [{ name: "web", imagee: "nginx", ports: [{ containerPort: 80 }] }] } },
        },
      },
      contentType: "application/strategic-merge-patch+json",
    });
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe("Invalid");
    const value =
      "map[spec:map[template:map[spec:map[containers:[map[imagee:nginx name:web ports:[map[containerPort:80]]]]]]]]";
    const detail = 'strict decoding error: unknown field "spec.template.spec.containers[0].imagee"';
    expect(res.body.message).toBe(` "" is invalid: patch: Invalid value: ${JSON.stringify(value)}: ${detail}`);
    expect(res.body.details).toEqual({
      causes: [
        { reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field: "patch" },
      ],
    });
  });

  it("fails a Strict update with an unknown field in the body", async () => {
    const created = await t.request("POST", CONFIGMAPS, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "put" } },
    });
    const res = await t.request("PUT", `${CONFIGMAPS}/put?fieldValidation=Strict`, {
      body: { ...created.body, binaryDatas: {} },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      cannotHandle("ConfigMap", "v1", 'strict decoding error: unknown field "binaryDatas"'),
    );
  });

  it("decodes an events.k8s.io Event in its own version, not in the core Event it is stored as", async () => {
    const res = await t.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events?fieldValidation=Strict", {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "ev" },
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
    expect(res.status).toBe(201);
    expect(res.body.note).toBe("scaled");
    const unknown = await t.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events?fieldValidation=Strict", {
      body: { apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "ev2" }, message: "core's field" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe(cannotHandle("Event", "v1", 'strict decoding error: unknown field "message"'));
  });

  it("decodes a status sent on create as part of the body, as the real decoder reads the whole body", async () => {
    const res = await t.request("POST", `${DEPLOYMENTS}?fieldValidation=Strict`, {
      body: { ...deployment("with-status"), status: { replicas: 1, readyReplica: 1 } },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      cannotHandle("Deployment", "v1", 'strict decoding error: unknown field "status.readyReplica"'),
    );
  });
});
