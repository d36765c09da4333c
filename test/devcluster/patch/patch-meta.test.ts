import { describe, expect, it } from "vitest";
import {
  builtinPatchMeta,
  builtinPatchMetaKinds,
  childType,
  type TypeNode,
} from "../../../packages/capstan-dev/src/devcluster/patch/patch-meta.ts";
import { builtinResources } from "../../../packages/capstan-dev/src/devcluster/registry/builtins.ts";
import { fileFixture } from "../../support/file-fixture.ts";
import { startRawHttpCluster } from "../support/http.ts";

/** The node at a dotted path (`spec.template.spec.containers[].env`), `[]` stepping into list items. */
function at(root: TypeNode, path: string): TypeNode {
  let node = root;
  for (const part of path.split(".")) {
    const items = part.endsWith("[]");
    node = childType(node, items ? part.slice(0, -2) : part).type;
    if (items) {
      if (node.kind !== "list") throw new Error(`${part} is not a list`);
      node = node.elementType;
    }
  }
  return node;
}

/** `merge:<key>` / `merge` / `replace` for strategic merge, and the apply list type with its keys. */
function tags(node: TypeNode): string {
  if (node.kind !== "list") return node.kind === "map" && node.atomic ? "atomic-map" : node.kind;
  const smp = node.strategicMerge
    ? `merge${node.strategicMerge.mergeKey ? `:${node.strategicMerge.mergeKey}` : ""}`
    : "replace";
  return `${smp} ${node.listType}${node.keys ? `(${node.keys.join(",")})` : ""}`;
}

const pod = builtinPatchMeta("", "Pod")!;
const deployment = builtinPatchMeta("apps", "Deployment")!;

