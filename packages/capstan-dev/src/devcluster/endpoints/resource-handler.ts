/**
 * The HTTP side of resource requests: decodes the URL and body into an ObjectStore call and encodes
 * its answer (JSON or Table, status codes as k8s.io/apiserver/pkg/endpoints/handlers give them).
 */
import type { ServerResponse } from "node:http";
import { managerOrUserAgent } from "../apply/field-manager.ts";
import { applyCreate, checkWriteFieldManager } from "../apply/patch-types.ts";
import { parentAfterScale, scaleForWrite, trackScaleUpdate } from "../apply/scale-fields.ts";
import {
  ApiError,
  badRequest,
  failure,
  methodNotSupported,
  notFound,
  resourceNotServed,
  routeNotAllowed,
} from "../machinery/status.ts";
import { toTable } from "../printers/table.ts";
import type { ResourceRegistry } from "../registry/registry.ts";
import { scaleOf } from "../registry/scale.ts";
import { gr, groupVersion, type JsonObject, type Requester, type ServedResource } from "../registry/served-resource.ts";
import { pageNotFound } from "../request/page-not-found.ts";
import { type RequestContext, writeJson } from "../request/pipeline.ts";
import { queryBool } from "../request/query-params.ts";
import { WarningRecorder } from "../request/warning-recorder.ts";
import { waitForRevision } from "../rest/freshness.ts";
import type { ObjectStore } from "../rest/object-store.ts";
import type { PatchTypes } from "../rest/patchers.ts";
import { checkPathSegmentName } from "../rest/path-segment-name.ts";
import type { DeleteOptions, FieldValidation, ListQuery, WriteOptions, WriteTarget } from "../rest/types.ts";
import { decodeObject, mediaType, readBody } from "../serializer/body.ts";
import { serveComputed } from "./computed-resource.ts";
import { listItemJson, listItemObject } from "./list-items.ts";
import { negotiate, type ResponseShape } from "./negotiation.ts";
import { partialObjectMetadata, partialObjectMetadataList } from "./partial-metadata.ts";
import { servePodLog } from "./pod-logs.ts";
import { parseWatchResourceVersion, serveWatch, type WatchTimers } from "./watch-handler.ts";

export interface ResourceHandlerDeps {
  registry: ResourceRegistry;
  store: ObjectStore;
  patchTypes: PatchTypes;
  watchTimers: WatchTimers;
  /** Every open watch response, so that stop() can end them. */
  openWatches: Set<ServerResponse>;
}

