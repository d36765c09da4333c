/**
 * A `defineResource` kind -> its apiextensions.k8s.io/v1 CustomResourceDefinition.
 *
 * Guarantees:
 * - Every version's `openAPIV3Schema` is structural and passes {@link structuralProblems}
 *   (checked here, so a translation bug is an error at definition time, not a 422 in a cluster).
 * - The root schema declares `apiVersion`/`kind` (strings) and `metadata` (just `type: object`,
 *   the only shape the server allows), then `spec` and, when a status schema exists, `status`
 *   with the `status` subresource.
 * - `spec` is required when its schema has required fields; otherwise it defaults to `{}`, so an
 *   object read back always has the `spec` its TypeScript type promises.
 */
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  JSONSchemaProps,
} from "kubernetes-types/apiextensions/v1.d.ts";
import type { KubeSchema } from "./kube-schema.ts";
import type { CustomResource, ResolvedVersion } from "./resource-types.ts";
import { checkValidationRules, SchemaTranslationError, translateSchema } from "./schema-translate.ts";
import { formatProblem, structuralProblems } from "./structural.ts";

/** What the CRD is built from: the data of a `CustomResource`. */
export type CrdSource = Pick<
  CustomResource,
  "group" | "kind" | "plural" | "singular" | "listKind" | "scope" | "shortNames" | "categories" | "crdName" | "versions"
>;

/** Options of {@link toCrd}. */
export interface ToCrdOptions {
  /**
   * Longest `description` kept in the schemas, in characters (what controller-gen's
   * `crd:maxDescLen` does): longer ones are cut at the last white space before the limit and end
   * with `...`; `0` removes descriptions. Default: all kept. Built-in schemas carry Kubernetes'
   * own documentation (a `JobTemplateSpec` makes a CRD of ~300 KB), more than the 256 KiB
   * `kubectl apply` (client-side) can store in its last-applied annotation; server-side apply and
   * the operator's own registration have no such limit (etcd's is 1.5 MiB).
   */
  maxDescriptionLength?: number;
}

/**
 * The CustomResourceDefinition of a kind made by `defineResource`: a fresh copy each call, safe
 * to modify (e.g. to add a conversion webhook).
 */
export function toCrd(resource: Pick<CustomResource, "crd">, options: ToCrdOptions = {}): CustomResourceDefinition {
  const crd = structuredClone(resource.crd);
  const max = options.maxDescriptionLength;
  if (max !== undefined) {
    if (!Number.isInteger(max) || max < 0) {
      throw new RangeError(`maxDescriptionLength must be an integer >= 0, got ${String(max)}`);
    }
    for (const version of crd.spec.versions) {
      const schema = version.schema?.openAPIV3Schema;
      if (schema !== undefined) limitDescriptions(schema as unknown as KubeSchema, max);
    }
  }
  return crd;
}

/** Cuts (or, at 0, removes) every description in a schema, in place. */
function limitDescriptions(schema: KubeSchema, max: number): void {
  if (schema.description !== undefined) {
    if (max === 0) delete schema.description;
    else schema.description = truncate(schema.description, max);
  }
  for (const child of Object.values(schema.properties ?? {})) limitDescriptions(child, max);
  if (schema.items !== undefined) limitDescriptions(schema.items, max);
  if (typeof schema.additionalProperties === "object") limitDescriptions(schema.additionalProperties, max);
  for (const member of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    limitDescriptions(member, max);
  }
}

function truncate(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const cut = chars.slice(0, max).join("");
  // Cut between words where there is a space to cut at, as controller-gen does.
  const space = cut.search(/\s\S*$/);
  return `${space > 0 ? cut.slice(0, space) : cut}...`;
}

/** Builds and checks the CRD; `defineResource` calls it once. */
export function buildCrd(source: CrdSource): CustomResourceDefinition {
  const names: CustomResourceDefinition["spec"]["names"] = {
    kind: source.kind,
    listKind: source.listKind,
    plural: source.plural,
    singular: source.singular,
  };
  if (source.shortNames.length > 0) names.shortNames = [...source.shortNames];
  if (source.categories.length > 0) names.categories = [...source.categories];
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: source.crdName },
    spec: {
      group: source.group,
      names,
      scope: source.scope,
      versions: source.versions.map((v) => buildVersion(source, v)),
    },
  };
}

