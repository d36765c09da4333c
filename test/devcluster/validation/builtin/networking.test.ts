/**
 * networking.k8s.io validation over HTTP, as kube-apiserver 1.32 answers it: Ingresses (rules, hosts,
 * paths and path types, backends, TLS, the class), NetworkPolicies (selectors, ports, peers and IP
 * blocks, policy types), IngressClasses (the controller and its parameters). Valid objects come back
 * as sent plus the scheme's defaults.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../../support/file-fixture.ts";
import { type Response, startRawHttpCluster } from "../../support/http.ts";

const t = fileFixture(() => startRawHttpCluster({ kubelet: false }));

const API = "/apis/networking.k8s.io/v1";
const INGRESSES = `${API}/namespaces/default/ingresses`;
const POLICIES = `${API}/namespaces/default/networkpolicies`;
const CLASSES = `${API}/ingressclasses`;
const MERGE = "application/merge-patch+json";

/** One `details.causes[]` entry: [reason, field, message]. */
type Cause = [string, string, string];

/**
 * Asserts a 422 Invalid with exactly this message and these causes. Ingresses and NetworkPolicies are
 * named in the `extensions` group, the first one kube-apiserver's scheme registers their internal type in.
 */
function expectInvalid(res: Response, kind: string, name: string, message: string, causes: Cause[]): void {
  const group = kind === "IngressClass" ? "networking.k8s.io" : "extensions";
  expect({ code: res.status, reason: res.body.reason, message: res.body.message }).toEqual({
    code: 422,
    reason: "Invalid",
    message: `${kind}.${group} "${name}" is invalid: ${message}`,
  });
  expect(res.body.details).toEqual({
    name,
    group,
    kind,
    causes: causes.map(([reason, field, msg]) => ({ reason, message: msg, field })),
  });
}

const backend = (name = "web", port: Record<string, unknown> = { number: 80 }) => ({ service: { name, port } });

function ingress(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  return { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name, ...metadata }, spec };
}

