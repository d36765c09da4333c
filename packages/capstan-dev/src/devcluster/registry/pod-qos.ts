/**
 * A pod's QoS class (k8s.io/kubernetes pkg/apis/core/helper/qos ComputePodQOS), which the pod
 * strategy's PrepareForCreate writes to `status.qosClass` and the kubelet reports again.
 *
 * Only cpu and memory count, and a zero quantity counts as none. Guaranteed: every container limits
 * both and requests (defaulted to the limits on a pod) equal them; BestEffort: nothing requests or
 * limits either; Burstable otherwise.
 *
 * Caveat: quantities are compared per container as written ("1" and "1000m" differ), where Go sums
 * and compares them as numbers; pod-level resources (alpha in 1.32) are not read.
 */

/** A container's resources, as the QoS computation reads them. */
export interface QosContainer {
  name?: string;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}

const QOS_RESOURCES = ["cpu", "memory"] as const;

/** A quantity Go's `Cmp(zero) == 1` would find positive: set, and not a spelling of zero (`0`, `0m`, `0.0Gi`). */
function positive(quantity: unknown): quantity is string | number {
  if (typeof quantity === "number") return quantity > 0;
  return typeof quantity === "string" && quantity !== "" && !/^[+]?0*(\.0*)?([a-zA-Z]+|[eE][+-]?\d+)?$/.test(quantity);
}

/** The QoS class of a pod spec's containers and init containers. */
export function qosClassOf(spec: { containers?: QosContainer[]; initContainers?: QosContainer[] }): string {
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    for (const resource of QOS_RESOURCES) {
      const limit = limits[resource];
      const request = requests[resource];
      if (positive(limit) || positive(request)) any = true;
      if (!positive(limit)) guaranteed = false;
      else if (positive(request) && request !== limit) guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}
