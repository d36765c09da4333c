/**
 * `defineResource`: one TypeScript definition of a custom resource gives its static types (from
 * the TypeBox schemas), its REST coordinates (a {@link ResourceKind}) and, through `toCrd`, its
 * CustomResourceDefinition.
 *
 * Expected flow: define the kind once at module level; pass it to the client, controllers and
 * handlers (objects come back typed); `toCrd(kind)` when registering or generating manifests.
 *
 * Guarantees:
 * - The definition is checked when it is made: names, versions, printer columns, selectable
 *   fields and every schema are validated, and the CRD is built once, so a schema Kubernetes would
 *   refuse throws here, at import time, naming the field.
 * - The returned kind is frozen; `make` never mutates its input.
 *
 * Caveats:
 * - With several versions and no conversion webhook, Kubernetes converts between versions by
 *   rewriting `apiVersion` only (strategy `None`): the schemas must be compatible.
 */
import type { TSchema } from "typebox";
import { buildCrd } from "./crd.ts";
import { pluralize } from "./plural.ts";
import type {
  CheckStaticTypes,
  CustomObject,
  CustomResource,
  MultiVersionOptions,
  PrinterColumn,
  ResolvedVersion,
  ResourceNames,
  ScaleSubresource,
  SingleVersionOptions,
  VersionDefinition,
} from "./resource-types.ts";

/** A definition problem that is not about one schema field (names, versions, columns). */
export class ResourceDefinitionError extends Error {
  override readonly name = "ResourceDefinitionError";
}

/**
 * Defines a custom resource kind from TypeBox schemas.
 *
 * ```ts
 * export const ExchangeRate = defineResource({
 *   group: "operators.example.com", version: "v1", kind: "ExchangeRate", scope: "Namespaced",
 *   shortNames: ["er"],
 *   spec: Type.Object({ currency: Type.Enum(["CAD", "USD"]) }),
 *   status: Type.Object({ rate: Type.Optional(Type.Number()) }),
 * });
 * const usd = ExchangeRate.make({ metadata: { name: "usd" }, spec: { currency: "USD" } });
 * ```
 *
 * A schema whose TypeScript type comes out as `never` (TypeBox's `Type.Union(values.map(Type.Literal))`)
 * is a compile error naming the field: no object of such a kind could be written.
 *
 * @throws ResourceDefinitionError for invalid names, versions, printer columns or selectable fields.
 * @throws SchemaTranslationError for a schema Kubernetes would not accept, naming the field.
 */
export function defineResource<const S extends TSchema, const St extends TSchema | undefined = undefined>(
  options: (SingleVersionOptions<S, St> | MultiVersionOptions<S, St>) & CheckStaticTypes<S, St>,
): CustomResource<S, St> {
  const kind = options.kind;
  const fail = (message: string): never => {
    throw new ResourceDefinitionError(`${kind || "defineResource"}: ${message}`);
  };
  checkNames(options, fail);
  const versions = resolveVersions(options, fail);
  const typed = versions[0] as ResolvedVersion;
  const plural = options.plural ?? pluralize(kind);
  const singular = options.singular ?? kind.toLowerCase();
  const listKind = options.listKind ?? `${kind}List`;
  const apiVersion = `${options.group}/${typed.name}`;
  const shortNames = [...(options.shortNames ?? [])];
  const categories = [...(options.categories ?? [])];
  for (const [what, value] of [
    ["plural", plural],
    ["singular", singular],
    ...shortNames.map((s) => ["shortName", s]),
    ...categories.map((c) => ["category", c]),
  ] as const) {
    if (!DNS1035_LABEL.test(value))
      fail(`${what} "${value}" must be a lower-case DNS-1035 label (a-z, 0-9, '-', starting with a letter)`);
  }
  if (!DNS1035_LABEL.test(listKind.toLowerCase()))
    fail(`listKind "${listKind}" must be alphanumeric, starting with a letter`);
  if (listKind === kind) fail("kind and listKind may not be the same");
  const base = {
    group: options.group,
    version: typed.name,
    kind,
    plural,
    singular,
    listKind,
    namespaced: options.scope === "Namespaced",
    scope: options.scope,
    shortNames: Object.freeze(shortNames),
    categories: Object.freeze(categories),
    crdName: `${plural}.${options.group}`,
    apiVersion,
    versions: Object.freeze(versions),
    storageVersion: (versions.find((v) => v.storage) as ResolvedVersion).name,
    specSchema: typed.spec as S,
    statusSchema: typed.status as St,
  };
  const crd = buildCrd(base);
  const resource: CustomResource<S, St> = {
    ...base,
    crd,
    make(input) {
      return { apiVersion, kind, ...input } as CustomObject<S, St>;
    },
  };
  Object.freeze(resource);
  CUSTOM.add(resource);
  return resource;
}

/** Whether a kind was made by {@link defineResource} (and so has a CRD to register). */
export function isCustomResource(kind: unknown): kind is CustomResource {
  return typeof kind === "object" && kind !== null && CUSTOM.has(kind);
}

/** Kinds made here; a WeakSet so the check cannot be fooled by a look-alike object. */
const CUSTOM = new WeakSet<object>();

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PRINTER_COLUMN_TYPES = new Set(["integer", "number", "string", "boolean", "date"]);
const PRINTER_COLUMN_FORMATS = new Set(["int32", "int64", "float", "double", "byte", "date", "date-time", "password"]);
/** apiextensions' `MaxSelectableFields`. */
const MAX_SELECTABLE_FIELDS = 8;

