/**
 * Requests for a computed resource (ServedResource.computed: componentstatuses): its REST storage
 * implements only get and list, so go-restful has no route for the other methods (405), and a watch,
 * which the list route takes, answers MethodNotSupported as the list handler does for a storage that is
 * no Watcher.
 */
import { ApiError, badRequest, methodNotSupported, notFound, routeNotAllowed } from "../machinery/status.ts";
import { toTable } from "../printers/table.ts";
import { gr, groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import { type RequestContext, writeJson } from "../request/pipeline.ts";
import { compileFieldSelector, matchesFields, parseFieldSelector } from "../rest/field-selector.ts";
import { matchesLabels, parseLabelSelector } from "../rest/label-selector.ts";
import { negotiate } from "./negotiation.ts";

function includeObjectOf(query: URLSearchParams): "None" | "Metadata" | "Object" {
  const value = query.get("includeObject");
  return value === "None" || value === "Object" ? value : "Metadata";
}

/** Serves a get or list of a computed resource; every other verb is refused as the real server refuses it. */
export function serveComputed(ctx: RequestContext, served: ServedResource, compute: () => JsonObject[]): void {
  const { info, url } = ctx;
  if (info.subresource !== "") throw routeNotAllowed();
  const shape = negotiate(ctx.req.headers.accept);
  const includeObject = includeObjectOf(url.searchParams);
  if (info.verb === "get") {
    const found = compute().find((o) => o.metadata?.["name"] === info.name);
    if (!found) throw notFound(gr(served), info.name);
    const body =
      shape.as === "Table" ? toTable(served, [found], {}, { includeObject, apiVersion: shape.apiVersion }) : found;
    writeJson(ctx.res, 200, JSON.stringify(body));
    return;
  }
  if (info.verb === "watch") throw methodNotSupported(gr(served), "watch");
  if (info.verb !== "list") throw routeNotAllowed();
  let labels: ReturnType<typeof parseLabelSelector>;
  let fields: ReturnType<typeof compileFieldSelector>;
  try {
    labels = parseLabelSelector(url.searchParams.get("labelSelector") ?? "");
    fields = compileFieldSelector(served, parseFieldSelector(url.searchParams.get("fieldSelector") ?? ""));
  } catch (err) {
    throw err instanceof ApiError ? err : badRequest(err instanceof Error ? err.message : String(err));
  }
  const items = compute().filter(
    (o) =>
      matchesLabels(labels, o.metadata?.["labels"] as Record<string, string> | undefined) && matchesFields(fields, o),
  );
  const body =
    shape.as === "Table"
      ? toTable(served, items, {}, { includeObject, apiVersion: shape.apiVersion })
      : { kind: served.listKind, apiVersion: groupVersion(served), metadata: {}, items };
  writeJson(ctx.res, 200, JSON.stringify(body));
}
