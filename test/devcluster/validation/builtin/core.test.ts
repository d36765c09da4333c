/**
 * The core kinds' spec validation over HTTP, as kube-apiserver 1.32 answers it: Services (ports,
 * types, cluster IPs checked before they are allocated, node ports, traffic policies, what may not
 * change), ConfigMaps and Secrets (keys, a type's required keys, immutability), Namespaces
 * (spec.finalizers), ServiceAccounts (secret references cleaned). Valid objects come back as sent plus
 * the scheme's defaults and what the server allocates.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../../support/file-fixture.ts";
import { type Response, startRawHttpCluster } from "../../support/http.ts";

const t = fileFixture(() => startRawHttpCluster({ kubelet: false }));

const NS = "/api/v1/namespaces/default";
const SERVICES = `${NS}/services`;
const CONFIGMAPS = `${NS}/configmaps`;
const SECRETS = `${NS}/secrets`;
const MERGE = "application/merge-patch+json";

/** One `details.causes[]` entry: [reason, field, message]. */
type Cause = [string, string, string];

/** Asserts a 422 Invalid with exactly this message and these causes, in this order. */
function expectInvalid(res: Response, kind: string, name: string, message: string, causes: Cause[]): void {
  expect({ code: res.status, reason: res.body.reason, message: res.body.message }).toEqual({
    code: 422,
    reason: "Invalid",
    message: `${kind} "${name}" is invalid: ${message}`,
  });
  expect(res.body.details).toEqual({
    name,
    kind,
    causes: causes.map(([reason, field, msg]) => ({ reason, message: msg, field })),
  });
}

function service(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  return { apiVersion: "v1", kind: "Service", metadata: { name, ...metadata }, spec };
}