describe("Ingresses", () => {
  it("stores a valid Ingress as sent", async () => {
    const spec = {
      ingressClassName: "nginx",
      tls: [{ hosts: ["*.example.com", "example.com"], secretName: "example-tls" }],
      rules: [
        {
          host: "*.example.com",
          http: {
            paths: [
              { path: "/", pathType: "Prefix", backend: backend() },
              { path: "/api", pathType: "Exact", backend: backend("api", { name: "http" }) },
              { pathType: "ImplementationSpecific", backend: backend() },
            ],
          },
        },
      ],
    };
    const res = await t.request("POST", INGRESSES, { body: ingress("web", spec) });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual(spec);
  });

  it("refuses an Ingress with neither rules nor a default backend, printing Go's nil slice", async () => {
    const res = await t.request("POST", INGRESSES, { body: ingress("empty", {}) });
    expectInvalid(
      res,
      "Ingress",
      "empty",
      "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified",
      [
        [
          "FieldValueInvalid",
          "spec",
          "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified",
        ],
      ],
    );
  });

  it("refuses a path without pathType, a relative Prefix path and an unknown pathType", async () => {
    const res = await t.request("POST", INGRESSES, {
      body: ingress("paths", {
        rules: [
          {
            host: "example.com",
            http: {
              paths: [
                { path: "/", backend: backend() },
                { path: "api", pathType: "Prefix", backend: backend() },
                { path: "/x", pathType: "Regex", backend: backend() },
              ],
            },
          },
        ],
      }),
    });
    const p = "spec.rules[0].http.paths";
    const types = 'supported values: "Exact", "ImplementationSpecific", "Prefix"';
    expectInvalid(
      res,
      "Ingress",
      "paths",
      `[${p}[0].pathType: Required value: pathType must be specified, ${p}[1].path: Invalid value: "api": must be an absolute path, ` +
        `${p}[2].pathType: Unsupported value: "Regex": ${types}]`,
      [
        ["FieldValueRequired", `${p}[0].pathType`, "Required value: pathType must be specified"],
        ["FieldValueInvalid", `${p}[1].path`, 'Invalid value: "api": must be an absolute path'],
        ["FieldValueNotSupported", `${p}[2].pathType`, `Unsupported value: "Regex": ${types}`],
      ],
    );
  });

  it("refuses an IP as host, a bad wildcard and paths with `//` or a trailing `/.`", async () => {
    const res = await t.request("POST", INGRESSES, {
      body: ingress("hosts", {
        rules: [
          { host: "10.0.0.1", http: { paths: [{ path: "/a//b", pathType: "Exact", backend: backend() }] } },
          { host: "*.*.example.com", http: { paths: [{ path: "/a/.", pathType: "Prefix", backend: backend() }] } },
        ],
      }),
    });
    const wildcard =
      "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    expectInvalid(
      res,
      "Ingress",
      "hosts",
      '[spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address, ' +
        "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//', " +
        `spec.rules[1].host: Invalid value: "*.*.example.com": ${wildcard}, ` +
        "spec.rules[1].http.paths[0].path: Invalid value: \"/a/.\": cannot end with '/.']",
      [
        ["FieldValueInvalid", "spec.rules[0].host", 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address'],
        ["FieldValueInvalid", "spec.rules[0].http.paths[0].path", "Invalid value: \"/a//b\": must not contain '//'"],
        ["FieldValueInvalid", "spec.rules[1].host", `Invalid value: "*.*.example.com": ${wildcard}`],
        ["FieldValueInvalid", "spec.rules[1].http.paths[0].path", "Invalid value: \"/a/.\": cannot end with '/.'"],
      ],
    );
  });

  it("refuses backends with no port, both port name and number, a bad service name, or both kinds of backend", async () => {
    const res = await t.request("POST", INGRESSES, {
      body: ingress("backends", {
        defaultBackend: { service: { name: "web" } },
        rules: [
          {
            http: {
              paths: [
                { path: "/a", pathType: "Prefix", backend: backend("web", { name: "http", number: 80 }) },
                { path: "/b", pathType: "Prefix", backend: backend("Web.App") },
                {
                  path: "/c",
                  pathType: "Prefix",
                  backend: { ...backend(), resource: { kind: "Bucket", name: "assets" } },
                },
              ],
            },
          },
        ],
      }),
    });
    const dns1035 =
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    const p = "spec.rules[0].http.paths";
    expectInvalid(
      res,
      "Ingress",
      "backends",
      "[spec.defaultBackend: Required value: port name or number is required, " +
        `${p}[0].backend: Invalid value: "": cannot set both port name & port number, ` +
        `${p}[1].backend.service.name: Invalid value: "Web.App": ${dns1035}, ` +
        `${p}[2].backend: Invalid value: "": cannot set both resource and service backends]`,
      [
        ["FieldValueRequired", "spec.defaultBackend", "Required value: port name or number is required"],
        ["FieldValueInvalid", `${p}[0].backend`, 'Invalid value: "": cannot set both port name & port number'],
        ["FieldValueInvalid", `${p}[1].backend.service.name`, `Invalid value: "Web.App": ${dns1035}`],
        ["FieldValueInvalid", `${p}[2].backend`, 'Invalid value: "": cannot set both resource and service backends'],
      ],
    );
  });

  it("refuses a class annotation that disagrees with ingressClassName, and a bad TLS secret name", async () => {
    const res = await t.request("POST", INGRESSES, {
      body: ingress(
        "classes",
        { ingressClassName: "nginx", defaultBackend: backend(), tls: [{ secretName: "Bad_Name" }] },
        { annotations: { "kubernetes.io/ingress.class": "traefik" } },
      ),
    });
    const subdomain =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    expectInvalid(
      res,
      "Ingress",
      "classes",
      `[spec.tls[0].secretName: Invalid value: "Bad_Name": ${subdomain}, ` +
        'annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match `ingressClassName` when both are specified]',
      [
        ["FieldValueInvalid", "spec.tls[0].secretName", `Invalid value: "Bad_Name": ${subdomain}`],
        [
          "FieldValueInvalid",
          "annotations.kubernetes.io/ingress.class",
          'Invalid value: "traefik": must match `ingressClassName` when both are specified',
        ],
      ],
    );
  });

  it("validates the spec again on update", async () => {
    expect((await t.request("POST", INGRESSES, { body: ingress("upd", { defaultBackend: backend() }) })).status).toBe(
      201,
    );
    const res = await t.request("PATCH", `${INGRESSES}/upd`, {
      body: { spec: { defaultBackend: { service: { name: "web", port: { number: 70000 } } } } },
      contentType: MERGE,
    });
    expectInvalid(
      res,
      "Ingress",
      "upd",
      "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
      [
        [
          "FieldValueInvalid",
          "spec.defaultBackend.service.port.number",
          "Invalid value: 70000: must be between 1 and 65535, inclusive",
        ],
      ],
    );
  });
});

