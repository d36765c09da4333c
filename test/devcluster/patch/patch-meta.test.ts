import { describe, expect, it } from "vitest";
import {
  builtinPatchMeta,
  builtinPatchMetaKinds,
  childType,
  type TypeNode,
} from "../../../packages/capstan-dev/src/devcluster/patch/patch-meta.ts";
import { builtinResources } from "../../../packages/capstan-dev/src/devcluster/registry/builtins.ts";

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

  it("has no table for custom resources", () => {
    expect(builtinPatchMeta("example.com", "Widget")).toBeUndefined();
  });
});