const DNS_LABEL_RULE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe("Services on create", () => {
  it("stores a valid Service as sent plus the defaults, a cluster IP and its family", async () => {
    const sent = service("web", {
      selector: { app: "web" },
      ports: [
        { name: "http", port: 80, targetPort: "http" },
        { name: "metrics", port: 9090, targetPort: 9090, protocol: "TCP", appProtocol: "http" },
      ],
    });
    const res = await t.request("POST", SERVICES, { body: sent });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({
      selector: { app: "web" },
      ports: [
        { name: "http", port: 80, targetPort: "http", protocol: "TCP" },
        { name: "metrics", port: 9090, targetPort: 9090, protocol: "TCP", appProtocol: "http" },
      ],
      clusterIP: expect.stringMatching(/^10\.96\.\d+\.\d+$/),
      clusterIPs: [res.body.spec.clusterIP],
      type: "ClusterIP",
      sessionAffinity: "None",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      internalTrafficPolicy: "Cluster",
    });
    expect(res.body.status).toEqual({ loadBalancer: {} });
  });

  it("refuses a Service without ports", async () => {
    const res = await t.request("POST", SERVICES, { body: service("noports", { selector: { app: "x" } }) });
    expectInvalid(res, "Service", "noports", "spec.ports: Required value", [
      ["FieldValueRequired", "spec.ports", "Required value"],
    ]);
  });

  it("refuses unnamed ports among several, a port out of range, an unknown protocol and a bad targetPort name", async () => {
    const res = await t.request("POST", SERVICES, {
      body: service("ports", { ports: [{ port: 80 }, { port: 0, protocol: "HTTP", targetPort: "Web_Port" }] }),
    });
    const charset = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
    expectInvalid(
      res,
      "Service",
      "ports",
      "[spec.ports[0].name: Required value, spec.ports[1].name: Required value, " +
        "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive, " +
        'spec.ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP", ' +
        `spec.ports[1].targetPort: Invalid value: "Web_Port": ${charset}]`,
      [
        ["FieldValueRequired", "spec.ports[0].name", "Required value"],
        ["FieldValueRequired", "spec.ports[1].name", "Required value"],
        ["FieldValueInvalid", "spec.ports[1].port", "Invalid value: 0: must be between 1 and 65535, inclusive"],
        [
          "FieldValueNotSupported",
          "spec.ports[1].protocol",
          'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        ],
        ["FieldValueInvalid", "spec.ports[1].targetPort", `Invalid value: "Web_Port": ${charset}`],
      ],
    );
  });

  it("refuses duplicate port names and duplicate (protocol, port) pairs, the pair printed as Go's ServicePort", async () => {
    const res = await t.request("POST", SERVICES, {
      body: service("dups", {
        ports: [
          { name: "http", port: 80 },
          { name: "http", port: 80, targetPort: 8080 },
        ],
      }),
    });
    const key =
      'core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}';
    expectInvalid(
      res,
      "Service",
      "dups",
      `[spec.ports[1].name: Duplicate value: "http", spec.ports[1]: Duplicate value: ${key}]`,
      [
        ["FieldValueDuplicate", "spec.ports[1].name", 'Duplicate value: "http"'],
        ["FieldValueDuplicate", "spec.ports[1]", `Duplicate value: ${key}`],
      ],
    );
  });

  it("refuses an unknown type, a port name that is not a DNS label and a selector that is not labels", async () => {
    const res = await t.request("POST", SERVICES, {
      body: service("kinds", { type: "Internal", selector: { app: "web app" }, ports: [{ name: "HTTP", port: 80 }] }),
    });
    const labelRule =
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    const types = 'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"';
    expectInvalid(
      res,
      "Service",
      "kinds",
      `[spec.ports[0].name: Invalid value: "HTTP": ${DNS_LABEL_RULE}, spec.selector: Invalid value: "web app": ${labelRule}, ` +
        `spec.type: Unsupported value: "Internal": ${types}]`,
      [
        ["FieldValueInvalid", "spec.ports[0].name", `Invalid value: "HTTP": ${DNS_LABEL_RULE}`],
        ["FieldValueInvalid", "spec.selector", `Invalid value: "web app": ${labelRule}`],
        ["FieldValueNotSupported", "spec.type", `Unsupported value: "Internal": ${types}`],
      ],
    );
  });

  it("refuses a nodePort on a ClusterIP Service, externalTrafficPolicy where it does not apply and a loopback external IP", async () => {
    const res = await t.request("POST", SERVICES, {
      body: service("cip", {
        ports: [{ port: 80, nodePort: 30080 }],
        externalTrafficPolicy: "Local",
        externalIPs: ["127.0.0.1"],
      }),
    });
    expectInvalid(
      res,
      "Service",
      "cip",
      '[spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128), ' +
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP']",
      [
        [
          "FieldValueInvalid",
          "spec.externalIPs[0]",
          'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
        ],
        ["FieldValueForbidden", "spec.ports[0].nodePort", "Forbidden: may not be used when `type` is 'ClusterIP'"],
      ],
    );
    // Without external IPs the policy has nothing to apply to.
    const policy = await t.request("POST", SERVICES, {
      body: service("etp", { ports: [{ port: 80 }], externalTrafficPolicy: "Local" }),
    });
    expectInvalid(
      policy,
      "Service",
      "etp",
      'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
      [
        [
          "FieldValueInvalid",
          "spec.externalTrafficPolicy",
          'Invalid value: "Local": may only be set for externally-accessible services',
        ],
      ],
    );
  });

  it("refuses an unknown session affinity and a ClientIP timeout out of range", async () => {
    const affinity = await t.request("POST", SERVICES, {
      body: service("sticky", { ports: [{ port: 80 }], sessionAffinity: "Sticky" }),
    });
    expectInvalid(
      affinity,
      "Service",
      "sticky",
      'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
      [
        [
          "FieldValueNotSupported",
          "spec.sessionAffinity",
          'Unsupported value: "Sticky": supported values: "ClientIP", "None"',
        ],
      ],
    );
    const timeout = await t.request("POST", SERVICES, {
      body: service("timeout", {
        ports: [{ port: 80 }],
        sessionAffinity: "ClientIP",
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } },
      }),
    });
    expectInvalid(
      timeout,
      "Service",
      "timeout",
      "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400",
      [
        [
          "FieldValueInvalid",
          "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
          "Invalid value: 0: must be greater than 0 and less than 86400",
        ],
      ],
    );
  });

  it("checks clusterIP before anything else, alone, as the allocation does before validation", async () => {
    // No ports either: the allocation's own check of the cluster IP fields answers first.
    const res = await t.request("POST", SERVICES, { body: service("badip", { clusterIP: "10.96.0" }) });
    expectInvalid(
      res,
      "Service",
      "badip",
      'spec.clusterIPs[0]: Invalid value: "10.96.0": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      [
        [
          "FieldValueInvalid",
          "spec.clusterIPs[0]",
          'Invalid value: "10.96.0": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ],
      ],
    );
    const mismatch = await t.request("POST", SERVICES, {
      body: service("mismatch", { clusterIP: "10.96.0.40", clusterIPs: ["10.96.0.41"], ports: [{ port: 80 }] }),
    });
    expectInvalid(
      mismatch,
      "Service",
      "mismatch",
      'spec.clusterIPs: Invalid value: []string{"10.96.0.41"}: first value must match `clusterIP`',
      [
        [
          "FieldValueInvalid",
          "spec.clusterIPs",
          'Invalid value: []string{"10.96.0.41"}: first value must match `clusterIP`',
        ],
      ],
    );
  });

  it("refuses a cluster IP outside the service range and an IPv6 one on this IPv4 cluster", async () => {
    const outside = await t.request("POST", SERVICES, {
      body: service("outside", { clusterIP: "192.168.1.10", ports: [{ port: 80 }] }),
    });
    const range =
      "failed to allocate IP 192.168.1.10: the provided IP (192.168.1.10) is not in the valid range. The range of valid IPs is 10.96.0.0/12";
    expectInvalid(outside, "Service", "outside", `spec.clusterIPs: Invalid value: []string{"192.168.1.10"}: ${range}`, [
      ["FieldValueInvalid", "spec.clusterIPs", `Invalid value: []string{"192.168.1.10"}: ${range}`],
    ]);
    const v6 = await t.request("POST", SERVICES, {
      body: service("v6", { clusterIP: "fd00::10", ports: [{ port: 80 }] }),
    });
    expectInvalid(
      v6,
      "Service",
      "v6",
      'spec.clusterIPs[0]: Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster',
      [
        [
          "FieldValueInvalid",
          "spec.clusterIPs[0]",
          'Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster',
        ],
      ],
    );
  });

  it("gives a headless Service without a selector both IP families, as kube-apiserver does", async () => {
    const res = await t.request("POST", SERVICES, {
      body: service("headless", { clusterIP: "None", ports: [{ port: 5432 }] }),
    });
    expect(res.status).toBe(201);
    expect(res.body.spec).toMatchObject({
      clusterIP: "None",
      clusterIPs: ["None"],
      ipFamilies: ["IPv4", "IPv6"],
      ipFamilyPolicy: "RequireDualStack",
    });
    const nodePort = await t.request("POST", SERVICES, {
      body: service("headless-np", { type: "NodePort", clusterIP: "None", ports: [{ port: 80 }] }),
    });
    expectInvalid(
      nodePort,
      "Service",
      "headless-np",
      "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services",
      [
        [
          "FieldValueInvalid",
          "spec.clusterIPs[0]",
          "Invalid value: \"None\": may not be set to 'None' for NodePort services",
        ],
      ],
    );
  });

  it("requires externalName on an ExternalName Service and forbids cluster IPs there", async () => {
    const valid = await t.request("POST", SERVICES, {
      body: service("db", { type: "ExternalName", externalName: "db.example.com." }),
    });
    expect(valid.status).toBe(201);
    expect(valid.body.spec).toEqual({ type: "ExternalName", externalName: "db.example.com.", sessionAffinity: "None" });
    const res = await t.request("POST", SERVICES, {
      body: service("ext", { type: "ExternalName", clusterIP: "10.96.0.77" }),
    });
    expectInvalid(
      res,
      "Service",
      "ext",
      "[spec.clusterIPs: Forbidden: may not be set for ExternalName services, spec.externalName: Required value]",
      [
        ["FieldValueForbidden", "spec.clusterIPs", "Forbidden: may not be set for ExternalName services"],
        ["FieldValueRequired", "spec.externalName", "Required value"],
      ],
    );
  });

  it("allocates node ports, keeps a requested one and refuses it taken or outside 30000-32767", async () => {
    const np = await t.request("POST", SERVICES, {
      body: service("np", {
        type: "NodePort",
        ports: [
          { name: "a", port: 80 },
          { name: "b", port: 81, nodePort: 31001 },
        ],
      }),
    });
    expect(np.status).toBe(201);
    expect(np.body.spec.ports).toEqual([
      { name: "a", port: 80, protocol: "TCP", targetPort: 80, nodePort: expect.any(Number) },
      { name: "b", port: 81, protocol: "TCP", targetPort: 81, nodePort: 31001 },
    ]);
    expect(np.body.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
    expect(np.body.spec.externalTrafficPolicy).toBe("Cluster");
    const taken = await t.request("POST", SERVICES, {
      body: service("np2", { type: "NodePort", ports: [{ port: 80, nodePort: 31001 }] }),
    });
    expectInvalid(
      taken,
      "Service",
      "np2",
      "spec.ports[0].nodePort: Invalid value: 31001: provided port is already allocated",
      [["FieldValueInvalid", "spec.ports[0].nodePort", "Invalid value: 31001: provided port is already allocated"]],
    );
    const outside = await t.request("POST", SERVICES, {
      body: service("np3", { type: "NodePort", ports: [{ port: 80, nodePort: 8080 }] }),
    });
    const why = "provided port is not in the valid range. The range of valid ports is 30000-32767";
    expectInvalid(outside, "Service", "np3", `spec.ports[0].nodePort: Invalid value: 8080: ${why}`, [
      ["FieldValueInvalid", "spec.ports[0].nodePort", `Invalid value: 8080: ${why}`],
    ]);
    // A LoadBalancer with externalTrafficPolicy Local also gets a health-check node port.
    const lb = await t.request("POST", SERVICES, {
      body: service("lb", { type: "LoadBalancer", externalTrafficPolicy: "Local", ports: [{ port: 443 }] }),
    });
    expect(lb.status).toBe(201);
    expect(lb.body.spec).toMatchObject({
      allocateLoadBalancerNodePorts: true,
      healthCheckNodePort: expect.any(Number),
    });
  });

  it("names Services with DNS-1035 labels", async () => {
    const res = await t.request("POST", SERVICES, { body: service("1web", { ports: [{ port: 80 }] }) });
    const rule =
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    expectInvalid(res, "Service", "1web", `metadata.name: Invalid value: "1web": ${rule}`, [
      ["FieldValueInvalid", "metadata.name", `Invalid value: "1web": ${rule}`],
    ]);
  });
});