/** Handles one resource request (ctx.info.isResourceRequest). */
export async function handleResourceRequest(ctx: RequestContext, deps: ResourceHandlerDeps): Promise<void> {
  const { info, url } = ctx;
  const served = deps.registry.get(info.apiGroup, info.apiVersion, info.resource);
  if (!served) throw notServedIn(deps.registry, info);
  // A cluster-scoped resource under /namespaces/x/ (other than namespaces themselves) is not served there.
  if (!served.namespaced && info.namespace !== "" && served.plural !== "namespaces") throw notServedAs(served);
  // The CRD handler passes a namespaced custom resource's get/write without a namespace on (to the text 404).
  if (served.custom && served.namespaced && info.namespace === "" && info.verb !== "list" && info.verb !== "watch")
    throw pageNotFound();
  const namespace = served.namespaced ? info.namespace : "";
  const name = served.plural === "namespaces" && info.name === "" && info.namespace !== "" ? info.namespace : info.name;
  const subresource = info.subresource;
  if (info.parts.length > 3) throw resourceNotServed();
  // The store's key function refuses such names (writes: once their body is decoded); a named watch
  // only skips its single-key shortcut.
  if (info.verb === "get" || info.verb === "delete") checkPathSegmentName(name);
  if (subresource === "log" && served.group === "" && served.plural === "pods") {
    if (info.verb !== "get") throw routeNotAllowed();
    return servePodLog(ctx.res, deps.store.getObject(served, namespace, name), url.searchParams, deps.openWatches);
  }
  if (served.computed) {
    serveComputed(ctx, served, served.computed);
    return;
  }
  const target = subresourceTarget(served, subresource, name);
  const query = url.searchParams;
  const store = deps.store;

  switch (info.verb) {
    case "get": {
      const shape = negotiate(ctx.req.headers.accept);
      if (target === "scale")
        return sendJson(ctx.res, 200, JSON.stringify(scaleOf(served, store.getObject(served, namespace, name))));
      const data = await store.read(served, namespace, name);
      return sendObject(ctx.res, 200, served, data, shape, query);
    }
    case "list": {
      if (subresource !== "") throw methodNotSupported(gr(served), "list");
      const shape = negotiate(ctx.req.headers.accept);
      const listQuery = listQueryOf(query);
      const wanted = Number(listQuery.resourceVersion ?? "0");
      if (
        listQuery.resourceVersionMatch !== "Exact" &&
        !listQuery.continue &&
        wanted > store.storage.currentRevision()
      ) {
        await waitForRevision(store.storage, wanted, ctx.signal);
      }
      const page = await store.readList(served, namespace, listQuery);
      if (shape.as === "Table") {
        const objects = page.items.map((d) => JSON.parse(d) as JsonObject);
        const table = toTable(served, objects, page, {
          includeObject: tableIncludeObject(query),
          apiVersion: shape.apiVersion,
        });
        return sendJson(ctx.res, 200, JSON.stringify(table));
      }
      if (shape.as === "Metadata") {
        return sendJson(ctx.res, 200, partialObjectMetadataList(listMetaOf(page), page.items, shape.apiVersion));
      }
      return sendJson(ctx.res, 200, listJson(served, page));
    }
    case "watch": {
      if (subresource !== "") throw methodNotSupported(gr(served), "watch");
      const shape = negotiate(ctx.req.headers.accept);
      const listQuery = listQueryOf(query);
      if (info.name !== "") {
        listQuery.fieldSelector = [`metadata.name=${info.name}`, listQuery.fieldSelector].filter(Boolean).join(",");
      }
      const from = parseWatchResourceVersion(listQuery.resourceVersion);
      if (from > store.storage.currentRevision()) await waitForRevision(store.storage, from, ctx.signal);
      return serveWatch(ctx, served, namespace, listQuery, shape, includeObjectOf(query), deps);
    }
    case "create": {
      if (subresource !== "" || info.name !== "") throw methodNotSupported(gr(served), "create");
      const { writeOptions } = writeRequestOf(ctx, query);
      checkWriteFieldManager(query, "CreateOptions");
      const obj = decodeObject(await readBody(ctx.req), ctx.req.headers["content-type"], served.kind) as JsonObject;
      checkKind(served, obj);
      const data = await store.create(served, namespace, obj, writeOptions);
      return sendObject(ctx.res, 201, served, data, negotiate(ctx.req.headers.accept), query);
    }
    case "update": {
      const { writeOptions, manager } = writeRequestOf(ctx, query);
      checkWriteFieldManager(query, "UpdateOptions");
      const into = target === "scale" ? "Scale" : served.kind;
      const obj = decodeObject(await readBody(ctx.req), ctx.req.headers["content-type"], into) as JsonObject;
      checkPathSegmentName(name);
      if (target === "scale") {
        const data = await store.guaranteedUpdate(
          served,
          namespace,
          name,
          "main",
          (current) =>
            parentAfterScale(served, current, trackScaleUpdate(scaleForWrite(served, current), obj, manager)),
          computedOptions(writeOptions, manager),
        );
        return sendJson(ctx.res, 200, JSON.stringify(scaleOf(served, JSON.parse(data) as JsonObject)));
      }
      if (target === "main") checkKind(served, obj);
      const data = await store.update(served, namespace, name, obj, target, writeOptions);
      return sendObject(ctx.res, 200, served, data, negotiate(ctx.req.headers.accept), query);
    }
    case "patch": {
      const { writeOptions, manager } = writeRequestOf(ctx, query);
      const body = (await readBody(ctx.req)).toString("utf8");
      const patchType = mediaType(ctx.req.headers["content-type"]);
      const patcher = deps.patchTypes.resolve(patchType, served);
      checkPathSegmentName(name);
      const isApply = patchType === "application/apply-patch+yaml";
      const context = { served, query, ...(target === "main" ? {} : { subresource: target }) };
      if (target === "scale") {
        const data = await store.guaranteedUpdate(
          served,
          namespace,
          name,
          "main",
          (current) => {
            const scale = scaleForWrite(served, current);
            const patched = patcher(scale, body, context);
            return parentAfterScale(served, current, isApply ? patched : trackScaleUpdate(scale, patched, manager));
          },
          computedOptions(writeOptions, manager),
        );
        return sendJson(ctx.res, 200, JSON.stringify(scaleOf(served, JSON.parse(data) as JsonObject)));
      }
      let data: string;
      try {
        data = await store.guaranteedUpdate(
          served,
          namespace,
          name,
          target,
          (current) => patcher(current, body, context),
          isApply
            ? computedOptions(writeOptions, manager)
            : patchType === "application/strategic-merge-patch+json"
              ? { ...writeOptions, strategicPatch: body }
              : writeOptions,
        );
      } catch (err) {
        // Apply creates what does not exist yet (main resource only), as kube-apiserver does.
        if (!(isApply && target === "main" && err instanceof ApiError && err.code === 404)) throw err;
        const created = applyCreate(body, { ...context, name, namespace });
        checkKind(served, created);
        data = await store.create(served, namespace, created, computedOptions(writeOptions, manager));
        return sendObject(ctx.res, 201, served, data, negotiate(ctx.req.headers.accept), query);
      }
      return sendObject(ctx.res, 200, served, data, negotiate(ctx.req.headers.accept), query);
    }
    case "delete": {
      if (subresource !== "") throw methodNotSupported(gr(served), "delete");
      const options = await deleteOptionsOf(ctx, query);
      const result = await store.delete(served, namespace, name, options);
      // 202 only when not deleted yet and the client asked for orphanDependents=false (handlers/delete.go).
      const code = !result.deleted && options.orphanDependents === false ? 202 : 200;
      return sendJson(ctx.res, code, JSON.stringify(result.body));
    }
    case "deletecollection": {
      if (subresource !== "") throw methodNotSupported(gr(served), "deletecollection");
      const options = await deleteOptionsOf(ctx, query);
      const list = await store.deleteCollection(served, namespace, listQueryOf(query), options);
      const items = (list["items"] as JsonObject[]).map((item) => listItemObject(served, item));
      return sendJson(ctx.res, 200, JSON.stringify({ ...list, items }));
    }
    default:
      throw methodNotSupported(gr(served), info.verb);
  }
}

