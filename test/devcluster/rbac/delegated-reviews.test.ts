/** TokenReview and (Local)SubjectAccessReview: what a protected metrics endpoint asks the API server. */

import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, RBAC_CLUSTER, serviceAccountToken } from "./support.ts";

let cluster: TestCluster;
let proxy: string;
let robot: string;

beforeAll(async () => {
  cluster = await startTestCluster(RBAC_CLUSTER);
  proxy = await serviceAccountToken(cluster, "ops", "metrics-proxy");
  robot = await serviceAccountToken(cluster, "team", "robot");
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    body: {
      metadata: { name: "metrics-proxy" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
      subjects: [{ kind: "ServiceAccount", name: "metrics-proxy", namespace: "ops" }],
    },
  });
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings", {
    body: {
      metadata: { name: "robot-view" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "robot" }],
    },
  });
});
afterAll(async () => {
  await cluster.stop();
});

const tokenReview = (token: string, as: string) =>
  http(cluster, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    token: as,
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
  });

describe("delegated reviews", () => {
  it("TokenReview names the user behind a token, and says so when a token is not valid", async () => {
    const good = await tokenReview(robot, proxy);
    expect(good.status).toBe(201);
    expect(good.body.status.authenticated).toBe(true);
    expect(good.body.status.user.username).toBe("system:serviceaccount:team:robot");
    expect(good.body.status.user.groups).toContain("system:serviceaccounts:team");
    const bad = await tokenReview("nonsense", proxy);
    expect(bad.body.status.authenticated).toBeUndefined();
    expect(bad.body.status.error).toBe("invalid bearer token");
  });

  it("needs create on tokenreviews (system:auth-delegator)", async () => {
    const res = await tokenReview(proxy, robot);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      'tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:team:robot" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope',
    );
  });

  it("SubjectAccessReview answers for the user it names", async () => {
    const ask = (verb: string) =>
      http(cluster, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        token: proxy,
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: "system:serviceaccount:team:robot",
            groups: ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"],
            resourceAttributes: { namespace: "team", verb, resource: "pods" },
          },
        },
      });
    const yes = await ask("list");
    expect(yes.body.status.allowed).toBe(true);
    expect(yes.body.status.reason).toBe(
      'RBAC: allowed by RoleBinding "robot-view/team" of ClusterRole "view" to ServiceAccount "robot/team"',
    );
    expect((await ask("delete")).body.status).toEqual({ allowed: false });
  });

  it("LocalSubjectAccessReview must ask about its own namespace", async () => {
    const res = await http(cluster, "POST", "/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews", {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "LocalSubjectAccessReview",
        metadata: { namespace: "team" },
        spec: { user: "someone", resourceAttributes: { namespace: "other", verb: "get", resource: "pods" } },
      },
    });
    expect(res.status).toBe(422);
    const ok = await http(cluster, "POST", "/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews", {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "LocalSubjectAccessReview",
        metadata: { namespace: "team" },
        spec: { user: "someone", resourceAttributes: { namespace: "team", verb: "get", resource: "pods" } },
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.status).toEqual({ allowed: false });
  });

  it("decodes a protobuf SubjectAccessReview as a Go client may send it", async () => {
    const body = envelope(
      "authorization.k8s.io/v1",
      "SubjectAccessReview",
      message([
        [
          2,
          message([
            [
              1,
              message([
                [1, "team"],
                [2, "list"],
                [5, "pods"],
              ]),
            ],
            [3, "system:serviceaccount:team:robot"],
            [4, "system:serviceaccounts:team"],
          ]),
        ],
      ]),
    );
    const agent = new Agent({ connect: { ca: cluster.server.caPem } });
    let status: number;
    let answer: { spec: unknown; status: { allowed: boolean } };
    try {
      const res = await request(`${cluster.server.url}/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
        method: "POST",
        dispatcher: agent,
        headers: {
          authorization: `Bearer ${cluster.server.token}`,
          "content-type": "application/vnd.kubernetes.protobuf",
        },
        body,
      });
      status = res.statusCode;
      answer = (await res.body.json()) as typeof answer;
    } finally {
      await agent.close();
    }
    expect(status).toBe(201);
    expect(answer.spec).toEqual({
      resourceAttributes: { namespace: "team", verb: "list", resource: "pods" },
      user: "system:serviceaccount:team:robot",
      groups: ["system:serviceaccounts:team"],
    });
    expect(answer.status.allowed).toBe(true);
  });
});

/** Protobuf wire encoding of the length-delimited fields these messages use. */
function field(number: number, value: Buffer): Buffer {
  return Buffer.concat([varint((number << 3) | 2), varint(value.length), value]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

function message(fields: [number, string | Buffer][]): Buffer {
  return Buffer.concat(fields.map(([n, v]) => field(n, typeof v === "string" ? Buffer.from(v) : v)));
}

/** The `k8s\0` + runtime.Unknown envelope kubectl and client-go send. */
function envelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const typeMeta = message([
    [1, apiVersion],
    [2, kind],
  ]);
  return Buffer.concat([
    Buffer.from([0x6b, 0x38, 0x73, 0x00]),
    message([
      [1, typeMeta],
      [2, raw],
    ]),
  ]);
}
