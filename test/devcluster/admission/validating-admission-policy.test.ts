/**
 * The embedded API server evaluates ValidatingAdmissionPolicies on creates and updates, as
 * kube-apiserver's ValidatingAdmissionPolicy plugin does (k8s.io/apiserver
 * pkg/admission/plugin/policy/validating): bindings, match resources, validations and their
 * messages and reasons, validation actions, params, variables, matchConditions and failurePolicy.
 * Policies act on ConfigMaps here: a built-in namespaced kind with free-form data.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

const API = "/apis/admissionregistration.k8s.io/v1";
const POLICIES = `${API}/validatingadmissionpolicies`;
const BINDINGS = `${API}/validatingadmissionpolicybindings`;

let t: RawHttpCluster;
beforeAll(async () => {
  t = await startRawHttpCluster();
});
afterAll(() => t?.stop());

let seq = 0;
/** A namespace of its own per test (policies are cluster-wide; bindings select the test's namespace). */
async function namespace(labels: Record<string, string> = {}): Promise<string> {
  const name = `vap-${++seq}`;
  const res = await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name, labels } } });
  expect(res.status).toBe(201);
  return name;
}

type Spec = Record<string, unknown>;
const CONFIGMAP_RULES = {
  resourceRules: [
    { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] },
  ],
};

/** Creates a policy on ConfigMaps and a binding scoped to namespace `ns`; returns their names. */
async function policy(ns: string, spec: Spec, binding: Spec = {}): Promise<string> {
  const name = `${ns}-policy`;
  const created = await t.request("POST", POLICIES, {
    body: { metadata: { name }, spec: { matchConstraints: CONFIGMAP_RULES, ...spec } },
  });
  expect(created.status, created.text).toBe(201);
  const bound = await t.request("POST", BINDINGS, {
    body: {
      metadata: { name: `${ns}-binding` },
      spec: {
        policyName: name,
        validationActions: ["Deny"],
        matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } },
        ...binding,
      },
    },
  });
  expect(bound.status, bound.text).toBe(201);
  return name;
}

const createConfigMap = (ns: string, name: string, data: Record<string, string>, extra: Spec = {}) =>
  t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(name, data, extra) });

describe("validations", () => {
  it("denies with 422 Invalid and the policy's wording when a validation is false, and admits when true", async () => {
    const ns = await namespace();
    const name = await policy(ns, { validations: [{ expression: "object.data.size == 'small'", message: "too big" }] });
    const denied = await createConfigMap(ns, "big", { size: "large" });
    expect(denied.status).toBe(422);
    const message = `ValidatingAdmissionPolicy '${name}' with binding '${ns}-binding' denied request: too big`;
    expect(denied.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Invalid",
      code: 422,
      message: `configmaps "big" is forbidden: ${message}`,
      details: { name: "big", kind: "configmaps", causes: [{ message }] },
    });
    expect((await createConfigMap(ns, "small", { size: "small" })).status).toBe(201);
  });

  it("maps reason to the HTTP code and prefers the messageExpression, then message, then the expression", async () => {
    const ns = await namespace();
    await policy(ns, {
      validations: [
        {
          expression: "'owner' in object.data",
          reason: "Forbidden",
          messageExpression: "'configmap ' + object.metadata.name + ' has no owner'",
        },
        { expression: "!('secret' in object.data)", reason: "RequestEntityTooLarge", message: "  no secrets here " },
        { expression: "object.metadata.name != 'plain'" },
      ],
    });
    const forbidden = await createConfigMap(ns, "orphan", {});
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.reason).toBe("Forbidden");
    expect(forbidden.body.message).toMatch(/denied request: configmap orphan has no owner$/);

    const tooLarge = await createConfigMap(ns, "leaky", { owner: "me", secret: "x" });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.message).toMatch(/denied request: no secrets here$/);

    const plain = await createConfigMap(ns, "plain", { owner: "me" });
    expect(plain.status).toBe(422);
    expect(plain.body.message).toMatch(/denied request: failed expression: object.metadata.name != 'plain'$/);
  });

  it("runs on updates with oldObject, which is null on create", async () => {
    const ns = await namespace();
    await policy(ns, {
      validations: [
        {
          expression: "oldObject == null || int(object.data.v) >= int(oldObject.data.v)",
          message: "v may not go down",
        },
      ],
    });
    expect((await createConfigMap(ns, "counter", { v: "2" })).status).toBe(201);
    const path = `/api/v1/namespaces/${ns}/configmaps/counter`;
    const down = await t.request("PUT", path, { body: configMap("counter", { v: "1" }) });
    expect(down.status).toBe(422);
    expect(down.body.message).toMatch(/v may not go down$/);
    expect((await t.request("PUT", path, { body: configMap("counter", { v: "3" }) })).status).toBe(200);
  });

  it("binds request and namespaceObject", async () => {
    const ns = await namespace({ tier: "gold" });
    await policy(ns, {
      validations: [
        {
          expression:
            "request.operation == 'CREATE' && request.namespace == namespaceObject.metadata.name && request.resource.resource == 'configmaps' && namespaceObject.metadata.labels.tier == object.data.tier",
          messageExpression:
            "'tier must be ' + namespaceObject.metadata.labels.tier + ' for ' + request.userInfo.username",
        },
      ],
    });
    const denied = await createConfigMap(ns, "silver", { tier: "silver" });
    expect(denied.body.message).toMatch(/denied request: tier must be gold for capstan-admin$/);
    expect((await createConfigMap(ns, "gold", { tier: "gold" })).status).toBe(201);
  });

  it("evaluates variables, each one from those before it", async () => {
    const ns = await namespace();
    await policy(ns, {
      variables: [
        { name: "team", expression: "object.data.team" },
        { name: "known", expression: "variables.team in ['red', 'blue']" },
      ],
      validations: [{ expression: "variables.known", messageExpression: "'unknown team ' + variables.team" }],
    });
    expect((await createConfigMap(ns, "red", { team: "red" })).status).toBe(201);
    const green = await createConfigMap(ns, "green", { team: "green" });
    expect(green.body.message).toMatch(/denied request: unknown team green$/);
  });
});