function subresourceTarget(served: ServedResource, subresource: string, name: string): WriteTarget | "scale" {
  if (subresource === "") return "main";
  if (subresource === "status" && served.subresources.status) return "status";
  if (subresource === "scale" && served.subresources.scale) return "scale";
  if (subresource === "approval" && served.subresources.approval) return "approval";
  if (subresource === "finalize" && served.plural === "namespaces" && served.group === "") return "finalize";
  // The CRD handler names the object it has no such subresource of; go-restful has no route for it.
  throw served.custom ? notFound(gr(served), name) : resourceNotServed();
}

/**
 * The 404 for a resource no one serves, as kube-apiserver's handler chain gives it: inside a built-in
 * group version (and anywhere under /api) go-restful's JSON NotFound Status; elsewhere (unknown groups
 * and versions, custom resource groups, whose CRD handler delegates on) Go's text 404.
 */
function notServedIn(registry: ResourceRegistry, info: RequestContext["info"]): Error {
  if (info.apiPrefix === "api") return resourceNotServed();
  const builtin = registry.inGroupVersion(info.apiGroup, info.apiVersion).some((s) => !s.custom);
  return builtin ? resourceNotServed() : pageNotFound();
}

/** A resource asked for in the wrong scope: the CRD handler delegates (text 404), go-restful has no route (JSON). */
function notServedAs(served: ServedResource): Error {
  return served.custom ? pageNotFound() : resourceNotServed();
}

function checkKind(served: ServedResource, obj: JsonObject): void {
  if (obj.kind !== undefined && obj.kind !== "" && obj.kind !== served.kind) {
    throw badRequest(
      `Object kind "${obj.kind}" does not match the expected kind "${served.kind}" of ${groupVersion(served)}`,
    );
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== "" && obj.apiVersion !== groupVersion(served)) {
    throw badRequest(
      `the API version in the data (${obj.apiVersion}) does not match the expected API version (${groupVersion(served)})`,
    );
  }
}

function listQueryOf(query: URLSearchParams): ListQuery {
  const limitText = query.get("limit");
  let limit: number | undefined;
  if (limitText !== null && limitText !== "") {
    if (!/^-?\d+$/.test(limitText)) throw badRequest(`strconv.ParseInt: parsing "${limitText}": invalid syntax`);
    limit = Number(limitText);
  }
  const q: ListQuery = {
    labelSelector: query.get("labelSelector") ?? undefined,
    fieldSelector: query.get("fieldSelector") ?? undefined,
    limit,
    continue: query.get("continue") ?? undefined,
    resourceVersion: query.get("resourceVersion") ?? undefined,
    resourceVersionMatch: query.get("resourceVersionMatch") ?? undefined,
  };
  validateListQuery(q, query);
  return q;
}

