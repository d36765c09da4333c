/**
 * The `default/kubernetes` Service, as kube-apiserver's bootstrap controller keeps it
 * (pkg/controlplane/controller): every cluster has it, at the first address of the service range, its
 * `https` port 443 pointing at the API server's port. In-cluster clients and `kubectl get svc` expect it.
 *
 * Caveats: created once at start (and its target port corrected after a persistent restart on another
 * port); no `kubernetes` Endpoints or EndpointSlice (the kinds are served as stored objects, but nothing
 * here writes them as the endpoint reconciler does).
 */
import { writingAs } from "../apply/write-tracking.ts";
import type { InProcessApi } from "../in-process-api.ts";
import { KUBERNETES_SERVICE_IP } from "../registry/builtins.ts";

const SERVICES = { group: "", version: "v1", plural: "services" };

/** Creates `default/kubernetes` pointing at `port`, or corrects its target port. */
export async function ensureKubernetesService(api: InProcessApi, port: number): Promise<void> {
  const ports = [{ name: "https", port: 443, protocol: "TCP", targetPort: port }];
  const current = api.tryGet(SERVICES, "default", "kubernetes");
  await writingAs("kube-apiserver", async () => {
    if (!current) {
      await api.create(SERVICES, "default", {
        metadata: { name: "kubernetes", labels: { component: "apiserver", provider: "kubernetes" } },
        spec: { type: "ClusterIP", clusterIP: KUBERNETES_SERVICE_IP, sessionAffinity: "None", ports },
      });
      return;
    }
    const spec = (current["spec"] ?? {}) as { ports?: { targetPort?: unknown }[] };
    if (spec.ports?.[0]?.targetPort !== port) {
      await api.update(SERVICES, "default", "kubernetes", { ...current, spec: { ...spec, ports } });
    }
  });
}

/** The cluster IPs of every stored Service (what the allocator must not hand out again). */
export function serviceClusterIps(api: InProcessApi): string[] {
  const ips: string[] = [];
  for (const svc of api.list(SERVICES).items) {
    const spec = (svc["spec"] ?? {}) as { clusterIP?: unknown; clusterIPs?: unknown };
    if (Array.isArray(spec.clusterIPs)) {
      for (const ip of spec.clusterIPs) if (typeof ip === "string") ips.push(ip);
    } else if (typeof spec.clusterIP === "string") ips.push(spec.clusterIP);
  }
  return ips;
}

/** The node ports and health-check node ports of every stored Service. */
export function serviceNodePorts(api: InProcessApi): number[] {
  const ports: number[] = [];
  for (const svc of api.list(SERVICES).items) {
    const spec = (svc["spec"] ?? {}) as { ports?: unknown; healthCheckNodePort?: unknown };
    if (Array.isArray(spec.ports)) {
      for (const p of spec.ports) {
        const nodePort = (p as { nodePort?: unknown } | null)?.nodePort;
        if (typeof nodePort === "number" && nodePort !== 0) ports.push(nodePort);
      }
    }
    if (typeof spec.healthCheckNodePort === "number" && spec.healthCheckNodePort !== 0)
      ports.push(spec.healthCheckNodePort);
  }
  return ports;
}