describe("failurePolicy and evaluation errors", () => {
  it("denies on an evaluation error under Fail with the expression's error, and admits under Ignore", async () => {
    const failing = await namespace();
    await policy(failing, { validations: [{ expression: "object.data.missing == 'x'" }] });
    const denied = await createConfigMap(failing, "cm", {});
    expect(denied.status).toBe(422);
    expect(denied.body.message).toMatch(
      /denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing$/,
    );

    const ignoring = await namespace();
    await policy(ignoring, { failurePolicy: "Ignore", validations: [{ expression: "object.data.missing == 'x'" }] });
    expect((await createConfigMap(ignoring, "cm", {})).status).toBe(201);
  });

  it("skips the policy when a matchCondition is false, and fails or skips on a condition's error by failurePolicy", async () => {
    const ns = await namespace();
    await policy(ns, {
      matchConditions: [
        { name: "labelled", expression: "has(object.metadata.labels) && 'checked' in object.metadata.labels" },
      ],
      validations: [{ expression: "false", message: "checked configmaps are refused" }],
    });
    expect((await createConfigMap(ns, "unchecked", {})).status).toBe(201);
    const checked = await createConfigMap(ns, "checked", {}, { labels: { checked: "yes" } });
    expect(checked.body.message).toMatch(/denied request: checked configmaps are refused$/);

    const broken = await namespace();
    await policy(broken, {
      matchConditions: [{ name: "broken", expression: "object.data.nope == 'x'" }],
      validations: [{ expression: "false" }],
    });
    const failed = await createConfigMap(broken, "cm", {});
    expect(failed.status).toBe(422);
    expect(failed.body.message).toMatch(
      /denied request: expression 'object.data.nope == 'x'' resulted in error: no such key: nope$/,
    );

    const ignored = await namespace();
    await policy(ignored, {
      failurePolicy: "Ignore",
      matchConditions: [{ name: "broken", expression: "object.data.nope == 'x'" }],
      validations: [{ expression: "false" }],
    });
    expect((await createConfigMap(ignored, "cm", {})).status).toBe(201);
  });
});

