/**
 * The OpenAPI v3 documents of the served resources, as kube-apiserver publishes them at
 * `/openapi/v3` (a discovery index of group-versions with content hashes) and
 * `/openapi/v3/{api/v1 | apis/<group>/<version>}` (one OpenAPI 3.0 document per group-version).
 *
 * Why kubectl needs them: `kubectl apply`/`create`/`edit`/`replace` validate with
 * `--validate=strict` by default. Before sending, kubectl downloads `/openapi/v3`, then the
 * document of the object's group-version, and looks for a PATCH operation tagged with the object's
 * `x-kubernetes-group-version-kind` that declares the `fieldValidation` query parameter
 * (k8s.io/cli-runtime resource/query_param_verifier_v3.go). When it finds it, kubectl sends
 * `?fieldValidation=Strict` and leaves validation to the server; when the documents cannot be
 * downloaded it fails with "failed to download openapi". For a group-version it cannot find,
 * kubectl checks whether the kind is a CRD and then uses the core/v1 Namespace PATCH operation instead.
 *
 * Expected flow: the server routes `GET /openapi/v3[/...]` to {@link OpenApiDocuments.handle}.
 * Documents are built from the registry on first request and cached until the registry changes
 * (a CRD added, updated or removed), so every answer reflects the resources served at that moment.
 *
 * Guarantees:
 * - every served resource has its collection, item and (if enabled) status/scale paths with
 *   `x-kubernetes-action` and `x-kubernetes-group-version-kind`, and `fieldValidation`, `dryRun`
 *   and `fieldManager` on every write operation;
 * - custom resources carry their CRD version's `openAPIV3Schema`, completed with `apiVersion`,
 *   `kind` and `metadata` as apiextensions-apiserver's builder does, under the reversed-group
 *   definition name (`com.example.operators.v1.ExchangeRate`);
 * - the discovery hash of a group-version changes whenever its document changes.
 *
 * Caveats: built-in kinds get the field tree of @kubernetes/client-node's generated models (types
 * without descriptions or patch strategies, see builtin-schemas.ts), loaded on the first request. The
 * swagger 2.0 document (`/openapi/v2`) is derived from these documents (openapi-v2.ts).
 */
import { createHash } from "node:crypto";
import { resourceNotServed } from "../machinery/status.ts";
import { builtinSchemas } from "../registry/builtin-schemas.ts";
import type { ResourceRegistry } from "../registry/registry.ts";
import type { ServedResource } from "../registry/served-resource.ts";
import type { RequestContext } from "../request/pipeline.ts";
import { versionInfo } from "./discovery.ts";
import {
  encodeSwaggerProtobuf,
  OPENAPI_V2_PROTOBUF,
  OPENAPI_V2_PROTOBUF_DEPRECATED,
  swaggerDocument,
} from "./openapi-v2.ts";

type Json = Record<string, unknown>;

/** The documents report the server's own version in `info.version`, as kube-apiserver does. */
const DEFAULT_SERVER_VERSION = (versionInfo() as { gitVersion: string }).gitVersion;

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const DELETE_OPTIONS = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const PATCH = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const SCALE = "io.k8s.api.autoscaling.v1.Scale";

/** Groups whose types live in k8s.io/api (definition prefix `io.k8s.api.<first label>`). */
const K8S_API_GROUPS = new Set([
  "",
  "apps",
  "batch",
  "coordination.k8s.io",
  "events.k8s.io",
  "rbac.authorization.k8s.io",
  "admissionregistration.k8s.io",
  "autoscaling",
  "policy",
  "networking.k8s.io",
  "storage.k8s.io",
  "discovery.k8s.io",
  "scheduling.k8s.io",
  "node.k8s.io",
  "certificates.k8s.io",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "flowcontrol.apiserver.k8s.io",
]);

/**
 * The OpenAPI definition name of a kind, as the apiserver names it: `io.k8s.api.core.v1.Pod`,
 * `io.k8s.api.apps.v1.Deployment`, `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition`,
 * and for custom resources the reversed group: `com.example.operators.v1.ExchangeRate`.
 */
