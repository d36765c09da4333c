/**
 * The dashboard's write routes: create, replace and delete objects of any kind the dashboard
 * watches, through the API server as the dashboard's user, with the field manager
 * {@link FIELD_MANAGER}; and what the page's editors need around them (a kind's schema, an
 * object's latest version, a deletion's consequences, YAML parsed and written on this side so the
 * page needs no YAML library).
 *
 * Routes (`kind`, `namespace`, `name` are query parameters as in server.ts):
 * - `GET /api/writes`: `{ readOnly, fieldManager }`, what the page shows write controls by.
 * - `GET /api/schema?kind=`: `{ schema }`, the kind's OpenAPI v3 schema (kind-schema.ts).
 * - `GET /api/edit?kind=&namespace=&name=`: `{ object, yaml }`, the latest version from the cluster.
 * - `GET /api/deletion?kind=&namespace=&name=`: its finalizers and dependents (deletion-preview.ts).
 * - `POST /api/yaml/parse` `{ yaml }` -> `{ object }`; `POST /api/yaml/stringify` `{ object }` -> `{ yaml }`.
 * - `POST /api/objects?kind=` `{ object } | { yaml }` -> 201 `{ object }`.
 * - `PUT /api/object?kind=&namespace=&name=` `{ object } | { yaml }` -> `{ object }`; the object must
 *   carry `metadata.resourceVersion` (a stale one answers the cluster's 409).
 * - `DELETE /api/object?kind=&namespace=&name=[&uid=]` -> `{ status }`, background propagation,
 *   the uid (when given) as precondition so a same-named successor is never deleted.
 *
 * Guarantees:
 * - A request with another method than GET or HEAD is answered only when its `Origin` header names
 *   the dashboard itself (a page of another site can make a browser POST here: its Origin gives
 *   it away), and one with a body only when it is `application/json` (so no HTML form can send it).
 * - With `readOnly`, POST /api/objects, PUT and DELETE answer 403 and touch nothing.
 * - The cluster's refusals come back with the cluster's code and its Status's
 *   `{ code, reason, message, causes }` under `error` (causes name fields: `spec.strings[0]`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, type KubeClient, type KubeObject } from "capstan";
import { apiVersionOf } from "capstan/internal";
import { LineCounter, parseDocument, stringify as stringifyYaml } from "yaml";
import type { ClusterView, ViewedKind } from "./cluster-view.ts";
import { deletionPreview } from "./deletion-preview.ts";
import { originAllowed } from "./host-guard.ts";
import { KindSchemas } from "./kind-schema.ts";
import type { DashboardKind } from "./kinds.ts";
import { feedError } from "./object-feed.ts";

/** The `fieldManager` of every write the dashboard makes: its changes show as its own in managedFields. */
export const FIELD_MANAGER = "capstan-dashboard";
/** Far more than any object a person edits, and the API server's own limit is 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** What the write routes need. */
export interface WriteRoutesOptions {
  view: ClusterView;
  client: KubeClient;
  /** `Host` header values the dashboard answers (see host-guard.ts); Origins must name one. */
  allowedHosts: ReadonlySet<string>;
  /** Write routes answer 403. */
  readOnly: boolean;
  /** Aborted when the dashboard stops: pending cluster calls end. */
  signal: AbortSignal;
}

/** A field the server (or the page's own check) complained about. */
export interface ErrorCause {
  field?: string;
  reason?: string;
  message?: string;
}

/** An error as the page receives it: the cluster's Status in short. */
export interface WriteError {
  code: number;
  reason: string;
  message: string;
  causes?: ErrorCause[];
}

/** A refusal of this module (not of the cluster). */
class RouteError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const ROUTES = new Set([
  "/api/writes",
  "/api/schema",
  "/api/edit",
  "/api/deletion",
  "/api/yaml/parse",
  "/api/yaml/stringify",
  "/api/objects",
  "/api/object",
]);

/**
 * The write routes' handler: answers and resolves `true` for the requests it owns (see the module
 * documentation), resolves `false` for the rest (GET /api/objects and /api/object are server.ts's).
 */