describe("NetworkPolicies", () => {
  function policy(name: string, spec: Record<string, unknown>) {
    return { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name }, spec };
  }

  it("stores a valid NetworkPolicy as sent plus the default protocol and policy types", async () => {
    const spec = {
      podSelector: { matchLabels: { app: "db" } },
      ingress: [
        {
          from: [
            { podSelector: { matchLabels: { app: "web" } }, namespaceSelector: {} },
            { ipBlock: { cidr: "10.0.0.0/8", except: ["10.1.0.0/16"] } },
          ],
          ports: [{ port: 5432 }, { port: 30000, endPort: 30100, protocol: "UDP" }, { port: "metrics" }],
        },
      ],
      egress: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }] }],
    };
    const res = await t.request("POST", POLICIES, { body: policy("db", spec) });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({
      ...spec,
      ingress: [
        {
          ...spec.ingress[0],
          ports: [
            { port: 5432, protocol: "TCP" },
            { port: 30000, endPort: 30100, protocol: "UDP" },
            { port: "metrics", protocol: "TCP" },
          ],
        },
      ],
      policyTypes: ["Ingress", "Egress"],
    });
  });

  it("refuses an empty peer, an IP block with another peer, a bad CIDR and an except outside it", async () => {
    const res = await t.request("POST", POLICIES, {
      body: policy("peers", {
        podSelector: {},
        ingress: [
          {
            from: [
              {},
              { ipBlock: { cidr: "10.0.0.0/8" }, podSelector: {} },
              { ipBlock: { cidr: "10.0.0.0/33" } },
              { ipBlock: { cidr: "10.0.0.0/16", except: ["10.1.0.0/24", "10.0.0.0/16"] } },
            ],
          },
        ],
      }),
    });
    const f = "spec.ingress[0].from";
    expectInvalid(
      res,
      "NetworkPolicy",
      "peers",
      `[${f}[0]: Required value: must specify a peer, ${f}[1]: Forbidden: may not specify both ipBlock and another peer, ` +
        `${f}[2].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64), ` +
        `${f}[3].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of \`cidr\`, ` +
        `${f}[3].ipBlock.except[1]: Invalid value: "10.0.0.0/16": must be a strict subset of \`cidr\`]`,
      [
        ["FieldValueRequired", `${f}[0]`, "Required value: must specify a peer"],
        ["FieldValueForbidden", `${f}[1]`, "Forbidden: may not specify both ipBlock and another peer"],
        [
          "FieldValueInvalid",
          `${f}[2].ipBlock.cidr`,
          'Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
        ],
        [
          "FieldValueInvalid",
          `${f}[3].ipBlock.except[0]`,
          'Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`',
        ],
        [
          "FieldValueInvalid",
          `${f}[3].ipBlock.except[1]`,
          'Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`',
        ],
      ],
    );
  });

  it("refuses an unknown protocol, an endPort below port or after a named port, and unknown policy types", async () => {
    const res = await t.request("POST", POLICIES, {
      body: policy("ports", {
        podSelector: { matchExpressions: [{ key: "app", operator: "Exists", values: ["x"] }] },
        egress: [
          {
            ports: [
              { protocol: "ICMP", port: 80, endPort: 79 },
              { port: "dns", endPort: 60 },
            ],
          },
        ],
        policyTypes: ["Egress", "Outbound"],
      }),
    });
    const p = "spec.egress[0].ports";
    expectInvalid(
      res,
      "NetworkPolicy",
      "ports",
      "[spec.podSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist', " +
        `${p}[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP", ` +
        `${p}[0].endPort: Invalid value: 80: must be greater than or equal to \`port\`, ` +
        `${p}[1].endPort: Invalid value: 60: may not be specified when \`port\` is non-numeric, ` +
        'spec.policyTypes[1]: Unsupported value: "Outbound": supported values: "Ingress", "Egress"]',
      [
        [
          "FieldValueForbidden",
          "spec.podSelector.matchExpressions[0].values",
          "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ],
        [
          "FieldValueNotSupported",
          `${p}[0].protocol`,
          'Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
        ],
        ["FieldValueInvalid", `${p}[0].endPort`, "Invalid value: 80: must be greater than or equal to `port`"],
        ["FieldValueInvalid", `${p}[1].endPort`, "Invalid value: 60: may not be specified when `port` is non-numeric"],
        [
          "FieldValueNotSupported",
          "spec.policyTypes[1]",
          'Unsupported value: "Outbound": supported values: "Ingress", "Egress"',
        ],
      ],
    );
    const many = await t.request("POST", POLICIES, {
      body: policy("many", { podSelector: {}, policyTypes: ["Ingress", "Egress", "Ingress"] }),
    });
    const value = '[]networking.PolicyType{"Ingress", "Egress", "Ingress"}';
    expectInvalid(
      many,
      "NetworkPolicy",
      "many",
      `spec.policyTypes: Invalid value: ${value}: may not specify more than two policyTypes`,
      [["FieldValueInvalid", "spec.policyTypes", `Invalid value: ${value}: may not specify more than two policyTypes`]],
    );
  });

  it("reports an update's spec errors twice in causes and once in the message, as the strategy validates it twice", async () => {
    expect((await t.request("POST", POLICIES, { body: policy("twice", { podSelector: {} }) })).status).toBe(201);
    const res = await t.request("PATCH", `${POLICIES}/twice`, {
      body: { spec: { ingress: [{ from: [{}] }] } },
      contentType: MERGE,
    });
    expectInvalid(res, "NetworkPolicy", "twice", "spec.ingress[0].from[0]: Required value: must specify a peer", [
      ["FieldValueRequired", "spec.ingress[0].from[0]", "Required value: must specify a peer"],
      ["FieldValueRequired", "spec.ingress[0].from[0]", "Required value: must specify a peer"],
    ]);
  });
});