function checkNames(options: ResourceNames, fail: (m: string) => never): void {
  const { group, kind, scope } = options;
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(kind ?? ""))
    fail(`kind "${kind}" must be alphanumeric CamelCase, starting with a letter`);
  if (!group || group.length > 253 || !DNS1123_SUBDOMAIN.test(group))
    fail(`group "${group}" must be a lower-case DNS subdomain`);
  if (!group.includes(".")) fail(`group "${group}" should be a domain with at least one dot`);
  if (/(^|\.)(k8s\.io|kubernetes\.io)$/.test(group)) {
    fail(
      `group "${group}" is reserved for Kubernetes APIs (the server demands an api-approved.kubernetes.io annotation)`,
    );
  }
  if (scope !== "Namespaced" && scope !== "Cluster")
    fail(`scope must be "Namespaced" or "Cluster", got ${JSON.stringify(scope)}`);
}

function resolveVersions(
  options: SingleVersionOptions<TSchema, TSchema | undefined> | MultiVersionOptions<TSchema, TSchema | undefined>,
  fail: (m: string) => never,
): ResolvedVersion[] {
  const defs: VersionDefinition[] =
    "versions" in options && options.versions !== undefined
      ? [...options.versions]
      : [
          {
            ...(options as SingleVersionOptions<TSchema, TSchema | undefined>),
            name: (options as SingleVersionOptions<TSchema, TSchema | undefined>).version,
          },
        ];
  if (defs.length === 0) fail("at least one version is needed");
  const explicitStorage = defs.filter((d) => d.storage === true);
  if (explicitStorage.length > 1)
    fail(`exactly one version may be the storage version, got ${explicitStorage.map((d) => d.name).join(", ")}`);
  const storageName = explicitStorage[0]?.name ?? defs[0]?.name;
  const seen = new Set<string>();
  return defs.map((d, i) => {
    if (typeof d.name !== "string" || !DNS1035_LABEL.test(d.name))
      fail(`version "${d.name}" must be a DNS-1035 label like v1 or v1beta1`);
    if (seen.has(d.name)) fail(`version ${d.name} is defined twice`);
    seen.add(d.name);
    if (d.spec === undefined) fail(`version ${d.name} has no spec schema`);
    if (i === 0 && d.served === false) fail(`version ${d.name} is the typed version and must be served`);
    if (d.deprecationWarning !== undefined && !d.deprecated)
      fail(`version ${d.name}: deprecationWarning needs deprecated: true`);
    const printerColumns = [...(d.printerColumns ?? [])];
    for (const c of printerColumns) checkPrinterColumn(c, d.name, fail);
    const selectableFields = [...(d.selectableFields ?? [])];
    if (new Set(selectableFields).size > MAX_SELECTABLE_FIELDS)
      fail(`version ${d.name}: at most ${MAX_SELECTABLE_FIELDS} selectable fields`);
    if (new Set(selectableFields).size !== selectableFields.length)
      fail(`version ${d.name}: duplicate selectable field`);
    const resolved: ResolvedVersion = {
      name: d.name,
      served: d.served ?? true,
      storage: d.name === storageName,
      deprecated: d.deprecated ?? false,
      ...(d.deprecationWarning !== undefined ? { deprecationWarning: d.deprecationWarning } : {}),
      spec: d.spec,
      ...(d.status !== undefined ? { status: d.status } : {}),
      printerColumns,
      selectableFields,
      validations: [...(d.validations ?? [])],
      ...(d.scale !== undefined ? { scale: checkScale(d.scale, d.name, fail) } : {}),
    };
    return resolved;
  });
}

/** apiextensions' `ValidateCustomResourceDefinitionSubresources` rules for `scale`. */
function checkScale(scale: ScaleSubresource, version: string, fail: (m: string) => never): ScaleSubresource {
  const where = `version ${version} scale`;
  const simple = /^(\.[A-Za-z_][\w-]*)+$/;
  if (!simple.test(scale.specReplicasPath ?? "") || !scale.specReplicasPath.startsWith(".spec.")) {
    fail(`${where}: specReplicasPath ${JSON.stringify(scale.specReplicasPath)} should be a json path under .spec`);
  }
  if (!simple.test(scale.statusReplicasPath ?? "") || !scale.statusReplicasPath.startsWith(".status.")) {
    fail(
      `${where}: statusReplicasPath ${JSON.stringify(scale.statusReplicasPath)} should be a json path under .status`,
    );
  }
  const selector = scale.labelSelectorPath;
  if (selector !== undefined && (!simple.test(selector) || !/^\.(spec|status)\./.test(selector))) {
    fail(`${where}: labelSelectorPath ${JSON.stringify(selector)} should be a json path under either .spec or .status`);
  }
  return { ...scale };
}

function checkPrinterColumn(c: PrinterColumn, version: string, fail: (m: string) => never): void {
  const where = `version ${version} printer column ${JSON.stringify(c.name)}`;
  if (!c.name) fail(`version ${version}: a printer column needs a name`);
  if (!PRINTER_COLUMN_TYPES.has(c.type)) fail(`${where}: type must be one of ${[...PRINTER_COLUMN_TYPES].join(",")}`);
  if (c.format !== undefined && !PRINTER_COLUMN_FORMATS.has(c.format)) {
    fail(`${where}: format must be one of ${[...PRINTER_COLUMN_FORMATS].join(",")}`);
  }
  if (!c.jsonPath?.startsWith(".")) fail(`${where}: jsonPath must be a simple json path starting with .`);
}