export function definitionName(group: string, version: string, kind: string): string {
  if (group === "apiextensions.k8s.io")
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}.${kind}`;
  if (K8S_API_GROUPS.has(group)) {
    const pkg = group === "" ? "core" : group.split(".")[0];
    return `io.k8s.api.${pkg}.${version}.${kind}`;
  }
  return `${group.split(".").reverse().join(".")}.${version}.${kind}`;
}

/** The discovery key of a group-version: `api/v1` or `apis/<group>/<version>`. */
export function groupVersionKey(group: string, version: string): string {
  return group === "" ? `api/${version}` : `apis/${group}/${version}`;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const gvk = (group: string, version: string, kind: string): Json => ({ group, version, kind });

function queryParam(name: string, description: string, type = "string"): Json {
  return { name, in: "query", description, schema: { type, uniqueItems: true } };
}

const PARAMS = {
  dryRun: queryParam(
    "dryRun",
    "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed",
  ),
  fieldManager: queryParam(
    "fieldManager",
    "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.",
  ),
  fieldValidation: queryParam(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.",
  ),
  force: queryParam(
    "force",
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.',
    "boolean",
  ),
  pretty: queryParam("pretty", "If 'true', then the output is pretty printed."),
  labelSelector: queryParam(
    "labelSelector",
    "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
  ),
  fieldSelector: queryParam(
    "fieldSelector",
    "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
  ),
  limit: queryParam("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
  continue: queryParam("continue", "The continue option should be set when retrieving more results from the server."),
  resourceVersion: queryParam(
    "resourceVersion",
    "resourceVersion sets a constraint on what resource versions a request may be served from.",
  ),
  resourceVersionMatch: queryParam(
    "resourceVersionMatch",
    "resourceVersionMatch determines how resourceVersion is applied to list calls.",
  ),
  watch: queryParam(
    "watch",
    "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
    "boolean",
  ),
  allowWatchBookmarks: queryParam(
    "allowWatchBookmarks",
    'allowWatchBookmarks requests watch events with type "BOOKMARK".',
    "boolean",
  ),
  timeoutSeconds: queryParam(
    "timeoutSeconds",
    "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
    "integer",
  ),
  gracePeriodSeconds: queryParam(
    "gracePeriodSeconds",
    "The duration in seconds before the object should be deleted.",
    "integer",
  ),
  propagationPolicy: queryParam(
    "propagationPolicy",
    "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
  ),
};

function pathParam(name: string, description: string): Json {
  return { name, in: "path", description, required: true, schema: { type: "string", uniqueItems: true } };
}

function jsonBody(schemaName: string): Json {
  return {
    content: {
      "*/*": { schema: ref(schemaName) },
    },
    required: true,
  };
}

function okResponses(schemaName: string, codes: string[] = ["200"]): Json {
  const out: Json = {};
  for (const code of codes) {
    out[code] = {
      description: code === "201" ? "Created" : code === "202" ? "Accepted" : "OK",
      content: {
        "application/json": { schema: ref(schemaName) },
        "application/yaml": { schema: ref(schemaName) },
      },
    };
  }
  out["401"] = { description: "Unauthorized" };
  return out;
}

function operation(
  action: string,
  operationId: string,
  tag: string,
  kind: Json,
  parameters: Json[],
  responses: Json,
  requestBody?: Json,
): Json {
  const op: Json = {
    tags: [tag],
    description: `${action} ${kind["kind"]}`,
    operationId,
    parameters,
    responses,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": kind,
  };
  if (requestBody) op["requestBody"] = requestBody;
  return op;
}

function capitalize(s: string): string {
  return s === "" ? s : s[0]!.toUpperCase() + s.slice(1);
}

/** The paths of one served resource, in the shape kube-apiserver's OpenAPI builder emits. */
function resourcePaths(served: ServedResource): Record<string, Json> {
  const { group, version, kind, plural } = served;
  const base = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  const scope = served.namespaced ? "/namespaces/{namespace}" : "";
  const tag = group === "" ? `core_${version}` : `${group.split(".")[0]}_${version}`;
  const opSuffix = `${capitalize(group.split(".")[0] ?? "")}${capitalize(version)}${served.namespaced ? "Namespaced" : ""}${kind}`;
  const kindRef = definitionName(group, version, kind);
  const listRef = definitionName(group, version, served.listKind);
  const k = gvk(group, version, kind);
  const common: Json[] = [PARAMS.pretty];
  if (served.namespaced)
    common.unshift(pathParam("namespace", "object name and auth scope, such as for teams and projects"));
  const verbs = new Set(served.verbs);
  const writeParams = [PARAMS.dryRun, PARAMS.fieldManager, PARAMS.fieldValidation];
  // Strategic merge is deliberately not advertised: client-side `kubectl apply` computes its patch from
  // the OpenAPI v3 schema when the PATCH operation lists it, and our built-in schemas lack the fields
  // and patch strategies (it would warn "error calculating patch from openapi v3 spec"). Without it,
  // kubectl uses its compiled-in types, which carry the exact merge keys. The server still accepts it.
  const patchBody: Json = {
    content: {
      "application/apply-patch+yaml": { schema: ref(PATCH) },
      "application/json-patch+json": { schema: ref(PATCH) },
      "application/merge-patch+json": { schema: ref(PATCH) },
    },
    required: true,
  };
  const listParams = [
    PARAMS.allowWatchBookmarks,
    PARAMS.continue,
    PARAMS.fieldSelector,
    PARAMS.labelSelector,
    PARAMS.limit,
    PARAMS.resourceVersion,
    PARAMS.resourceVersionMatch,
    PARAMS.timeoutSeconds,
    PARAMS.watch,
  ];
  const paths: Record<string, Json> = {};

  const collection: Json = { parameters: common };
  if (verbs.has("list"))
    collection["get"] = operation("list", `list${opSuffix}`, tag, k, listParams, okResponses(listRef));
  if (verbs.has("create"))
    collection["post"] = operation(
      "post",
      `create${opSuffix}`,
      tag,
      k,
      writeParams,
      okResponses(kindRef, ["200", "201", "202"]),
      jsonBody(kindRef),
    );
  if (verbs.has("deletecollection"))
    collection["delete"] = operation(
      "deletecollection",
      `deletecollection${opSuffix}`,
      tag,
      k,
      [...listParams, PARAMS.dryRun, PARAMS.gracePeriodSeconds, PARAMS.propagationPolicy],
      okResponses(STATUS),
      { content: { "*/*": { schema: ref(DELETE_OPTIONS) } } },
    );
  paths[`${base}${scope}/${plural}`] = collection;

  const itemParams = [pathParam("name", `name of the ${kind}`), ...common];
  const item: Json = { parameters: itemParams };
  if (verbs.has("get")) item["get"] = operation("get", `read${opSuffix}`, tag, k, [], okResponses(kindRef));
  if (verbs.has("update"))
    item["put"] = operation(
      "put",
      `replace${opSuffix}`,
      tag,
      k,
      writeParams,
      okResponses(kindRef, ["200", "201"]),
      jsonBody(kindRef),
    );
  if (verbs.has("patch"))
    item["patch"] = operation(
      "patch",
      `patch${opSuffix}`,
      tag,
      k,
      [...writeParams, PARAMS.force],
      okResponses(kindRef, ["200", "201"]),
      patchBody,
    );
  if (verbs.has("delete"))
    item["delete"] = operation(
      "delete",
      `delete${opSuffix}`,
      tag,
      k,
      [PARAMS.dryRun, PARAMS.gracePeriodSeconds, PARAMS.propagationPolicy],
      okResponses(STATUS, ["200", "202"]),
      { content: { "*/*": { schema: ref(DELETE_OPTIONS) } } },
    );
  paths[`${base}${scope}/${plural}/{name}`] = item;

  const subresource = (sub: string, schemaName: string, subKind: Json) => {
    paths[`${base}${scope}/${plural}/{name}/${sub}`] = {
      parameters: itemParams,
      get: operation("get", `read${opSuffix}${capitalize(sub)}`, tag, subKind, [], okResponses(schemaName)),
      put: operation(
        "put",
        `replace${opSuffix}${capitalize(sub)}`,
        tag,
        subKind,
        writeParams,
        okResponses(schemaName, ["200", "201"]),
        jsonBody(schemaName),
      ),
      patch: operation(
        "patch",
        `patch${opSuffix}${capitalize(sub)}`,
        tag,
        subKind,
        [...writeParams, PARAMS.force],
        okResponses(schemaName, ["200", "201"]),
        patchBody,
      ),
    };
  };
  if (served.subresources.status) subresource("status", kindRef, k);
  if (served.subresources.scale) subresource("scale", SCALE, gvk("autoscaling", "v1", "Scale"));
  return paths;
}

function typeMetaProperties(): Json {
  return {
    apiVersion: {
      description:
        "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
      type: "string",
    },
    kind: {
      description:
        "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
      type: "string",
    },
  };
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The schema of one kind. Custom resources: the CRD schema with `apiVersion`, `kind` and
 * `metadata` (a reference to ObjectMeta) set as apiextensions-apiserver's builder sets them.
 * Built-ins: a permissive object schema (see Caveats above).
 */
function kindSchema(served: ServedResource, builtin?: Json): Json {
  const extension = [gvk(served.group, served.version, served.kind)];
  if (!served.custom && builtin) {
    const properties = isRecord(builtin["properties"]) ? builtin["properties"] : {};
    return {
      ...builtin,
      properties: { ...properties, metadata: { default: {}, allOf: [ref(OBJECT_META)] } },
      "x-kubernetes-group-version-kind": extension,
    };
  }
  if (served.custom && isRecord(served.schema)) {
    const schema: Json = structuredClone(served.schema);
    const properties: Json = isRecord(schema["properties"]) ? schema["properties"] : {};
    schema["properties"] = {
      ...properties,
      ...typeMetaProperties(),
      metadata: { description: "Standard object's metadata.", allOf: [ref(OBJECT_META)] },
    };
    schema["type"] ??= "object";
    schema["x-kubernetes-group-version-kind"] = extension;
    return schema;
  }
  if (served.custom) {
    return {
      type: "object",
      properties: { ...typeMetaProperties(), metadata: { allOf: [ref(OBJECT_META)] } },
      "x-kubernetes-preserve-unknown-fields": true,
      "x-kubernetes-group-version-kind": extension,
    };
  }
  return {
    description: `${served.kind} (schema not modelled by the devcluster: fields other than apiVersion, kind and metadata are not described).`,
    type: "object",
    properties: { ...typeMetaProperties(), metadata: { default: {}, allOf: [ref(OBJECT_META)] } },
    "x-kubernetes-preserve-unknown-fields": true,
    "x-kubernetes-group-version-kind": extension,
  };
}

function listSchema(served: ServedResource): Json {
  return {
    description: `${served.listKind} is a list of ${served.kind}`,
    type: "object",
    required: ["items"],
    properties: {
      ...typeMetaProperties(),
      items: { type: "array", items: ref(definitionName(served.group, served.version, served.kind)) },
      metadata: { default: {}, allOf: [ref(LIST_META)] },
    },
    "x-kubernetes-group-version-kind": [gvk(served.group, served.version, served.listKind)],
  };
}

/** The meta/v1 definitions every group-version document references. */
function metaSchemas(): Record<string, Json> {
  const stringMap = { type: "object", additionalProperties: { type: "string", default: "" } };
  return {
    [OBJECT_META]: {
      description:
        "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
      type: "object",
      properties: {
        annotations: stringMap,
        creationTimestamp: { type: "string", format: "date-time" },
        deletionGracePeriodSeconds: { type: "integer", format: "int64" },
        deletionTimestamp: { type: "string", format: "date-time" },
        finalizers: { type: "array", items: { type: "string", default: "" }, "x-kubernetes-list-type": "set" },
        generateName: { type: "string" },
        generation: { type: "integer", format: "int64" },
        labels: stringMap,
        managedFields: { type: "array", items: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        name: { type: "string" },
        namespace: { type: "string" },
        ownerReferences: {
          type: "array",
          items: {
            type: "object",
            required: ["apiVersion", "kind", "name", "uid"],
            properties: {
              apiVersion: { type: "string", default: "" },
              blockOwnerDeletion: { type: "boolean" },
              controller: { type: "boolean" },
              kind: { type: "string", default: "" },
              name: { type: "string", default: "" },
              uid: { type: "string", default: "" },
            },
            "x-kubernetes-map-type": "atomic",
          },
          "x-kubernetes-list-map-keys": ["uid"],
          "x-kubernetes-list-type": "map",
          "x-kubernetes-patch-merge-key": "uid",
          "x-kubernetes-patch-strategy": "merge",
        },
        resourceVersion: { type: "string" },
        selfLink: { type: "string" },
        uid: { type: "string" },
      },
    },
    [LIST_META]: {
      type: "object",
      properties: {
        continue: { type: "string" },
        remainingItemCount: { type: "integer", format: "int64" },
        resourceVersion: { type: "string" },
        selfLink: { type: "string" },
      },
    },
    [STATUS]: {
      type: "object",
      properties: {
        ...typeMetaProperties(),
        code: { type: "integer", format: "int32" },
        details: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        message: { type: "string" },
        metadata: { default: {}, allOf: [ref(LIST_META)] },
        reason: { type: "string" },
        status: { type: "string" },
      },
      "x-kubernetes-group-version-kind": [gvk("", "v1", "Status")],
    },
    [DELETE_OPTIONS]: {
      type: "object",
      properties: {
        ...typeMetaProperties(),
        dryRun: { type: "array", items: { type: "string", default: "" } },
        gracePeriodSeconds: { type: "integer", format: "int64" },
        orphanDependents: { type: "boolean" },
        preconditions: {
          type: "object",
          properties: { resourceVersion: { type: "string" }, uid: { type: "string" } },
        },
        propagationPolicy: { type: "string" },
      },
    },
    [PATCH]: {
      description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
      type: "object",
    },
  };
}

function scaleSchema(): Json {
  return {
    type: "object",
    properties: {
      ...typeMetaProperties(),
      metadata: { default: {}, allOf: [ref(OBJECT_META)] },
      spec: { type: "object", properties: { replicas: { type: "integer", format: "int32" } } },
      status: {
        type: "object",
        required: ["replicas"],
        properties: { replicas: { type: "integer", format: "int32", default: 0 }, selector: { type: "string" } },
      },
    },
    "x-kubernetes-group-version-kind": [gvk("autoscaling", "v1", "Scale")],
  };
}

/** Adds to `schemas` every definition of `library` that `root` references, transitively. */
function addReferenced(root: unknown, library: Record<string, Json>, schemas: Record<string, Json>): void {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...node);
    else if (isRecord(node)) {
      const target = node["$ref"];
      if (typeof target === "string" && target.startsWith("#/components/schemas/")) {
        const name = target.slice("#/components/schemas/".length);
        const found = library[name];
        if (found && !schemas[name]) {
          schemas[name] = found;
          pending.push(found);
        }
      }
      for (const value of Object.values(node)) if (typeof value === "object") pending.push(value);
    }
  }
}

/**
 * Builds the OpenAPI 3.0 document of one group-version from its served resources. `builtins` holds
 * the schemas of built-in kinds and of the types they reference (see builtin-schemas.ts).
 */
export function buildGroupVersionDocument(
  resources: readonly ServedResource[],
  serverVersion: string = DEFAULT_SERVER_VERSION,
  builtins: Record<string, Json> = {},
): Json {
  const paths: Record<string, Json> = {};
  const schemas: Record<string, Json> = metaSchemas();
  for (const served of resources) {
    Object.assign(paths, resourcePaths(served));
    const name = definitionName(served.group, served.version, served.kind);
    schemas[name] = kindSchema(served, builtins[name]);
    addReferenced(schemas[name], builtins, schemas);
    schemas[definitionName(served.group, served.version, served.listKind)] = listSchema(served);
    if (served.subresources.scale) schemas[SCALE] = scaleSchema();
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: serverVersion },
    paths,
    components: { schemas },
  };
}

/** A cached, serialized document with its content hash. */
interface Built {
  body: string;
  hash: string;
}

/** The swagger 2.0 document in both encodings, with the hash of its JSON. */
interface BuiltSwagger {
  json: string;
  protobuf: Uint8Array;
  hash: string;
}

/** An HTTP answer for an /openapi request. */
export interface OpenApiResponse {
  status: number;
  contentType: string;
  body: string | Uint8Array;
  headers?: Record<string, string>;
}

/**
 * Serves `/openapi/v3` and `/openapi/v3/<group-version>` from a registry, caching the serialized
 * documents until the registry changes. Call {@link close} to stop listening to the registry.
 */
export class OpenApiDocuments {
  /** The index of current documents; undefined after any registry change. */
  private cache: Map<string, Built> | undefined;
  /** `/openapi/v2`, built from the current documents; undefined after any registry change. */
  private swagger: BuiltSwagger | undefined;
  /** Documents by group-version key, kept across changes of other group-versions. */
  private readonly built = new Map<string, Built>();
  private readonly unsubscribe: () => void;
  /** Schemas of the built-in kinds, loaded once on first use (see builtin-schemas.ts). */
  private builtins: Record<string, Json> = {};
  private loadingBuiltins: Promise<void> | undefined;

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly serverVersion: string = DEFAULT_SERVER_VERSION,
  ) {
    // A CRD coming or going changes its own group-version's document only.
    this.unsubscribe = registry.subscribe(({ served }) => {
      this.built.delete(groupVersionKey(served.group, served.version));
      this.cache = undefined;
      this.swagger = undefined;
    });
  }

  close(): void {
    this.unsubscribe();
  }

  private documents(): Map<string, Built> {
    if (this.cache) return this.cache;
    const byGroupVersion = new Map<string, ServedResource[]>();
    for (const served of this.registry.all()) {
      const key = groupVersionKey(served.group, served.version);
      let list = byGroupVersion.get(key);
      if (!list) {
        list = [];
        byGroupVersion.set(key, list);
      }
      list.push(served);
    }
    const cache = new Map<string, Built>();
    for (const [key, resources] of [...byGroupVersion].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      let built = this.built.get(key);
      if (!built) {
        const body = JSON.stringify(buildGroupVersionDocument(resources, this.serverVersion, this.builtins));
        // The apiserver publishes a SHA-512 of the document; clients only compare it for equality.
        built = { body, hash: createHash("sha512").update(body).digest("hex").toUpperCase() };
        this.built.set(key, built);
      }
      cache.set(key, built);
    }
    for (const key of this.built.keys()) if (!cache.has(key)) this.built.delete(key);
    this.cache = cache;
    return cache;
  }

  /** The `/openapi/v3` discovery index. */
  discovery(): { paths: Record<string, { serverRelativeURL: string }> } {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [key, built] of this.documents())
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${built.hash}` };
    return { paths };
  }

  /** The serialized document of a group-version key (`api/v1`, `apis/apps/v1`), if served. */
  document(key: string): Built | undefined {
    return this.documents().get(key);
  }

  /** The swagger 2.0 document of everything served now (see openapi-v2.ts). */
  swaggerDocument(): BuiltSwagger {
    if (this.swagger) return this.swagger;
    const docs = [...this.documents().values()].map((built) => JSON.parse(built.body) as Json);
    const doc = swaggerDocument(docs, this.serverVersion);
    const json = JSON.stringify(doc);
    this.swagger = {
      json,
      protobuf: encodeSwaggerProtobuf(doc),
      hash: createHash("sha512").update(json).digest("hex").toUpperCase(),
    };
    return this.swagger;
  }

  /** Loads the built-in kinds' schemas once; a failure leaves them permissive. */
  loadBuiltins(): Promise<void> {
    this.loadingBuiltins ??= builtinSchemas(
      this.registry.all().filter((s) => !s.custom),
      definitionName,
      { objectMeta: OBJECT_META, listMeta: LIST_META },
    ).then(
      (schemas) => {
        this.builtins = schemas;
        this.built.clear();
        this.cache = undefined;
        this.swagger = undefined;
      },
      () => {},
    );
    return this.loadingBuiltins;
  }

  /**
   * Answers an `/openapi/...` request, or returns undefined when `path` is not an OpenAPI path.
   * A request carrying the current `hash` gets an immutable cache header, as the real server sends.
   */
  async handle(path: string, query: URLSearchParams, accept = ""): Promise<OpenApiResponse | undefined> {
    await this.loadBuiltins();
    if (path === "/openapi/v2" || path === "/openapi/v2/") {
      const swagger = this.swaggerDocument();
      const headers = { etag: `"${swagger.hash}"`, vary: "Accept" };
      const encoding = swaggerEncoding(accept);
      if (encoding === undefined) {
        return { status: 406, contentType: "text/plain; charset=utf-8", body: "", headers: { vary: "Accept" } };
      }
      return encoding === "protobuf"
        ? { status: 200, contentType: OPENAPI_V2_PROTOBUF, body: swagger.protobuf, headers }
        : { status: 200, contentType: "application/json", body: swagger.json, headers };
    }
    if (path === "/openapi/v3" || path === "/openapi/v3/") {
      return { status: 200, contentType: "application/json", body: JSON.stringify(this.discovery()) };
    }
    if (!path.startsWith("/openapi/v3/")) return undefined;
    const key = path.slice("/openapi/v3/".length).replace(/\/+$/, "");
    const built = this.document(key);
    if (!built) return { status: 404, contentType: "text/plain; charset=utf-8", body: "404 page not found\n" };
    const headers: Record<string, string> = { etag: `"${built.hash}"` };
    const hash = query.get("hash");
    if (hash !== null && hash === built.hash) headers["cache-control"] = "public, immutable";
    else headers["cache-control"] = "no-cache, private";
    return { status: 200, contentType: "application/json", body: built.body, headers };
  }
}