describe("built-in patch metadata (k8s.io/api struct tags)", () => {
  it("has a table for every built-in kind the devcluster serves", () => {
    const kinds = new Set(builtinPatchMetaKinds());
    const missing = builtinResources()
      .map((s) => `${s.group}/${s.kind}`)
      .filter((k) => !kinds.has(k));
    expect(missing).toEqual([]);
  });

  it("keys pod lists as the Go tags do", () => {
    expect(
      Object.fromEntries(
        [
          "spec.containers",
          "spec.initContainers",
          "spec.containers[].env",
          "spec.containers[].ports",
          "spec.containers[].volumeMounts",
          "spec.containers[].args",
          "spec.containers[].command",
          "spec.containers[].envFrom",
          "spec.volumes",
          "spec.imagePullSecrets",
          "spec.tolerations",
          "status.conditions",
          "status.hostIPs",
          "metadata.ownerReferences",
          "metadata.finalizers",
        ].map((p) => [p, tags(at(pod, p))]),
      ),
    ).toEqual({
      "spec.containers": "merge:name map(name)",
      "spec.initContainers": "merge:name map(name)",
      "spec.containers[].env": "merge:name map(name)",
      "spec.containers[].ports": "merge:containerPort map(containerPort,protocol)",
      "spec.containers[].volumeMounts": "merge:mountPath map(mountPath)",
      "spec.containers[].args": "replace atomic",
      "spec.containers[].command": "replace atomic",
      "spec.containers[].envFrom": "replace atomic",
      "spec.volumes": "merge:name map(name)",
      "spec.imagePullSecrets": "merge:name map(name)",
      "spec.tolerations": "replace atomic",
      "status.conditions": "merge:type map(type)",
      "status.hostIPs": "merge:ip atomic",
      "metadata.ownerReferences": "merge:uid map(uid)",
      "metadata.finalizers": "merge set",
    });
  });

  it("reaches pod templates through deployments, with an atomic label selector", () => {
    expect(tags(at(deployment, "spec.template.spec.containers[].env"))).toBe("merge:name map(name)");
    expect(tags(at(deployment, "spec.selector"))).toBe("atomic-map");
    expect(tags(at(builtinPatchMeta("", "Service")!, "spec.ports"))).toBe("merge:port map(port,protocol)");
    expect(tags(at(builtinPatchMeta("rbac.authorization.k8s.io", "ClusterRole")!, "rules"))).toBe("replace atomic");
    expect(tags(at(builtinPatchMeta("", "Node")!, "spec.taints"))).toBe("replace atomic");
  });

  it("keys the lists of the cluster-component kinds as their Go tags do", () => {
    const paths: [group: string, kind: string, path: string][] = [
      ["autoscaling", "HorizontalPodAutoscaler", "spec.metrics"],
      ["autoscaling", "HorizontalPodAutoscaler", "spec.behavior.scaleUp.policies"],
      ["autoscaling", "HorizontalPodAutoscaler", "spec.behavior.scaleDown.policies"],
      ["autoscaling", "HorizontalPodAutoscaler", "status.currentMetrics"],
      ["autoscaling", "HorizontalPodAutoscaler", "status.conditions"],
      ["certificates.k8s.io", "CertificateSigningRequest", "spec.usages"],
      ["certificates.k8s.io", "CertificateSigningRequest", "spec.groups"],
      ["certificates.k8s.io", "CertificateSigningRequest", "status.conditions"],
      ["storage.k8s.io", "CSINode", "spec.drivers"],
      ["storage.k8s.io", "CSINode", "spec.drivers[].topologyKeys"],
      ["storage.k8s.io", "CSIDriver", "spec.volumeLifecycleModes"],
      ["storage.k8s.io", "CSIDriver", "spec.tokenRequests"],
      ["admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "spec.validations"],
      ["admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "spec.matchConditions"],
      ["admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "spec.variables"],
      ["admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "status.conditions"],
      ["admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "spec.validationActions"],
      ["flowcontrol.apiserver.k8s.io", "FlowSchema", "spec.rules"],
      ["flowcontrol.apiserver.k8s.io", "FlowSchema", "status.conditions"],
      ["flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", "status.conditions"],
      ["apiregistration.k8s.io", "APIService", "status.conditions"],
      ["", "ComponentStatus", "conditions"],
      ["", "PodTemplate", "template.spec.containers"],
      ["node.k8s.io", "RuntimeClass", "scheduling.tolerations"],
    ];
    expect(Object.fromEntries(paths.map(([g, k, p]) => [`${k} ${p}`, tags(at(builtinPatchMeta(g, k)!, p))]))).toEqual({
      "HorizontalPodAutoscaler spec.metrics": "replace atomic",
      "HorizontalPodAutoscaler spec.behavior.scaleUp.policies": "replace atomic",
      "HorizontalPodAutoscaler spec.behavior.scaleDown.policies": "replace atomic",
      "HorizontalPodAutoscaler status.currentMetrics": "replace atomic",
      "HorizontalPodAutoscaler status.conditions": "merge:type map(type)",
      "CertificateSigningRequest spec.usages": "replace atomic",
      "CertificateSigningRequest spec.groups": "replace atomic",
      // `+listType=map +listMapKey=type` without a patchStrategy: apply keys them, strategic merge replaces.
      "CertificateSigningRequest status.conditions": "replace map(type)",
      "CSINode spec.drivers": "merge:name map(name)",
      "CSINode spec.drivers[].topologyKeys": "replace atomic",
      "CSIDriver spec.volumeLifecycleModes": "replace set",
      "CSIDriver spec.tokenRequests": "replace atomic",
      "ValidatingAdmissionPolicy spec.validations": "replace atomic",
      "ValidatingAdmissionPolicy spec.matchConditions": "merge:name map(name)",
      "ValidatingAdmissionPolicy spec.variables": "merge:name map(name)",
      "ValidatingAdmissionPolicy status.conditions": "replace map(type)",
      "ValidatingAdmissionPolicyBinding spec.validationActions": "replace set",
      "FlowSchema spec.rules": "replace atomic",
      "FlowSchema status.conditions": "merge:type map(type)",
      "PriorityLevelConfiguration status.conditions": "merge:type map(type)",
      "APIService status.conditions": "merge:type map(type)",
      "ComponentStatus conditions": "merge:type map(type)",
      "PodTemplate template.spec.containers": "merge:name map(name)",
      "RuntimeClass scheduling.tolerations": "replace atomic",
    });
  });

  it("makes the +structType=atomic and +mapType=atomic fields of those kinds atomic for apply", () => {
    const vap = builtinPatchMeta("admissionregistration.k8s.io", "ValidatingAdmissionPolicy")!;
    const binding = builtinPatchMeta("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding")!;
    expect(
      [
        at(vap, "spec.matchConstraints"),
        at(vap, "spec.paramKind"),
        at(vap, "spec.variables[]"),
        at(binding, "spec.matchResources"),
        at(binding, "spec.paramRef"),
        at(builtinPatchMeta("node.k8s.io", "RuntimeClass")!, "scheduling.nodeSelector"),
        at(builtinPatchMeta("storage.k8s.io", "CSIStorageCapacity")!, "nodeTopology"),
        at(
          builtinPatchMeta("storage.k8s.io", "VolumeAttachment")!,
          "spec.source.inlineVolumeSpec.nodeAffinity.required",
        ),
      ].map(tags),
    ).toEqual(Array(8).fill("atomic-map"));
  });

  it("has no table for custom resources", () => {
    expect(builtinPatchMeta("example.com", "Widget")).toBeUndefined();
  });
});

describe("strategic merge of the cluster-component kinds' keyed lists over HTTP", () => {
  const t = fileFixture(() => startRawHttpCluster());
  const SMP = "application/strategic-merge-patch+json";

  it("merges a CSINode's drivers by name", async () => {
    const path = "/apis/storage.k8s.io/v1/csinodes";
    const created = await t.request("POST", path, {
      body: {
        metadata: { name: "smp-node" },
        spec: { drivers: [{ name: "ebs.csi.aws.com", nodeID: "i-1", topologyKeys: ["zone", "region"] }] },
      },
    });
    expect(created.status).toBe(201);
    const patched = await t.request("PATCH", `${path}/smp-node`, {
      contentType: SMP,
      body: {
        spec: {
          drivers: [
            { name: "efs.csi.aws.com", nodeID: "i-1" },
            { name: "ebs.csi.aws.com", topologyKeys: ["zone"] },
          ],
        },
      },
    });
    expect(patched.status).toBe(200);
    expect((patched.body as { spec: unknown }).spec).toEqual({
      drivers: [
        { name: "efs.csi.aws.com", nodeID: "i-1" },
        { name: "ebs.csi.aws.com", nodeID: "i-1", topologyKeys: ["zone"] },
      ],
    });
  });

  it("merges an HPA's status conditions by type and replaces its metrics", async () => {
    const path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    const cpu = (n: number) => ({
      type: "Resource",
      resource: { name: "cpu", target: { type: "Utilization", averageUtilization: n } },
    });
    const memory = {
      type: "Resource",
      resource: { name: "memory", target: { type: "Utilization", averageUtilization: 70 } },
    };
    const created = await t.request("POST", path, {
      body: {
        metadata: { name: "smp-hpa" },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
          maxReplicas: 3,
          metrics: [cpu(50), memory],
        },
      },
    });
    expect(created.status).toBe(201);
    const condition = (type: string, status: string) => ({
      type,
      status,
      lastTransitionTime: "2026-01-01T00:00:00Z",
      reason: "R",
    });
    const status = await t.request("PATCH", `${path}/smp-hpa/status`, {
      contentType: SMP,
      body: { status: { conditions: [condition("AbleToScale", "True"), condition("ScalingActive", "False")] } },
    });
    expect(status.status).toBe(200);
    const merged = await t.request("PATCH", `${path}/smp-hpa/status`, {
      contentType: SMP,
      body: { status: { conditions: [condition("ScalingActive", "True")] } },
    });
    expect(merged.status).toBe(200);
    expect(
      (merged.body as { status: { conditions: { type: string; status: string }[] } }).status.conditions.map(
        (c) => `${c.type}=${c.status}`,
      ),
    ).toEqual(["AbleToScale=True", "ScalingActive=True"]);

    const spec = await t.request("PATCH", `${path}/smp-hpa`, {
      contentType: SMP,
      body: { spec: { metrics: [cpu(60)] } },
    });
    expect(spec.status).toBe(200);
    expect((spec.body as { spec: { metrics: unknown[] } }).spec.metrics).toEqual([cpu(60)]);
  });
});