describe("IngressClasses", () => {
  function ingressClass(name: string, spec: Record<string, unknown>) {
    return { apiVersion: "networking.k8s.io/v1", kind: "IngressClass", metadata: { name }, spec };
  }

  it("stores a valid IngressClass with its parameters scoped to the cluster by default", async () => {
    const res = await t.request("POST", CLASSES, {
      body: ingressClass("nginx", {
        controller: "k8s.io/ingress-nginx",
        parameters: { apiGroup: "k8s.example.com", kind: "IngressParameters", name: "external-lb" },
      }),
    });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({
      controller: "k8s.io/ingress-nginx",
      parameters: { apiGroup: "k8s.example.com", kind: "IngressParameters", name: "external-lb", scope: "Cluster" },
    });
  });

  it("refuses a controller that is not a domain-prefixed path and a Namespace scope without a namespace", async () => {
    const res = await t.request("POST", CLASSES, {
      body: ingressClass("bad", { controller: "nginx", parameters: { kind: "P", name: "p", scope: "Namespace" } }),
    });
    expectInvalid(
      res,
      "IngressClass",
      "bad",
      '[spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo"), ' +
        "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace']",
      [
        [
          "FieldValueInvalid",
          "spec.controller",
          'Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
        ],
        ["FieldValueRequired", "spec.parameters.namespace", "Required value: `parameters.scope` is set to 'Namespace'"],
      ],
    );
  });

  it("refuses a changed controller", async () => {
    expect(
      (await t.request("POST", CLASSES, { body: ingressClass("fixed", { controller: "example.com/a" }) })).status,
    ).toBe(201);
    const res = await t.request("PATCH", `${CLASSES}/fixed`, {
      body: { spec: { controller: "example.com/b" } },
      contentType: MERGE,
    });
    expectInvalid(res, "IngressClass", "fixed", 'spec.controller: Invalid value: "example.com/b": field is immutable', [
      ["FieldValueInvalid", "spec.controller", 'Invalid value: "example.com/b": field is immutable'],
    ]);
  });
});