describe("Services on update", () => {
  it("keeps the allocated cluster IP and node ports when the manifest is sent again without them", async () => {
    const sent = service("again", { type: "NodePort", selector: { app: "a" }, ports: [{ name: "http", port: 80 }] });
    const created = await t.request("POST", SERVICES, { body: sent });
    expect(created.status).toBe(201);
    const res = await t.request("PUT", `${SERVICES}/again`, {
      body: { ...sent, metadata: { ...sent.metadata, resourceVersion: created.body.metadata.resourceVersion } },
    });
    expect(res.status).toBe(200);
    expect(res.body.spec).toEqual(created.body.spec);
  });

  it("refuses a changed cluster IP: the primary cluster IP may not change once set", async () => {
    const created = await t.request("POST", SERVICES, { body: service("fixed", { ports: [{ port: 80 }] }) });
    const res = await t.request("PATCH", `${SERVICES}/fixed`, {
      body: { spec: { clusterIP: "10.96.200.200" } },
      contentType: MERGE,
    });
    expect(created.body.spec.clusterIP).not.toBe("10.96.200.200");
    expectInvalid(
      res,
      "Service",
      "fixed",
      'spec.clusterIPs[0]: Invalid value: []string{"10.96.200.200"}: may not change once set',
      [
        [
          "FieldValueInvalid",
          "spec.clusterIPs[0]",
          'Invalid value: []string{"10.96.200.200"}: may not change once set',
        ],
      ],
    );
  });

  it("lets a Service become ExternalName (its cluster IP dropped) and back (a new one allocated)", async () => {
    await t.request("POST", SERVICES, { body: service("flip", { ports: [{ port: 80 }] }) });
    const external = await t.request("PATCH", `${SERVICES}/flip`, {
      body: { spec: { type: "ExternalName", externalName: "flip.example.com" } },
      contentType: MERGE,
    });
    expect(external.status).toBe(200);
    expect(external.body.spec.clusterIP).toBeUndefined();
    expect(external.body.spec.clusterIPs).toBeUndefined();
    expect(external.body.spec.ipFamilies).toBeUndefined();
    expect(external.body.spec.ipFamilyPolicy).toBeUndefined();
    // An ExternalName Service reads without internalTrafficPolicy.
    expect(external.body.spec.internalTrafficPolicy).toBeUndefined();
    const back = await t.request("PATCH", `${SERVICES}/flip`, {
      body: { spec: { type: "ClusterIP" } },
      contentType: MERGE,
    });
    expect(back.status).toBe(200);
    expect(back.body.spec).toMatchObject({
      type: "ClusterIP",
      clusterIP: expect.stringMatching(/^10\.96\./),
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
    });
  });

  it("refuses a changed loadBalancerClass on a LoadBalancer", async () => {
    await t.request("POST", SERVICES, {
      body: service("lbc", { type: "LoadBalancer", loadBalancerClass: "example.com/lb", ports: [{ port: 80 }] }),
    });
    const res = await t.request("PATCH", `${SERVICES}/lbc`, {
      body: { spec: { loadBalancerClass: "example.com/other" } },
      contentType: MERGE,
    });
    expectInvalid(
      res,
      "Service",
      "lbc",
      'spec.loadBalancerClass: Invalid value: "example.com/other": may not change once set',
      [["FieldValueInvalid", "spec.loadBalancerClass", 'Invalid value: "example.com/other": may not change once set']],
    );
  });
});