function buildVersion(source: CrdSource, v: ResolvedVersion): CustomResourceDefinitionVersion {
  const subject = source.versions.length > 1 ? `${source.kind} ${v.name}` : source.kind;
  const spec = translateSchema(v.spec, "spec", subject);
  if (spec.type !== "object")
    throw new SchemaTranslationError("spec", "must be an object schema (Type.Object)", subject);
  const status = v.status === undefined ? undefined : translateSchema(v.status, "status", subject);
  if (status !== undefined && status.type !== "object") {
    throw new SchemaTranslationError("status", "must be an object schema (Type.Object)", subject);
  }
  if (status !== undefined) reserveStateField(status, subject);
  const root: KubeSchema = {
    type: "object",
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: specWithPresence(spec),
      ...(status !== undefined ? { status } : {}),
    },
  };
  if (spec.required !== undefined && spec.required.length > 0) root.required = ["spec"];
  if (v.validations.length > 0)
    root["x-kubernetes-validations"] = checkValidationRules([...v.validations], "(object)", subject);

  const problems = structuralProblems(root, { statusSubresource: status !== undefined });
  if (problems.length > 0) {
    // The translator should make this impossible; if it happens it is our bug, not the user's.
    throw new Error(
      `${subject}: generated schema is not structural (please report): ${problems.map(formatProblem).join("; ")}`,
    );
  }

  const version: CustomResourceDefinitionVersion = {
    name: v.name,
    served: v.served,
    storage: v.storage,
    // KubeSchema is JSONSchemaProps plus the x-kubernetes-* keys kubernetes-types leaves out.
    schema: { openAPIV3Schema: root as unknown as JSONSchemaProps },
  };
  if (v.deprecated) version.deprecated = true;
  if (v.deprecationWarning !== undefined) version.deprecationWarning = v.deprecationWarning;
  if (status !== undefined) version.subresources = { status: {} };
  if (v.scale !== undefined) {
    const scale: NonNullable<CustomResourceDefinitionVersion["subresources"]>["scale"] = {
      specReplicasPath: v.scale.specReplicasPath,
      statusReplicasPath: v.scale.statusReplicasPath,
    };
    if (v.scale.labelSelectorPath !== undefined) scale.labelSelectorPath = v.scale.labelSelectorPath;
    version.subresources = { ...version.subresources, scale };
  }
  if (v.printerColumns.length > 0) {
    version.additionalPrinterColumns = v.printerColumns.map((c) => {
      const column: CustomResourceColumnDefinition = { name: c.name, type: c.type, jsonPath: c.jsonPath };
      if (c.description !== undefined) column.description = c.description;
      if (c.format !== undefined) column.format = c.format;
      if (c.priority !== undefined) column.priority = c.priority;
      return column;
    });
  }
  if (v.selectableFields.length > 0) {
    for (const path of v.selectableFields) checkSelectableField(path, root, subject);
    version.selectableFields = v.selectableFields.map((jsonPath) => ({ jsonPath }));
  }
  return version;
}

/**
 * `status.capstan`: where Kopf-style handlers keep their state (one map of strings per operator),
 * so that a handler's result, its progress and the last handled configuration go to the API
 * server in one status write. Declared in every generated CRD with a status, so that pruning
 * keeps it; a status schema may not use the name itself.
 */
export const STATUS_STATE_FIELD = "capstan";

function reserveStateField(status: KubeSchema, subject: string): void {
  if (status.properties?.[STATUS_STATE_FIELD] !== undefined) {
    throw new SchemaTranslationError(
      `status.${STATUS_STATE_FIELD}`,
      "is reserved for the state of Capstan's handlers; rename the field",
      subject,
    );
  }
  status.properties = {
    ...status.properties,
    [STATUS_STATE_FIELD]: {
      type: "object",
      description: "State of Capstan operators' handlers (one map per operator), written by the operators.",
      additionalProperties: { type: "object", additionalProperties: { type: "string" } },
    },
  };
}

function specWithPresence(spec: KubeSchema): KubeSchema {
  const hasRequired = spec.required !== undefined && spec.required.length > 0;
  // A default would be validated against the spec's own CEL rules, which may not hold for `{}`.
  if (hasRequired || spec.default !== undefined || spec["x-kubernetes-validations"] !== undefined) return spec;
  return { ...spec, default: {} };
}

/**
 * The server's rule for `selectableFields`: a dot path to a string, boolean or integer field of
 * the schema, not under metadata.
 */
function checkSelectableField(path: string, root: KubeSchema, subject: string): void {
  const fail = (reason: string): never => {
    throw new SchemaTranslationError(path, `selectable field ${reason}`, subject);
  };
  if (!/^(\.[A-Za-z_][\w-]*)+$/.test(path)) fail("must be a dot path like .spec.color");
  const segments = path.slice(1).split(".");
  if (segments[0] === "metadata") fail("must not point to fields in metadata");
  let node: KubeSchema | undefined = root;
  for (const segment of segments) node = node?.properties?.[segment];
  const type = node === undefined ? undefined : node.type;
  if (node === undefined) fail("does not name a field of the schema");
  if (type !== "string" && type !== "boolean" && type !== "integer") {
    fail("must point to a field of type string, boolean or integer");
  }
}
