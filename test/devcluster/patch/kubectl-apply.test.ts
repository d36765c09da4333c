import { describe, expect, it } from "vitest";
import { builtinPatchMeta } from "../../../packages/capstan-dev/src/devcluster/patch/patch-meta.ts";
import { strategicMergePatch } from "../../../packages/capstan-dev/src/devcluster/patch/strategic-merge.ts";

/**
 * Client-side `kubectl apply` (v1.32.4) computes a three-way strategic merge patch from the
 * last-applied-configuration annotation, the new manifest and the live object, and PATCHes it. The
 * bodies below are byte for byte what kubectl 1.32.4 sent (captured with `kubectl apply -v=8` against
 * the devcluster) for a second apply that removes fields; the server must merge them as kube-apiserver does.
 */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

function patched(live: unknown, patch: unknown, meta: ReturnType<typeof builtinPatchMeta>): Doc {
  return strategicMergePatch(live, patch, meta);
}

/** Second apply of a Deployment: image bumped, replicas/tolerations/env B/port 443/sidecar removed. */
const DEPLOYMENT_PATCH = JSON.parse(
  '{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\\"apiVersion\\":\\"apps/v1\\",\\"kind\\":\\"Deployment\\",\\"metadata\\":{\\"annotations\\":{},\\"name\\":\\"web\\",\\"namespace\\":\\"default\\"},\\"spec\\":{\\"selector\\":{\\"matchLabels\\":{\\"app\\":\\"web\\"}},\\"template\\":{\\"metadata\\":{\\"labels\\":{\\"app\\":\\"web\\"}},\\"spec\\":{\\"containers\\":[{\\"args\\":[\\"--a\\"],\\"env\\":[{\\"name\\":\\"A\\",\\"value\\":\\"1\\"}],\\"image\\":\\"nginx:1.26\\",\\"name\\":\\"app\\",\\"ports\\":[{\\"containerPort\\":80}]}]}}}}\\n"}},"spec":{"replicas":null,"template":{"spec":{"$setElementOrder/containers":[{"name":"app"}],"containers":[{"$setElementOrder/env":[{"name":"A"}],"$setElementOrder/ports":[{"containerPort":80}],"args":["--a"],"env":[{"$patch":"delete","name":"B"}],"image":"nginx:1.26","name":"app","ports":[{"$patch":"delete","containerPort":443}]},{"$patch":"delete","name":"sidecar"}],"tolerations":null}}}}',
);

/** Second apply of a ConfigMap: data.b, label b and finalizer f2 removed, data.a changed. */
const CONFIGMAP_PATCH = JSON.parse(
  '{"data":{"a":"3","b":null},"metadata":{"$deleteFromPrimitiveList/finalizers":["f2"],"$setElementOrder/finalizers":["f1"],"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\\"apiVersion\\":\\"v1\\",\\"data\\":{\\"a\\":\\"3\\"},\\"kind\\":\\"ConfigMap\\",\\"metadata\\":{\\"annotations\\":{},\\"finalizers\\":[\\"f1\\"],\\"labels\\":{\\"a\\":\\"x\\"},\\"name\\":\\"cm\\",\\"namespace\\":\\"default\\"}}\\n"},"labels":{"b":null}}}',
);

const deploymentMeta = builtinPatchMeta("apps", "Deployment");
const configMapMeta = builtinPatchMeta("", "ConfigMap");

/** The Deployment as the server holds it after the first apply: defaults filled in, a second writer's changes. */
function liveDeployment(): Record<string, unknown> {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "default",
      uid: "0b6e6f5e-1",
      resourceVersion: "7",
      generation: 1,
      annotations: { [LAST_APPLIED]: "{...first...}\n", "deployment.kubernetes.io/revision": "1" },
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: "web" } },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
      template: {
        metadata: {
          labels: { app: "web" },
          // `kubectl rollout restart` wrote this; it is not in last-applied and must survive.
          annotations: { "kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z" },
        },
        spec: {
          containers: [
            {
              name: "app",
              image: "nginx:1.25",
              args: ["--a", "--b"],
              ports: [
                { containerPort: 80, protocol: "TCP" },
                { containerPort: 443, protocol: "TCP" },
              ],
              env: [
                { name: "A", value: "1" },
                { name: "B", value: "2" },
                // Added by another tool (kubectl set env): server-only, kept.
                { name: "C", value: "3" },
              ],
              imagePullPolicy: "IfNotPresent",
              terminationMessagePath: "/dev/termination-log",
            },
            { name: "sidecar", image: "busybox", imagePullPolicy: "Always" },
          ],
          tolerations: [{ key: "k", operator: "Exists" }],
          restartPolicy: "Always",
          dnsPolicy: "ClusterFirst",
        },
      },
    },
    status: { replicas: 2 },
  };
}