describe("ConfigMaps", () => {
  const KEY_RULE =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

  it("stores valid keys as sent", async () => {
    const data = { "app.properties": "a=b", ENV_NAME: "x", "key-name": "y", ".hidden": "z" };
    const res = await t.request("POST", CONFIGMAPS, {
      body: { metadata: { name: "ok" }, data, binaryData: { blob: "AAE=" } },
    });
    expect(res.status).toBe(201);
    expect([res.body.data, res.body.binaryData]).toEqual([data, { blob: "AAE=" }]);
  });

  it("refuses keys that are not config keys and a key both in data and binaryData", async () => {
    const res = await t.request("POST", CONFIGMAPS, {
      body: {
        metadata: { name: "keys" },
        data: { "conf/app.yaml": "", "..x": "", same: "" },
        binaryData: { same: "" },
      },
    });
    expectInvalid(
      res,
      "ConfigMap",
      "keys",
      `[data[conf/app.yaml]: Invalid value: "conf/app.yaml": ${KEY_RULE}, data[..x]: Invalid value: "..x": must not start with '..', ` +
        'data[same]: Invalid value: "same": duplicate of key present in binaryData]',
      [
        ["FieldValueInvalid", "data[conf/app.yaml]", `Invalid value: "conf/app.yaml": ${KEY_RULE}`],
        ["FieldValueInvalid", "data[..x]", "Invalid value: \"..x\": must not start with '..'"],
        ["FieldValueInvalid", "data[same]", 'Invalid value: "same": duplicate of key present in binaryData'],
      ],
    );
  });

  it("keeps an immutable ConfigMap's data and immutability", async () => {
    const created = await t.request("POST", CONFIGMAPS, {
      body: { metadata: { name: "frozen" }, data: { a: "1" }, immutable: true },
    });
    expect(created.status).toBe(201);
    const res = await t.request("PUT", `${CONFIGMAPS}/frozen`, {
      body: { metadata: { name: "frozen" }, data: { a: "2" }, immutable: false },
    });
    const immutable = "field is immutable when `immutable` is set";
    expectInvalid(res, "ConfigMap", "frozen", `[immutable: Forbidden: ${immutable}, data: Forbidden: ${immutable}]`, [
      ["FieldValueForbidden", "immutable", `Forbidden: ${immutable}`],
      ["FieldValueForbidden", "data", `Forbidden: ${immutable}`],
    ]);
    // Its metadata may still change.
    const labelled = await t.request("PATCH", `${CONFIGMAPS}/frozen`, {
      body: { metadata: { labels: { a: "b" } } },
      contentType: MERGE,
    });
    expect(labelled.status).toBe(200);
  });
});

