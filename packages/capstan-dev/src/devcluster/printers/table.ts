/**
 * Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what `kubectl get` asks
 * for, converted as kube-apiserver converts it: the kind's printer (built-in column sets, or a
 * CRD version's additionalPrinterColumns, or the default NAME / CREATED AT convertor — see
 * table-printers.ts), one row per object, and each row's `object` as `includeObject` asks
 * (`None`, `Metadata` = PartialObjectMetadata — the server's default —, or `Object`).
 *
 * Guarantees: the Table's shape is meta.k8s.io/v1's (columnDefinitions with every field present,
 * rows with cells in column order, list metadata carried over); the server always renders the wide
 * set of columns, kubectl hides those with priority > 0 unless `-o wide`.
 *
 * Caveats: a CRD column whose JSONPath does not parse makes the resource fall back to the default
 * convertor, as the apiextensions server does (it also logs; we do not).
 */
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { clusterKindPrinter } from "./cluster-printers.ts";
import { builtinPrinter, customResourcePrinter, defaultPrinter, type TablePrinter } from "./table-printers.ts";

export { humanDuration } from "./human-duration.ts";

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

/** Printers of custom resources, per descriptor (rebuilt when a CRD update registers a new one). */
const customPrinters = new WeakMap<ServedResource, TablePrinter>();

/** The printer for a served resource. */
export function printerFor(served: ServedResource): TablePrinter {
  if (!served.custom)
    return clusterKindPrinter(served.group, served.plural) ?? builtinPrinter(served.group, served.plural);
  let printer = customPrinters.get(served);
  if (!printer) {
    try {
      printer = customResourcePrinter(served.printerColumns);
    } catch {
      printer = defaultPrinter;
    }
    customPrinters.set(served, printer);
  }
  return printer;
}

/**
 * Converts objects of one served resource to a meta.k8s.io Table. `listMeta` is the list's metadata
 * for a list; for a single object (GET or watch event) pass `{}` and the object's resourceVersion is used.
 */
export function toTable(
  served: ServedResource,
  objects: JsonObject[],
  listMeta: ListMetaLike,
  options: TableOptions,
  now: Date = new Date(),
): JsonObject {
  const printer = printerFor(served);
  const at = now.getTime();
  const rows = objects.map((obj) => {
    const row: Record<string, unknown> = { cells: printer.cells(obj, at) };
    const conditions = printer.conditions?.(obj);
    if (conditions) row["conditions"] = conditions;
    if (options.includeObject === "Object") row["object"] = obj;
    else if (options.includeObject === "Metadata") {
      // asTable: the partial object takes the group-version of the Table the client asked for.
      row["object"] = { kind: "PartialObjectMetadata", apiVersion: options.apiVersion, metadata: obj.metadata ?? {} };
    } else {
      // An empty RawExtension marshals as null (omitempty does not drop structs in Go).
      row["object"] = null;
    }
    return row;
  });
  const metadata: Record<string, unknown> = {};
  if (listMeta.resourceVersion !== undefined) metadata["resourceVersion"] = listMeta.resourceVersion;
  else if (objects.length === 1) {
    // A single object (GET, watch event): the convertors take the object's own resourceVersion.
    const rv = (objects[0]?.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
    if (typeof rv === "string") metadata["resourceVersion"] = rv;
  }
  if (listMeta.continue) metadata["continue"] = listMeta.continue;
  if (listMeta.remainingItemCount !== undefined) metadata["remainingItemCount"] = listMeta.remainingItemCount;
  const table: JsonObject = { kind: "Table", apiVersion: options.apiVersion, metadata };
  // Without headers the convertors leave ColumnDefinitions nil, which Go serializes as null.
  table["columnDefinitions"] = options.noHeaders ? null : printer.columns.map((c) => ({ ...c }));
  table["rows"] = rows;
  return table;
}
