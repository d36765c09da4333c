/**
 * The order discovery lists API groups in, as kube-apiserver's aggregator lists them: its own group
 * first, then groups by
 * priority, highest first (the built-in groups' APIService priorities, cmd/kube-apiserver's and
 * pkg/controlplane/apiserver's apiVersionPriorities; CRD groups get 1000, crdregistration), ties broken
 * by the APIService name `version.group` (apiregistration's SortedByGroupAndVersion).
 */

/** GroupPriorityMinimum of the built-in groups a 1.32 server serves. */
const GROUP_PRIORITY: Record<string, number> = {
  "": 18000,
  apps: 17800,
  "events.k8s.io": 17750,
  "authentication.k8s.io": 17700,
  "authorization.k8s.io": 17600,
  autoscaling: 17500,
  batch: 17400,
  "certificates.k8s.io": 17300,
  "networking.k8s.io": 17200,
  policy: 17100,
  "rbac.authorization.k8s.io": 17000,
  "storage.k8s.io": 16800,
  "apiextensions.k8s.io": 16700,
  "admissionregistration.k8s.io": 16700,
  "scheduling.k8s.io": 16600,
  "coordination.k8s.io": 16500,
  "node.k8s.io": 16300,
  "discovery.k8s.io": 16200,
  "flowcontrol.apiserver.k8s.io": 16100,
};

/** The aggregator lists its own group before every APIService's (apisHandler: "It's good to be king"). */
const AGGREGATOR_GROUP = "apiregistration.k8s.io";

/** The priority the CRD registration controller gives a custom resource group's APIServices. */
const CRD_GROUP_PRIORITY = 1000;

/** The groups in discovery order; `versionsOf` gives each group's served versions. */
export function orderGroups(groups: string[], versionsOf: (group: string) => string[]): string[] {
  const key = (group: string) => {
    // The group's first APIService in name order stands for it among equals.
    const names = versionsOf(group).map((v) => `${v}.${group}`);
    names.sort();
    const priority =
      group === AGGREGATOR_GROUP ? Number.POSITIVE_INFINITY : (GROUP_PRIORITY[group] ?? CRD_GROUP_PRIORITY);
    return { priority, name: names[0] ?? group };
  };
  return [...groups]
    .map((group) => ({ group, ...key(group) }))
    .sort((a, b) =>
      a.priority !== b.priority ? (a.priority > b.priority ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )
    .map((g) => g.group);
}