describe("Secrets", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");

  it("merges stringData into data, and a TLS Secret given that way is valid", async () => {
    const res = await t.request("POST", SECRETS, {
      body: {
        metadata: { name: "tls" },
        type: "kubernetes.io/tls",
        data: { "tls.crt": b64("old") },
        stringData: { "tls.crt": "CERT", "tls.key": "KEY" },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ "tls.crt": b64("CERT"), "tls.key": b64("KEY") });
    expect(res.body.stringData).toBeUndefined();
  });

  it("refuses a Secret without the keys its type requires", async () => {
    const tls = await t.request("POST", SECRETS, { body: { metadata: { name: "notls" }, type: "kubernetes.io/tls" } });
    expectInvalid(tls, "Secret", "notls", "[data[tls.crt]: Required value, data[tls.key]: Required value]", [
      ["FieldValueRequired", "data[tls.crt]", "Required value"],
      ["FieldValueRequired", "data[tls.key]", "Required value"],
    ]);
    const basic = await t.request("POST", SECRETS, {
      body: { metadata: { name: "nobasic" }, type: "kubernetes.io/basic-auth", data: { user: b64("u") } },
    });
    expectInvalid(basic, "Secret", "nobasic", "[data[username]: Required value, data[password]: Required value]", [
      ["FieldValueRequired", "data[username]", "Required value"],
      ["FieldValueRequired", "data[password]", "Required value"],
    ]);
    const token = await t.request("POST", SECRETS, {
      body: { metadata: { name: "notoken" }, type: "kubernetes.io/service-account-token" },
    });
    expectInvalid(
      token,
      "Secret",
      "notoken",
      "metadata.annotations[kubernetes.io/service-account.name]: Required value",
      [["FieldValueRequired", "metadata.annotations[kubernetes.io/service-account.name]", "Required value"]],
    );
  });

  it("refuses a docker config that is not a JSON object, its contents redacted", async () => {
    const res = await t.request("POST", SECRETS, {
      body: {
        metadata: { name: "docker" },
        type: "kubernetes.io/dockerconfigjson",
        stringData: { ".dockerconfigjson": "{oops" },
      },
    });
    const why = "invalid character 'o' looking for beginning of object key string";
    expectInvalid(
      res,
      "Secret",
      "docker",
      `data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": ${why}`,
      [["FieldValueInvalid", "data[.dockerconfigjson]", `Invalid value: "<secret contents redacted>": ${why}`]],
    );
  });

  it("refuses a key that is not a config key", async () => {
    const res = await t.request("POST", SECRETS, {
      body: { metadata: { name: "badkey" }, stringData: { "a b": "x" } },
    });
    expect(res.status).toBe(422);
    expect(res.body.details.causes.map((c: { field: string }) => c.field)).toEqual(["data[a b]"]);
  });

  it("refuses a changed type and changes to an immutable Secret", async () => {
    await t.request("POST", SECRETS, {
      body: { metadata: { name: "typed" }, stringData: { a: "1" }, immutable: true },
    });
    const res = await t.request("PUT", `${SECRETS}/typed`, {
      body: {
        metadata: { name: "typed" },
        type: "kubernetes.io/tls",
        data: { "tls.crt": b64("c"), "tls.key": b64("k") },
        immutable: true,
      },
    });
    const immutable = "field is immutable when `immutable` is set";
    expectInvalid(
      res,
      "Secret",
      "typed",
      `[type: Invalid value: "kubernetes.io/tls": field is immutable, data: Forbidden: ${immutable}]`,
      [
        ["FieldValueInvalid", "type", 'Invalid value: "kubernetes.io/tls": field is immutable'],
        ["FieldValueForbidden", "data", `Forbidden: ${immutable}`],
      ],
    );
  });
});

