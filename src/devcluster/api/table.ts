/**
 * Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what `kubectl get` asks for.
 * This is the minimal default: a NAME and an AGE column, as the real server's default table convertor
 * and CRD convertor give for kinds without printer columns. The devcluster-kubectl engineer extends it
 * with per-kind columns and CRD additionalPrinterColumns.
 */
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";

/** `includeObject` of TableOptions: what each row carries besides its cells. */
export type IncludeObject = "None" | "Metadata" | "Object";

export interface TableOptions {
  includeObject: IncludeObject;
  /** `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`, as the Accept header asked. */
  apiVersion: string;
  /** Omit columnDefinitions (watch events after the first, or `?noHeaders` style requests). */
  noHeaders?: boolean;
}

export interface ListMetaLike {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** Converts objects of one served resource to a meta.k8s.io Table. */
export function toTable(
  served: ServedResource,
  objects: JsonObject[],
  listMeta: ListMetaLike,
  options: TableOptions,
  now: Date = new Date(),
): JsonObject {
  const columnDefinitions = options.noHeaders
    ? []
    : [
        {
          name: "Name",
          type: "string",
          format: "name",
          description:
            "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
          priority: 0,
        },
        {
          name: "Age",
          type: "date",
          format: "",
          description:
            "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
          priority: 0,
        },
      ];
  const rows = objects.map((obj) => {
    const meta = (obj.metadata ?? {}) as Record<string, unknown>;
    const created = typeof meta["creationTimestamp"] === "string" ? Date.parse(meta["creationTimestamp"]) : Number.NaN;
    const row: Record<string, unknown> = {
      cells: [meta["name"] ?? "", Number.isNaN(created) ? "<unknown>" : humanDuration(now.getTime() - created)],
    };
    if (options.includeObject === "Object") row["object"] = obj;
    else if (options.includeObject === "Metadata") {
      row["object"] = { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: meta };
    }
    return row;
  });
  const metadata: Record<string, unknown> = {};
  if (listMeta.resourceVersion !== undefined) metadata["resourceVersion"] = listMeta.resourceVersion;
  if (listMeta.continue) metadata["continue"] = listMeta.continue;
  if (listMeta.remainingItemCount !== undefined) metadata["remainingItemCount"] = listMeta.remainingItemCount;
  void served;
  return { kind: "Table", apiVersion: options.apiVersion, metadata, columnDefinitions, rows };
}

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration: `5s`, `3m20s`, `2h`, `4d`... */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}