export function writeRoutes(
  options: WriteRoutesOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const schemas = new KindSchemas(options.view, options.client);

  return async (req, res) => {
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    const method = req.method ?? "GET";
    const read = method === "GET" || method === "HEAD";
    if (!ROUTES.has(url.pathname)) return false;
    if (read && (url.pathname === "/api/objects" || url.pathname === "/api/object")) return false;
    try {
      if (!read) checkWriteRequest(req, options.allowedHosts);
      const q = url.searchParams;
      const route = `${method} ${url.pathname}`;
      switch (route) {
        case "GET /api/writes":
          return send(res, 200, { readOnly: options.readOnly, fieldManager: FIELD_MANAGER });
        case "GET /api/schema": {
          const { kind } = viewed(q);
          return send(res, 200, { schema: await schemas.schemaOf(kind, options.signal) });
        }
        case "GET /api/edit": {
          const { kind } = viewed(q);
          const object = await fetchLatest(kind, q);
          return send(res, 200, { object, yaml: toYaml(object) });
        }
        case "GET /api/deletion": {
          const { kind, feed } = viewed(q);
          const { namespace, name } = target(kind, q);
          const object = feed.get(namespace ? `${namespace}/${name}` : name) ?? (await fetchLatest(kind, q));
          return send(res, 200, deletionPreview(options.view, object));
        }
        case "POST /api/yaml/parse":
          return send(res, 200, { object: parseYaml(String((await readJson(req)).yaml ?? "")) });
        case "POST /api/yaml/stringify":
          return send(res, 200, { yaml: toYaml((await readJson(req)).object) });
        case "POST /api/objects":
        case "PUT /api/object":
        case "DELETE /api/object": {
          if (options.readOnly) {
            throw new RouteError(403, "Forbidden", "the dashboard was started read-only (--read-only)");
          }
          return await write(route, req, res, q);
        }
        default:
          res.setHeader("allow", url.pathname === "/api/object" ? "GET, HEAD, PUT, DELETE" : "GET, HEAD, POST");
          throw new RouteError(405, "MethodNotAllowed", `${method} is not allowed on ${url.pathname}`);
      }
    } catch (err) {
      return send(res, ...errorAnswer(err));
    }
  };

  async function write(route: string, req: IncomingMessage, res: ServerResponse, q: URLSearchParams) {
    const { kind } = viewed(q);
    if (route === "DELETE /api/object") {
      const { namespace, name } = target(kind, q);
      const uid = q.get("uid");
      const status = await options.client.resource(kind, namespace).delete(name, {
        propagationPolicy: "Background",
        ...(uid ? { preconditions: { uid } } : {}),
        signal: options.signal,
      });
      return send(res, 200, { status });
    }
    if (kind.metadataOnly) {
      throw new RouteError(
        400,
        "BadRequest",
        `the dashboard never reads ${kind.kind} data, so it does not write ${kind.kind}s: use kubectl`,
      );
    }
    const object = objectOf(kind, await readJson(req));
    const namespace = kind.namespaced ? object.metadata?.namespace : undefined;
    if (kind.namespaced && !namespace) throw invalid("metadata.namespace", "a namespace is required");
    const api = options.client.resource(kind, namespace);
    if (route === "POST /api/objects") {
      if (!object.metadata?.name && !object.metadata?.generateName)
        throw invalid("metadata.name", "a name is required");
      return send(res, 201, {
        object: await api.create(object, { fieldManager: FIELD_MANAGER, signal: options.signal }),
      });
    }
    const where = target(kind, q);
    if (object.metadata?.name !== where.name || (kind.namespaced && namespace !== where.namespace)) {
      throw new RouteError(400, "BadRequest", "an edit cannot rename an object or move it to another namespace");
    }
    if (!object.metadata?.resourceVersion) {
      throw invalid("metadata.resourceVersion", "the edit must name the version it changes");
    }
    return send(res, 200, {
      object: await api.update(object, { fieldManager: FIELD_MANAGER, signal: options.signal }),
    });
  }

  function viewed(q: URLSearchParams): ViewedKind {
    const id = q.get("kind") ?? "";
    const found = options.view.kind(id);
    if (found === undefined) {
      throw new RouteError(404, "NotFound", `the dashboard does not watch kind "${id}" (is its CRD established?)`);
    }
    return found;
  }

  async function fetchLatest(kind: DashboardKind, q: URLSearchParams): Promise<KubeObject> {
    const { namespace, name } = target(kind, q);
    const api = kind.metadataOnly ? options.client.metadata(kind, namespace) : options.client.resource(kind, namespace);
    const object = (await api.get(name, { signal: options.signal })) as KubeObject;
    return { ...object, apiVersion: apiVersionOf(kind), kind: kind.kind };
  }
}