describe("Namespaces and ServiceAccounts", () => {
  it("refuses a spec finalizer that is neither standard nor qualified, and adds kubernetes to the others", async () => {
    const bad = await t.request("POST", "/api/v1/namespaces", {
      body: { metadata: { name: "fin-bad" }, spec: { finalizers: ["cleanup"] } },
    });
    expectInvalid(
      bad,
      "Namespace",
      "fin-bad",
      'spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
      [
        [
          "FieldValueInvalid",
          "spec.finalizers",
          'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
        ],
      ],
    );
    const ok = await t.request("POST", "/api/v1/namespaces", {
      body: { metadata: { name: "fin-ok" }, spec: { finalizers: ["example.com/cleanup"] } },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.spec.finalizers).toEqual(["example.com/cleanup", "kubernetes"]);
    // spec.finalizers changes only through /finalize.
    const put = await t.request("PUT", "/api/v1/namespaces/fin-ok", {
      body: { ...ok.body, spec: { finalizers: ["cleanup"] } },
    });
    expect(put.status).toBe(200);
    expect(put.body.spec.finalizers).toEqual(["example.com/cleanup", "kubernetes"]);
  });

  it("keeps only the name of a ServiceAccount's secret references", async () => {
    const res = await t.request("POST", `${NS}/serviceaccounts`, {
      body: { metadata: { name: "robot" }, secrets: [{ name: "token", namespace: "other", kind: "Secret" }] },
    });
    expect(res.status).toBe(201);
    expect(res.body.secrets).toEqual([{ name: "token" }]);
  });
});