describe("bindings", () => {
  it("warns instead of denying for a Warn binding, and says nothing for an Audit binding", async () => {
    const warned = await namespace();
    const name = await policy(
      warned,
      { validations: [{ expression: "false", message: "not on my watch" }] },
      { validationActions: ["Warn"] },
    );
    const res = await createConfigMap(warned, "cm", {});
    expect(res.status).toBe(201);
    expect(res.headers["warning"]).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy '${name}' with binding '${warned}-binding': not on my watch"`,
    );

    const audited = await namespace();
    await policy(audited, { validations: [{ expression: "false" }] }, { validationActions: ["Audit"] });
    const quiet = await createConfigMap(audited, "cm", {});
    expect(quiet.status).toBe(201);
    expect(quiet.headers["warning"]).toBeUndefined();
  });

  it("applies a policy only where both its matchConstraints and the binding's matchResources select", async () => {
    const ns = await namespace();
    await policy(ns, {
      matchConstraints: {
        ...CONFIGMAP_RULES,
        objectSelector: { matchExpressions: [{ key: "free", operator: "DoesNotExist" }] },
        excludeResourceRules: [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            operations: ["*"],
            resources: ["configmaps"],
            resourceNames: ["exempt"],
          },
        ],
      },
      validations: [{ expression: "false", message: "no configmaps" }],
    });
    expect((await createConfigMap(ns, "exempt", {})).status).toBe(201);
    expect((await createConfigMap(ns, "free", {}, { labels: { free: "" } })).status).toBe(201);
    expect((await createConfigMap(ns, "caught", {})).status).toBe(422);
    // The binding selects only its namespace.
    const other = await namespace();
    expect((await createConfigMap(other, "caught", {})).status).toBe(201);
  });

  it("ignores a binding whose policy does not exist, and a policy without a binding", async () => {
    const ns = await namespace();
    const bound = await t.request("POST", BINDINGS, {
      body: { metadata: { name: `${ns}-orphan` }, spec: { policyName: "no-such-policy", validationActions: ["Deny"] } },
    });
    expect(bound.status).toBe(201);
    const unbound = await t.request("POST", POLICIES, {
      body: {
        metadata: { name: `${ns}-unbound` },
        spec: { matchConstraints: CONFIGMAP_RULES, validations: [{ expression: "false" }] },
      },
    });
    expect(unbound.status).toBe(201);
    expect((await createConfigMap(ns, "cm", {})).status).toBe(201);
  });

  it("uses a policy's new expressions as soon as it is updated", async () => {
    const ns = await namespace();
    const name = await policy(ns, { validations: [{ expression: "true" }] });
    expect((await createConfigMap(ns, "before", {})).status).toBe(201);
    const current = (await t.request("GET", `${POLICIES}/${name}`)).body;
    current.spec.validations = [{ expression: "false", message: "closed now" }];
    expect((await t.request("PUT", `${POLICIES}/${name}`, { body: current })).status).toBe(200);
    expect((await createConfigMap(ns, "after", {})).body.message).toMatch(/closed now$/);
  });
});

describe("params", () => {
  const paramKind = { apiVersion: "v1", kind: "ConfigMap" };
  const limitPolicy = {
    paramKind,
    validations: [
      {
        expression: "size(object.data) <= int(params.data.max)",
        messageExpression: "'at most ' + params.data.max + ' keys (' + params.metadata.name + ')'",
      },
    ],
  };

  it("evaluates once with the param named by paramRef, read in the request's namespace", async () => {
    const ns = await namespace();
    expect((await createConfigMap(ns, "limits", { max: "1" })).status).toBe(201);
    await policy(ns, limitPolicy, { paramRef: { name: "limits", parameterNotFoundAction: "Deny" } });
    const denied = await createConfigMap(ns, "two", { a: "1", b: "2" });
    expect(denied.body.message).toMatch(/denied request: at most 1 keys \(limits\)$/);
    expect((await createConfigMap(ns, "one", { a: "1" })).status).toBe(201);
  });

  it("evaluates once per param a selector finds", async () => {
    const ns = await namespace();
    const params = { metadata: { namespace: ns } };
    expect((await createConfigMap(ns, "loose", { max: "5" }, { labels: { limit: "yes" } })).status).toBe(201);
    expect((await createConfigMap(ns, "tight", { max: "1" }, { labels: { limit: "yes" } })).status).toBe(201);
    await policy(ns, limitPolicy, {
      paramRef: {
        namespace: params.metadata.namespace,
        selector: { matchLabels: { limit: "yes" } },
        parameterNotFoundAction: "Allow",
      },
      matchResources: {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
        objectSelector: { matchExpressions: [{ key: "limit", operator: "DoesNotExist" }] },
      },
    });
    const denied = await createConfigMap(ns, "three", { a: "1", b: "2", c: "3" });
    expect(denied.body.message).toMatch(/at most 1 keys \(tight\)$/);
  });

  it("denies with a configuration error when no param is found under Deny, and admits under Allow or failurePolicy Ignore", async () => {
    const deny = await namespace();
    const name = await policy(deny, limitPolicy, { paramRef: { name: "absent", parameterNotFoundAction: "Deny" } });
    const denied = await createConfigMap(deny, "cm", { a: "1" });
    expect(denied.status).toBe(422);
    expect(denied.body.message).toBe(
      `configmaps "cm" is forbidden: ValidatingAdmissionPolicy '${name}' with binding '${deny}-binding' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
    );

    const allow = await namespace();
    await policy(allow, limitPolicy, { paramRef: { name: "absent", parameterNotFoundAction: "Allow" } });
    expect((await createConfigMap(allow, "cm", { a: "1" })).status).toBe(201);

    const ignore = await namespace();
    await policy(
      ignore,
      { ...limitPolicy, failurePolicy: "Ignore" },
      { paramRef: { name: "absent", parameterNotFoundAction: "Deny" } },
    );
    expect((await createConfigMap(ignore, "cm", { a: "1" })).status).toBe(201);
  });

  it("denies with the policy's configuration error when its paramKind is not served", async () => {
    const ns = await namespace();
    const name = await policy(
      ns,
      { paramKind: { apiVersion: "example.com/v1", kind: "Nope" }, validations: [{ expression: "true" }] },
      { paramRef: { name: "x", parameterNotFoundAction: "Allow" } },
    );
    const denied = await createConfigMap(ns, "cm", {});
    expect(denied.body.message).toBe(
      `configmaps "cm" is forbidden: ValidatingAdmissionPolicy '${name}' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nope'`,
    );
    // The policy's own configuration error denies before any binding's matchResources is looked at:
    // every ConfigMap anywhere is refused while it stands.
    const elsewhere = await namespace();
    expect((await createConfigMap(elsewhere, "cm", {})).status).toBe(422);
    expect((await t.request("DELETE", `${POLICIES}/${name}`)).status).toBe(200);
  });
});