/**
 * The encoding of `/openapi/v2` an Accept header asks for, as kube-openapi's handler picks it: the
 * first media range (in the header's order) matching JSON or either spelling of the protobuf type, JSON
 * for wildcards; undefined (406) when none matches. client-go asks for protobuf only.
 */
function swaggerEncoding(accept: string): "json" | "protobuf" | undefined {
  if (accept.trim() === "") return "json";
  for (const range of accept.split(",")) {
    const type = (range.split(";")[0] ?? "").trim().toLowerCase();
    if (type === "application/json" || type === "*/*" || type === "application/*") return "json";
    if (type === OPENAPI_V2_PROTOBUF || type === OPENAPI_V2_PROTOBUF_DEPRECATED) return "protobuf";
  }
  return undefined;
}

/** What {@link openApiPlugin} needs from the server (a structural subset of its plugin context). */
export interface OpenApiPluginContext {
  registry: ResourceRegistry;
  addRoute(prefix: string, handler: (ctx: RequestContext) => void | Promise<void>): void;
}

/**
 * Serves `/openapi/v3` and its group-version documents, and `/openapi/v2`, on a server. Anything else
 * under `/openapi/` answers 404.
 * Returns the function that stops following the registry.
 */
export function openApiPlugin(ctx: OpenApiPluginContext): () => void {
  const documents = new OpenApiDocuments(ctx.registry);
  ctx.addRoute("/openapi/", async (rc) => {
    if (rc.req.method !== "GET" && rc.req.method !== "HEAD") throw resourceNotServed();
    const answer = await documents.handle(rc.url.pathname, rc.url.searchParams, rc.req.headers.accept);
    if (!answer || answer.status === 404) throw resourceNotServed();
    rc.res.writeHead(answer.status, {
      "Content-Type": answer.contentType,
      "Content-Length": Buffer.byteLength(answer.body),
      ...answer.headers,
    });
    rc.res.end(answer.body);
  });
  return () => documents.close();
}
