/**
 * Whether pods run on an existing cluster, asked of the cluster itself: a pod runs once the scheduler
 * has bound it to a Node whose kubelet starts its containers, and the scheduler binds pods only to
 * Nodes that are Ready and schedulable (its NodeUnschedulable filter and the node lifecycle
 * controller's `not-ready` taint). So pods can run when at least one Node has the condition
 * `Ready=True` and no `spec.unschedulable`; a cluster with no such Node (a control plane alone, every
 * Node cordoned or down) leaves them Pending.
 *
 * ## Caveats
 * - Taints other than cordoning are not weighed: a Node tainted for other workloads counts as
 *   running pods, though a pod without the matching toleration would stay Pending.
 * - A user who may not list Nodes cannot tell: counted as not running pods, with the reason saying
 *   so, rather than guessed.
 */
import { isForbidden, type KubeClient } from "capstan";

interface NodeList {
  items?: {
    metadata?: { name?: string };
    spec?: { unschedulable?: boolean };
    status?: { conditions?: { type: string; status: string }[] };
  }[];
}

/** What the Nodes say: whether pods run, and why not when they do not. */
export interface RunningPodsFact {
  runningPods: boolean;
  runningPodsReason?: string;
}

/** Lists the Nodes and tells whether one is Ready and schedulable. */
export async function detectRunningPods(client: KubeClient): Promise<RunningPodsFact> {
  let list: NodeList;
  try {
    list = await client.request<NodeList>("GET", "/api/v1/nodes");
  } catch (err) {
    if (!isForbidden(err)) throw err;
    return {
      runningPods: false,
      runningPodsReason: `whether pods run cannot be told, as the kubeconfig's user may not list Nodes (${(err as Error).message})`,
    };
  }
  const nodes = list.items ?? [];
  const states = nodes.map((node) => {
    const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
    const state = !ready ? "not Ready" : node.spec?.unschedulable === true ? "cordoned" : "ready";
    return { name: node.metadata?.name ?? "", state };
  });
  if (states.some((s) => s.state === "ready")) return { runningPods: true };
  return {
    runningPods: false,
    runningPodsReason:
      nodes.length === 0
        ? "the cluster has no Node, so pods stay Pending"
        : `no Node is Ready and schedulable (${states.map((s) => `${s.name} ${s.state}`).join(", ")}), so pods stay Pending`,
  };
}
