/**
 * componentstatuses (v1, deprecated since 1.19 but served by 1.32): computed on every read from the
 * health of the components kube-apiserver probes. The devcluster's scheduler and controllers run in
 * the server process and its storage is in memory or on disk, so all three answer healthy, with the
 * `ok` message of a real cluster's `kubectl get componentstatuses`.
 */
import { served } from "./builtin-descriptor.ts";
import type { JsonObject, ServedResource } from "./served-resource.ts";

const COMPONENTS = ["scheduler", "controller-manager", "etcd-0"];

function componentStatus(name: string): JsonObject {
  return {
    kind: "ComponentStatus",
    apiVersion: "v1",
    // A computed object: no uid, resourceVersion or (Go's zero time) creation timestamp.
    metadata: { name, creationTimestamp: null },
    conditions: [{ type: "Healthy", status: "True", message: "ok" }],
  };
}

export function componentStatuses(): ServedResource {
  return served({
    group: "",
    version: "v1",
    kind: "ComponentStatus",
    plural: "componentstatuses",
    namespaced: false,
    shortNames: ["cs"],
    verbs: ["get", "list"],
    computed: () => COMPONENTS.map(componentStatus),
  });
}
