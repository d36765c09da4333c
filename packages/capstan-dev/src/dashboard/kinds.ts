/**
 * The kinds the dashboard shows: every custom resource the cluster serves (read from its
 * CustomResourceDefinitions) and a few built-in kinds operators usually own or read.
 */
import type { KubeObject, ResourceKind } from "capstan";
import {
  ConfigMap,
  CustomResourceDefinition as CustomResourceDefinitionKind,
  Deployment,
  Event,
  Pod,
  ReplicaSet,
  Secret,
  Service,
} from "capstan/core";

/** A printer column as a CRD declares it (`additionalPrinterColumns[]`). */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** A kind as the dashboard lists it. */
export interface DashboardKind extends ResourceKind {
  /** `<group or "core">/<version>/<plural>`: how routes and the page name the kind. */
  readonly id: string;
  /** Columns shown after namespace, name and age. */
  readonly columns: readonly PrinterColumn[];
  /** Built-in (true) or from a CRD (false). */
  readonly builtin: boolean;
  /**
   * Fetch only metadata (`PartialObjectMetadata`): for Secrets, whose data the dashboard must never
   * read, let alone show.
   */
  readonly metadataOnly: boolean;
}

/** The identifier of a kind in routes. */
export function kindId(kind: Pick<ResourceKind, "group" | "version" | "plural">): string {
  return `${kind.group === "" ? "core" : kind.group}/${kind.version}/${kind.plural}`;
}

function builtin(of: ResourceKind, columns: PrinterColumn[], metadataOnly = false): DashboardKind {
  const k = { group: of.group, version: of.version, kind: of.kind, plural: of.plural, namespaced: of.namespaced };
  return { ...k, id: kindId(k), columns, builtin: true, metadataOnly };
}

const col = (name: string, jsonPath: string, type = "string"): PrinterColumn => ({ name, type, jsonPath });

/**
 * The built-in kinds operators most often own or read. Their columns are a few of what
 * `kubectl get` shows for them (the API server's table printers are not served as CRD-style
 * columns, so they are written down here).
 */
export const BUILTIN_KINDS: readonly DashboardKind[] = [
  builtin(Pod, [col("Phase", ".status.phase"), col("Node", ".spec.nodeName")]),
  builtin(ConfigMap, []),
  // Names only: fetched as metadata, so the data never reaches this process.
  builtin(Secret, [], true),
  builtin(Service, [col("Type", ".spec.type"), col("Cluster-IP", ".spec.clusterIP")]),
  builtin(Deployment, [col("Replicas", ".spec.replicas", "integer"), col("Ready", ".status.readyReplicas", "integer")]),
  // Not an operator's usual child, but the link between a Deployment and its Pods: without it the
  // detail of a Deployment would show no children.
  builtin(ReplicaSet, [col("Desired", ".spec.replicas", "integer"), col("Ready", ".status.readyReplicas", "integer")]),
  builtin(Event, [
    col("Type", ".type"),
    col("Reason", ".reason"),
    col("Object", ".involvedObject.name"),
    col("Message", ".message"),
  ]),
];

/** The Event kind among {@link BUILTIN_KINDS}: the source of every object's events. */
export const EVENT_KIND_ID = "core/v1/events";

/** CustomResourceDefinitions, watched to learn which custom kinds the cluster serves. */
export const CRD_KIND: ResourceKind<CustomResourceDefinition> = CustomResourceDefinitionKind;

/** The fields of a CRD the dashboard reads. */
export interface CustomResourceDefinition extends KubeObject {
  spec?: {
    group?: string;
    names?: { kind?: string; plural?: string };
    scope?: string;
    versions?: {
      name?: string;
      served?: boolean;
      storage?: boolean;
      additionalPrinterColumns?: PrinterColumn[];
    }[];
  };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/**
 * The kind a CRD serves, once it is Established: its storage version when served (the version
 * objects are written in), else its first served version. `undefined` while it is not established
 * or serves no version (listing it would only fail with 404).
 */
export function kindFromCrd(crd: CustomResourceDefinition): DashboardKind | undefined {
  const spec = crd.spec;
  const established = crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
  if (!established || !spec?.group || !spec.names?.kind || !spec.names.plural) return undefined;
  const served = (spec.versions ?? []).filter((v) => v.served && v.name);
  const version = served.find((v) => v.storage) ?? served[0];
  if (version?.name === undefined) return undefined;
  const k = {
    group: spec.group,
    version: version.name,
    kind: spec.names.kind,
    plural: spec.names.plural,
    namespaced: spec.scope !== "Cluster",
  };
  // The table always shows an Age column of its own (kept fresh by the page): a CRD column of the
  // same creationTimestamp would show a second AGE, refreshed only when the object changes.
  const columns = (version.additionalPrinterColumns ?? []).filter((c) => !isCreationTimestamp(c.jsonPath));
  return { ...k, id: kindId(k), columns, builtin: false, metadataOnly: false };
}

function isCreationTimestamp(jsonPath: string): boolean {
  return /^\{?\.metadata\.creationTimestamp\}?$/.test(jsonPath.trim());
}