/** Refuses a non-GET request from another origin, or a body that is not JSON; see the module documentation. */
function checkWriteRequest(req: IncomingMessage, allowedHosts: ReadonlySet<string>): void {
  if (!originAllowed(req.headers.origin, allowedHosts)) {
    throw new RouteError(
      403,
      "Forbidden",
      `the dashboard takes writes only from its own page, not from Origin "${req.headers.origin ?? ""}"`,
    );
  }
  const hasBody = req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0";
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if ((hasBody || req.headers["transfer-encoding"] !== undefined) && type !== "application/json") {
    throw new RouteError(415, "UnsupportedMediaType", "the dashboard's write routes take application/json");
  }
}

/** The target's namespace (namespaced kinds) and name from the query; a missing one is a 400. */
function target(kind: DashboardKind, q: URLSearchParams): { namespace: string | undefined; name: string } {
  const name = q.get("name") ?? "";
  const namespace = kind.namespaced ? (q.get("namespace") ?? "") : undefined;
  if (name === "" || namespace === "") {
    throw new RouteError(400, "BadRequest", "name (and namespace, for a namespaced kind) are required");
  }
  return { namespace, name };
}

/** The object of a `{ object }` or `{ yaml }` body, checked to be of `kind`, apiVersion and kind filled in. */
function objectOf(kind: DashboardKind, body: Record<string, unknown>): KubeObject {
  const raw = typeof body.yaml === "string" ? parseYaml(body.yaml) : body.object;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new RouteError(400, "BadRequest", "the body must be { object } or { yaml } with one object");
  }
  const obj = raw as KubeObject;
  const apiVersion = apiVersionOf(kind);
  if (
    (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) ||
    (obj.kind !== undefined && obj.kind !== kind.kind)
  ) {
    throw new RouteError(
      400,
      "BadRequest",
      `this is a ${obj.kind ?? "?"} (${obj.apiVersion ?? "?"}), and the form is for ${kind.kind} (${apiVersion})`,
    );
  }
  if (!kind.namespaced && obj.metadata?.namespace) {
    throw invalid("metadata.namespace", `${kind.kind} is cluster-scoped: it has no namespace`);
  }
  return { ...obj, apiVersion, kind: kind.kind };
}

/** One YAML document as a value; a syntax error is a 400 naming its line. */
export function parseYaml(text: string): unknown {
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter: lines });
  const error = doc.errors[0];
  if (error !== undefined) {
    const line = lines.linePos(error.pos[0]).line;
    throw new RouteError(400, "BadRequest", `YAML${line ? ` line ${line}` : ""}: ${error.message.split("\n")[0]}`);
  }
  const value = doc.toJS({ maxAliasCount: 100 });
  if (value === null || value === undefined) throw new RouteError(400, "BadRequest", "the YAML is empty");
  return value;
}

/** An object as the editors show it: without managedFields, which nobody edits by hand. */
function toYaml(object: unknown): string {
  if (typeof object !== "object" || object === null) return stringifyYaml(object ?? null);
  const obj = object as KubeObject;
  const shown = obj.metadata ? { ...obj, metadata: { ...obj.metadata } } : obj;
  if (shown.metadata) delete shown.metadata.managedFields;
  return stringifyYaml(shown, { lineWidth: 0 });
}

function invalid(field: string, message: string): ApiError {
  return new ApiError({
    apiVersion: "v1",
    kind: "Status",
    status: "Failure",
    code: 422,
    reason: "Invalid",
    message: `${field}: ${message}`,
    details: { causes: [{ field, reason: "FieldValueRequired", message }] },
  });
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RouteError(413, "RequestEntityTooLarge", "the body is over 3 MiB");
    chunks.push(chunk);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new RouteError(400, "BadRequest", "the body is not a JSON object");
}

/** The code and body of an error: the cluster's Status (causes included), or this module's refusal. */
function errorAnswer(err: unknown): [number, { error: WriteError }] {
  if (err instanceof RouteError)
    return [err.code, { error: { code: err.code, reason: err.reason, message: err.message } }];
  if (err instanceof ApiError) {
    const causes = err.status.details?.causes;
    const error: WriteError = {
      code: err.code,
      reason: err.reason || "Error",
      message: err.message,
      ...(causes && causes.length > 0 ? { causes: causes as ErrorCause[] } : {}),
    };
    return [err.code >= 400 && err.code <= 599 ? err.code : 502, { error }];
  }
  const e = feedError(err);
  return [502, { error: e }];
}

function send(res: ServerResponse, code: number, body: unknown): true {
  res.writeHead(code, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  res.end(res.req?.method === "HEAD" ? undefined : JSON.stringify(body));
  return true;
}