/** metainternalversion validation.ValidateListOptions: the combinations the real server refuses with 422. */
function validateListQuery(q: ListQuery, query: URLSearchParams): void {
  const isWatch = queryBool(query, "watch") === true;
  const errors: { field: string; message: string; reason: string }[] = [];
  const match = q.resourceVersionMatch;
  const sendInitial = query.get("sendInitialEvents");
  if (isWatch && sendInitial !== null) {
    // WatchList (client-go's streaming list): its own requirements.
    if (match !== "NotOlderThan") {
      errors.push({
        field: "sendInitialEvents",
        reason: "FieldValueForbidden",
        message: "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
      });
    }
    if (queryBool(query, "allowWatchBookmarks") !== true) {
      errors.push({
        field: "allowWatchBookmarks",
        reason: "FieldValueForbidden",
        message: "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
      });
    }
  } else if (match) {
    if (isWatch) {
      errors.push({
        field: "resourceVersionMatch",
        reason: "FieldValueForbidden",
        message: "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
      });
    } else if (!q.resourceVersion) {
      errors.push({
        field: "resourceVersionMatch",
        reason: "FieldValueForbidden",
        message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
      });
    } else if (q.continue) {
      errors.push({
        field: "resourceVersionMatch",
        reason: "FieldValueForbidden",
        message: "Forbidden: resourceVersionMatch is forbidden when continue is provided",
      });
    } else if (match !== "Exact" && match !== "NotOlderThan") {
      errors.push({
        field: "resourceVersionMatch",
        reason: "FieldValueNotSupported",
        message: `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
      });
    } else if (match === "Exact" && q.resourceVersion === "0") {
      errors.push({
        field: "resourceVersionMatch",
        reason: "FieldValueForbidden",
        message: 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      });
    }
  }
  if (errors.length === 0) return;
  const message =
    errors.length === 1
      ? `${errors[0]!.field}: ${errors[0]!.message}`
      : `[${errors.map((e) => `${e.field}: ${e.message}`).join(", ")}]`;
  throw new ApiError(
    failure(422, "Invalid", `ListOptions.meta.k8s.io "" is invalid: ${message}`, {
      group: "meta.k8s.io",
      kind: "ListOptions",
      causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field })),
    }),
  );
}

/** The fieldValidation query parameter (Ignore, Warn, Strict); anything else is 400 as in kube-apiserver. */
function fieldValidationOf(query: URLSearchParams): FieldValidation | undefined {
  const value = query.get("fieldValidation");
  if (value === null || value === "") return undefined;
  if (value === "Ignore" || value === "Warn" || value === "Strict") return value;
  throw badRequest(`fieldValidation must be one of Ignore, Warn, or Strict, got "${value}"`);
}

/** includeObject of a Table answer: asTable refuses a value it does not know with 400 (handlers/response.go). */
function tableIncludeObject(query: URLSearchParams): "None" | "Metadata" | "Object" {
  const value = query.get("includeObject") ?? "";
  if (value !== "" && value !== "None" && value !== "Metadata" && value !== "Object") {
    throw badRequest(`unrecognized includeObject value: ${JSON.stringify(value)}`);
  }
  return includeObjectOf(query);
}

function includeObjectOf(query: URLSearchParams): "None" | "Metadata" | "Object" {
  const value = query.get("includeObject");
  return value === "None" || value === "Object" ? value : "Metadata";
}

/**
 * The DeleteOptions of a DELETE: the body's known fields (kubectl sends them there, `dryRun: ["All"]`
 * included), then the query's; with the requester, for admission, and a place for its warnings.
 */
async function deleteOptionsOf(ctx: RequestContext, query: URLSearchParams): Promise<DeleteOptions> {
  const body = await readBody(ctx.req);
  const options: DeleteOptions = { warnings: new WarningRecorder(ctx.res) };
  let bodyDryRun = false;
  if (body.length > 0) {
    // Only DeleteOptions' own fields: the rest of the options (requester, skipAdmission) are the server's.
    const decoded = decodeObject(body, ctx.req.headers["content-type"]) as Record<string, unknown>;
    const { propagationPolicy, orphanDependents, gracePeriodSeconds, preconditions, dryRun } = decoded;
    if (propagationPolicy !== undefined && propagationPolicy !== null)
      options.propagationPolicy = propagationPolicy as DeleteOptions["propagationPolicy"];
    if (typeof orphanDependents === "boolean") options.orphanDependents = orphanDependents;
    if (typeof gracePeriodSeconds === "number") options.gracePeriodSeconds = gracePeriodSeconds;
    if (typeof preconditions === "object" && preconditions !== null)
      options.preconditions = preconditions as DeleteOptions["preconditions"];
    bodyDryRun = Array.isArray(dryRun) && dryRun.includes("All");
  }
  options.dryRun = bodyDryRun || dryRunOf(query);
  if (ctx.user) options.requester = requesterOf(ctx.user);
  const policy = query.get("propagationPolicy");
  if (policy !== null) options.propagationPolicy = policy as DeleteOptions["propagationPolicy"];
  const grace = query.get("gracePeriodSeconds");
  if (grace !== null && grace !== "") options.gracePeriodSeconds = Number(grace);
  const orphan = queryBool(query, "orphanDependents");
  if (orphan !== undefined) options.orphanDependents = orphan;
  if (
    options.propagationPolicy !== undefined &&
    !["Orphan", "Background", "Foreground"].includes(options.propagationPolicy)
  ) {
    throw new ApiError(
      failure(
        422,
        "Invalid",
        `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${options.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`,
        {
          group: "meta.k8s.io",
          kind: "DeleteOptions",
          causes: [
            {
              reason: "FieldValueNotSupported",
              message: `Unsupported value: "${options.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`,
              field: "propagationPolicy",
            },
          ],
        },
      ),
    );
  }
  if (options.propagationPolicy !== undefined && options.orphanDependents !== undefined) {
    throw new ApiError(
      failure(
        422,
        "Invalid",
        `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "${options.propagationPolicy}": orphanDependents and deletionPropagation cannot be both set`,
        {
          group: "meta.k8s.io",
          kind: "DeleteOptions",
          causes: [
            {
              reason: "FieldValueInvalid",
              message: `Invalid value: "${options.propagationPolicy}": orphanDependents and deletionPropagation cannot be both set`,
              field: "propagationPolicy",
            },
          ],
        },
      ),
    );
  }
  return options;
}

