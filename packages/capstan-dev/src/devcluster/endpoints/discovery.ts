/**
 * Legacy discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`),
 * computed from the registry at request time so that CRDs appear and disappear with it.
 */
import type { ResourceRegistry } from "../registry/registry.ts";
import { groupVersion, type ServedResource } from "../registry/served-resource.ts";
import { orderGroups } from "./discovery-order.ts";

/** `/api`: the core group's versions. */
export function apiVersions(serverAddress: string): object {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

interface GroupVersionRef {
  groupVersion: string;
  version: string;
}

function groupOf(
  registry: ResourceRegistry,
  group: string,
): { name: string; versions: GroupVersionRef[]; preferredVersion: GroupVersionRef } | undefined {
  const versions: string[] = [];
  for (const served of registry.all()) {
    if (served.group === group && !versions.includes(served.version)) versions.push(served.version);
  }
  if (versions.length === 0) return undefined;
  versions.sort(compareKubeVersions);
  const refs = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: refs, preferredVersion: refs[0]! };
}

/** `/apis`: every named group with its versions, preferred first, groups in the aggregator's order. */
export function apiGroupList(registry: ResourceRegistry): object {
  const names: string[] = [];
  for (const served of registry.all())
    if (served.group !== "" && !names.includes(served.group)) names.push(served.group);
  const versionsOf = (group: string) => [
    ...new Set(registry.all().flatMap((s) => (s.group === group ? [s.version] : []))),
  ];
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: orderGroups(names, versionsOf)
      .map((n) => groupOf(registry, n))
      .filter((g) => g !== undefined),
  };
}

/** `/apis/{group}`, or undefined when the group is not served. */
export function apiGroup(registry: ResourceRegistry, group: string): object | undefined {
  const g = groupOf(registry, group);
  return g ? { kind: "APIGroup", apiVersion: "v1", ...g } : undefined;
}

/**
 * `/api/v1` or `/apis/{group}/{version}`, or undefined when nothing is served there. A built-in group
 * version lists its resources and subresources in path order (the API installer sorts the storage
 * paths); a custom resource group keeps registration order, each resource then its status and scale.
 */
export function apiResourceList(registry: ResourceRegistry, group: string, version: string): object | undefined {
  const served = registry.inGroupVersion(group, version);
  if (served.length === 0) return undefined;
  const resources = resourceEntries(served);
  if (served.every((s) => !s.custom)) resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: groupVersion({ group, version }), resources };
}

/** A discovery APIResource; the name is what the installer sorts by. */
type ResourceEntry = { name: string } & Record<string, unknown>;

function resourceEntries(served: ServedResource[]): ResourceEntry[] {
  const resources: ResourceEntry[] = [];
  for (const s of served) {
    resources.push(resourceEntry(s));
    if (s.subresources.approval) {
      resources.push({
        name: `${s.plural}/approval`,
        singularName: "",
        namespaced: s.namespaced,
        kind: s.kind,
        verbs: ["get", "patch", "update"],
      });
    }
    if (s.subresources.status) {
      resources.push({
        name: `${s.plural}/status`,
        singularName: "",
        namespaced: s.namespaced,
        kind: s.kind,
        verbs: ["get", "patch", "update"],
      });
    }
    if (s.subresources.scale) {
      resources.push({
        name: `${s.plural}/scale`,
        singularName: "",
        namespaced: s.namespaced,
        group: "autoscaling",
        version: "v1",
        kind: "Scale",
        verbs: ["get", "patch", "update"],
      });
    }
    // The log subresource the pod-logs endpoint serves (get only, a Pod's kind as the real entry says).
    if (s.group === "" && s.plural === "pods") {
      resources.push({ name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] });
    }
    if (s.group === "" && s.plural === "namespaces") {
      resources.push({
        name: "namespaces/finalize",
        singularName: "",
        namespaced: false,
        kind: "Namespace",
        verbs: ["update"],
      });
    }
  }
  return resources;
}

function resourceEntry(s: ServedResource): ResourceEntry {
  const entry: ResourceEntry = {
    name: s.plural,
    singularName: s.singular,
    namespaced: s.namespaced,
    kind: s.kind,
    verbs: s.verbs,
  };
  if (s.shortNames.length > 0) entry["shortNames"] = s.shortNames;
  if (s.categories.length > 0) entry["categories"] = s.categories;
  return entry;
}

/**
 * Kubernetes version priority (apimachinery/pkg/version.CompareKubeAwareVersionStrings): GA before beta
 * before alpha, higher numbers first, non-Kubernetes-looking versions last in lexical order.
 */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const stability = m[2] === undefined ? 3 : m[2] === "beta" ? 2 : 1;
    return { major: Number(m[1]), stability, minor: m[3] === undefined ? 0 : Number(m[3]) };
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa && !pb) return -1;
  if (!pa && pb) return 1;
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  if (pa.stability !== pb.stability) return pb.stability - pa.stability;
  if (pa.major !== pb.major) return pb.major - pa.major;
  return pb.minor - pa.minor;
}

/** `/version`: what kubectl compares its own version to. */
export function versionInfo(): object {
  return {
    major: "1",
    minor: "32",
    gitVersion: "v1.32.0-capstan",
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2026-01-01T00:00:00Z",
    goVersion: `node${process.versions.node}`,
    compiler: "capstan",
    platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
  };
}