describe("validation of policies and bindings", () => {
  it("refuses a policy whose expression does not compile, naming the field", async () => {
    const res = await t.request("POST", POLICIES, {
      body: {
        metadata: { name: "broken" },
        spec: {
          matchConstraints: CONFIGMAP_RULES,
          validations: [{ expression: "object.data.x ==" }, { expression: "nope" }],
        },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain(
      'spec.validations[0].expression: Invalid value: "object.data.x ==": compilation failed: ERROR: <input>:1:',
    );
    expect(res.body.message).toContain(
      "spec.validations[1].expression: Invalid value: \"nope\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')",
    );
  });

  it("refuses a binding with both Deny and Warn, and one without actions", async () => {
    const both = await t.request("POST", BINDINGS, {
      body: { metadata: { name: "both" }, spec: { policyName: "p", validationActions: ["Deny", "Warn"] } },
    });
    expect(both.status).toBe(422);
    expect(both.body.message).toContain("must not contain both Deny and Warn");
    const none = await t.request("POST", BINDINGS, { body: { metadata: { name: "none" }, spec: { policyName: "p" } } });
    expect(none.status).toBe(422);
    expect(none.body.message).toContain(
      "spec.validationActions: Required value: at least one validation action is required",
    );
  });

  it("never applies policies to policies and bindings themselves", async () => {
    const ns = await namespace({ lockout: "yes" });
    const lockout = await t.request("POST", POLICIES, {
      body: {
        metadata: { name: "lockout" },
        spec: {
          matchConstraints: {
            resourceRules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"] }],
          },
          validations: [{ expression: "false" }],
        },
      },
    });
    expect(lockout.status).toBe(201);
    const binding = await t.request("POST", BINDINGS, {
      body: {
        metadata: { name: "lockout" },
        spec: {
          policyName: "lockout",
          validationActions: ["Deny"],
          matchResources: { namespaceSelector: { matchLabels: { lockout: "yes" } } },
        },
      },
    });
    expect(binding.status).toBe(201);
    expect((await createConfigMap(ns, "cm", {})).status).toBe(422);
    // The policy can still be removed (cluster-scoped objects are not selected out by a namespaceSelector).
    expect((await t.request("DELETE", `${BINDINGS}/lockout`)).status).toBe(200);
    expect((await t.request("DELETE", `${POLICIES}/lockout`)).status).toBe(200);
    const after = await createConfigMap(ns, "cm", {});
    expect(after.status, after.text).toBe(201);
  });
});