function listJson(
  served: ServedResource,
  page: { items: string[]; resourceVersion: string; continue?: string; remainingItemCount?: number },
): string {
  // Items are already serialized: splice them in rather than parse and re-serialize (the list fast path).
  const items = served.custom ? page.items : page.items.map((data) => listItemJson(served, data));
  return `{"kind":${JSON.stringify(served.listKind)},"apiVersion":${JSON.stringify(groupVersion(served))},"metadata":${JSON.stringify(listMetaOf(page))},"items":[${items.join(",")}]}`;
}

function listMetaOf(page: { resourceVersion: string; continue?: string; remainingItemCount?: number }) {
  const meta: Record<string, unknown> = { resourceVersion: page.resourceVersion };
  if (page.continue) meta["continue"] = page.continue;
  if (page.remainingItemCount !== undefined) meta["remainingItemCount"] = page.remainingItemCount;
  return meta;
}

/** What a create, update or patch takes from the request; only those verbs build it (a get makes none of it). */
interface WriteRequest {
  writeOptions: WriteOptions;
  /** The writer named in managedFields (`kubectl-create`, or the User-Agent's program). */
  manager: string;
}

function writeRequestOf(ctx: RequestContext, query: URLSearchParams): WriteRequest {
  const manager = managerOrUserAgent(query.get("fieldManager"), ctx.req.headers["user-agent"]);
  const writeOptions: WriteOptions = {
    dryRun: dryRunOf(query),
    fieldValidation: fieldValidationOf(query),
    // Written to the response as they come (unknown fields under fieldValidation=Warn, admission's).
    warnings: new WarningRecorder(ctx.res),
    owned: true,
    fieldManager: { manager },
    ...(ctx.user ? { requester: requesterOf(ctx.user) } : {}),
  };
  return { writeOptions, manager };
}

/** The authenticated (or impersonated) user, as strategies and admission record it. */
function requesterOf(user: { username: string; groups: string[] }): Requester {
  return { username: user.username, groups: user.groups };
}

function dryRunOf(query: URLSearchParams): boolean {
  return query.getAll("dryRun").includes("All");
}

/**
 * The options of writes whose managedFields the field manager already computed (apply, scale): stored
 * as they are. Built by the verbs that use them, so a create or get makes no extra object or closure.
 */
function computedOptions(writeOptions: WriteOptions, manager: string): WriteOptions {
  return { ...writeOptions, fieldManager: { manager, computed: true } };
}

function sendObject(
  res: ServerResponse,
  code: number,
  served: ServedResource,
  data: string,
  shape: ResponseShape,
  query: URLSearchParams,
): void {
  if (shape.as === "Table") {
    const obj = JSON.parse(data) as JsonObject;
    const table = toTable(
      served,
      [obj],
      {},
      { includeObject: tableIncludeObject(query), apiVersion: shape.apiVersion },
    );
    sendJson(res, code, JSON.stringify(table));
    return;
  }
  sendJson(res, code, shape.as === "Metadata" ? partialObjectMetadata(data, shape.apiVersion) : data);
}

function sendJson(res: ServerResponse, code: number, body: string): void {
  writeJson(res, code, body);
}