describe("client-side kubectl apply patches (kubectl 1.32)", () => {
  it("removes what the manifest dropped and keeps what other writers and defaulting added", () => {
    const result = patched(liveDeployment(), DEPLOYMENT_PATCH, deploymentMeta);
    expect(result.spec.replicas).toBeUndefined();
    expect(result.spec.strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" },
    });
    expect(result.spec.template.metadata.annotations).toEqual({
      "kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z",
    });
    expect(result.spec.template.spec).toEqual({
      containers: [
        {
          name: "app",
          image: "nginx:1.26",
          args: ["--a"],
          ports: [{ containerPort: 80, protocol: "TCP" }],
          env: [
            { name: "A", value: "1" },
            { name: "C", value: "3" },
          ],
          imagePullPolicy: "IfNotPresent",
          terminationMessagePath: "/dev/termination-log",
        },
      ],
      restartPolicy: "Always",
      dnsPolicy: "ClusterFirst",
    });
    expect(result.metadata.annotations[LAST_APPLIED]).toContain('"image":"nginx:1.26"');
    expect(result.metadata.annotations["deployment.kubernetes.io/revision"]).toBe("1");
    expect(result.status).toEqual({ replicas: 2 });
  });

  it("would wrongly keep removed containers and env vars under plain merge-patch list semantics", () => {
    // Guards the table: containers/env/ports must be merge lists, or the directives above would be
    // taken as list contents.
    const result = patched(liveDeployment(), DEPLOYMENT_PATCH, deploymentMeta);
    const containers = result.spec.template.spec.containers as { name: string }[];
    expect(containers.map((c) => c.name)).toEqual(["app"]);
    expect(JSON.stringify(result)).not.toContain("$patch");
    expect(JSON.stringify(result)).not.toContain("$setElementOrder");
  });

  it("applies the ConfigMap patch: null data key, null label, finalizer removed by $deleteFromPrimitiveList", () => {
    const live = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "cm",
        namespace: "default",
        labels: { a: "x", b: "z" },
        finalizers: ["f1", "example.com/added-by-controller", "f2"],
        annotations: { [LAST_APPLIED]: "{...first...}\n" },
      },
      data: { a: "1", b: "2" },
    };
    const result = patched(live, CONFIGMAP_PATCH, configMapMeta);
    expect(result.data).toEqual({ a: "3" });
    expect(result.metadata.labels).toEqual({ a: "x" });
    expect(result.metadata.finalizers).toEqual(["f1", "example.com/added-by-controller"]);
    expect(JSON.parse(result.metadata.annotations[LAST_APPLIED])).toEqual({
      apiVersion: "v1",
      data: { a: "3" },
      kind: "ConfigMap",
      metadata: { annotations: {}, finalizers: ["f1"], labels: { a: "x" }, name: "cm", namespace: "default" },
    });
  });
});

describe("$retainKeys from kubectl apply (union fields switched)", () => {
  it("clears the fields of the old strategy and volume source (kubectl 1.32's patch)", () => {
    // Verbatim kubectl 1.32.4 body (last-applied value shortened) for RollingUpdate -> Recreate and a
    // volume switched from configMap to secret.
    const patch = {
      metadata: { annotations: { [LAST_APPLIED]: "..." } },
      spec: {
        strategy: { $retainKeys: ["type"], rollingUpdate: null, type: "Recreate" },
        template: {
          spec: {
            "$setElementOrder/volumes": [{ name: "v" }],
            volumes: [{ $retainKeys: ["name", "secret"], configMap: null, name: "v", secret: { secretName: "s" } }],
          },
        },
      },
    };
    const live = liveDeployment();
    const spec = (live as Doc).spec;
    spec.strategy = { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: "25%" } };
    spec.template.spec.volumes = [{ name: "v", configMap: { name: "cm", defaultMode: 420 } }];
    const result = patched(live, patch, deploymentMeta);
    expect(result.spec.strategy).toEqual({ type: "Recreate" });
    expect(result.spec.template.spec.volumes).toEqual([{ name: "v", secret: { secretName: "s" } }]);
  });
});

describe("kubectl patch --type strategic on a Deployment's containers", () => {
  it("merges a container by name instead of replacing the list", () => {
    const patch = { spec: { template: { spec: { containers: [{ name: "app", image: "nginx:1.27" }] } } } };
    const result = patched(liveDeployment(), patch, deploymentMeta);
    const containers = result.spec.template.spec.containers;
    expect(containers.map((c: { name: string; image: string }) => [c.name, c.image])).toEqual([
      ["app", "nginx:1.27"],
      ["sidecar", "busybox"],
    ]);
    expect(containers[0].env).toHaveLength(3);
  });

  it("adds a volume mount by mountPath and an env var by name, replaces tolerations (atomic)", () => {
    const patch = {
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: "app",
                env: [
                  { name: "A", value: "10" },
                  { name: "D", value: "4" },
                ],
                volumeMounts: [{ name: "v", mountPath: "/data" }],
              },
            ],
            tolerations: [{ key: "other", operator: "Exists" }],
          },
        },
      },
    };
    const result = patched(liveDeployment(), patch, deploymentMeta);
    const app = result.spec.template.spec.containers[0];
    // Go's mergeSortedSlice: a new item (D) follows the patch item before it (A), ahead of server-only B, C.
    expect(app.env).toEqual([
      { name: "A", value: "10" },
      { name: "D", value: "4" },
      { name: "B", value: "2" },
      { name: "C", value: "3" },
    ]);
    expect(app.volumeMounts).toEqual([{ name: "v", mountPath: "/data" }]);
    expect(result.spec.template.spec.tolerations).toEqual([{ key: "other", operator: "Exists" }]);
  });

  it("merges ownerReferences by uid and keeps other owners", () => {
    const live = { metadata: { name: "x", ownerReferences: [{ uid: "u1", name: "a", kind: "K", apiVersion: "v1" }] } };
    const patch = { metadata: { ownerReferences: [{ uid: "u2", name: "b", kind: "K", apiVersion: "v1" }] } };
    const result = patched(live, patch, configMapMeta);
    expect(result.metadata.ownerReferences.map((o: { uid: string }) => o.uid)).toEqual(["u2", "u1"]);
  });
});
