/**
 * matchConditions decided as kube-apiserver's matchconditions matcher decides them, for webhooks
 * and policies alike: the first false condition skips, errors follow failurePolicy, compile errors
 * are evaluation errors.
 */
import { describe, expect, it } from "vitest";
import { AdmissionActivation } from "../../../packages/capstan-dev/src/devcluster/admission/admission-cel.ts";
import {
  compileMatchConditions,
  evaluateMatchConditions,
} from "../../../packages/capstan-dev/src/devcluster/admission/match-conditions.ts";
import type { AdmissionAttributes } from "../../../packages/capstan-dev/src/devcluster/admission/webhook-call.ts";

const attributes: AdmissionAttributes = {
  kind: { group: "", version: "v1", kind: "ConfigMap" },
  resource: { group: "", version: "v1", resource: "configmaps" },
  subResource: "",
  name: "cm",
  namespace: "default",
  operation: "CREATE",
  userInfo: { username: "alice", groups: ["devs"] },
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", labels: { team: "red" } }, data: { n: "3" } },
  oldObject: null,
  dryRun: false,
  options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
};

const decide = (expressions: string[], failurePolicy?: string) =>
  evaluateMatchConditions(
    compileMatchConditions(
      expressions.map((expression, i) => ({ name: `c${i}`, expression })),
      {},
    ),
    new AdmissionActivation({ attributes }),
    failurePolicy,
  );

describe("matchConditions", () => {
  it("match when every condition is true, reading object, oldObject and request", () => {
    expect(
      decide([
        "object.metadata.labels.team == 'red'",
        "oldObject == null",
        "request.userInfo.username == 'alice' && 'devs' in request.userInfo.groups && request.operation == 'CREATE'",
        "request.kind.kind == 'ConfigMap' && request.namespace == 'default' && request.name == 'cm'",
      ]),
    ).toEqual({ matches: true });
  });

  it("skip at the first false condition, even after another condition failed", () => {
    expect(decide(["object.data.missing == 'x'", "request.operation == 'UPDATE'"])).toEqual({
      matches: false,
      failedCondition: "c1",
    });
  });

  it("fail with the evaluation error under Fail (the default) and skip under Ignore", () => {
    expect(decide(["object.data.missing == 'x'"])).toEqual({
      error: "expression 'object.data.missing == 'x'' resulted in error: no such key: missing",
    });
    expect(decide(["object.data.missing == 'x'"], "Ignore")).toEqual({ matches: false });
  });

  it("report several errors as Go's aggregate does", () => {
    expect(decide(["object.data.a == 'x'", "object.data.b == 'x'", "true"])).toEqual({
      error:
        "[expression 'object.data.a == 'x'' resulted in error: no such key: a, expression 'object.data.b == 'x'' resulted in error: no such key: b]",
    });
  });

  it("treat a condition that does not compile as an evaluation error, and do not declare params for webhooks", () => {
    expect(decide(["params.x == 1"])).toEqual({
      error:
        "compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
    });
    expect(decide(["'a' + 'b'"])).toEqual({ error: "compilation error: must evaluate to bool but got string" });
  });
});
