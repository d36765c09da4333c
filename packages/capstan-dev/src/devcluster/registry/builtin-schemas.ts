/**
 * OpenAPI schemas of the built-in kinds, derived from the models @kubernetes/client-node generates
 * from Kubernetes' own OpenAPI document (each model lists its JSON fields with their types and
 * formats). They give `kubectl explain` and other schema readers the real field tree of a Pod,
 * a Deployment or a ConfigMap.
 *
 * Expected flow: the OpenAPI documents call {@link builtinSchemas} once, lazily (the first
 * `/openapi/v3` request), with the built-in kinds served; model files are imported one by one as the
 * field tree reaches them, so server start-up pays nothing.
 *
 * Guarantees: every field of a kind and of its nested types is present with its type; recursive
 * types (JSONSchemaProps) are references, not infinite trees; a kind without a model gets no schema
 * (the caller keeps its permissive one).
 *
 * Caveats: the models carry neither descriptions nor patch strategies (`x-kubernetes-patch-*`,
 * list types), so `kubectl explain` shows types without prose, and strategic-merge metadata still
 * comes from kubectl's compiled-in types; nested definitions are named after the models
 * (`V1Container`), not `io.k8s.api.core.v1.Container`.
 */

type Json = Record<string, unknown>;

/** One JSON field of a client-node model: its name, its type as the generator writes it, its format. */
export interface Attribute {
  baseName: string;
  type: string;
  format?: string;
}

interface Model {
  getAttributeTypeMap?: () => Attribute[];
  attributeTypeMap?: Attribute[];
}

/** Model names whose schema is the shared ObjectMeta/ListMeta definition of the documents. */
export interface SchemaNames {
  objectMeta: string;
  listMeta: string;
}

const MODEL_NAME = /^[A-Z][A-Za-z0-9]*$/;

/** The fields of the client-node model `name` (`V1Container`), or undefined when there is no such model. */
export async function loadModel(name: string): Promise<Attribute[] | undefined> {
  if (!MODEL_NAME.test(name)) return undefined;
  try {
    const module = (await import(`@kubernetes/client-node/dist/gen/models/${name}.js`)) as Record<string, Model>;
    const model = module[name];
    return model?.getAttributeTypeMap?.() ?? model?.attributeTypeMap;
  } catch {
    return undefined;
  }
}

function capitalize(s: string): string {
  return s === "" ? s : s[0]!.toUpperCase() + s.slice(1);
}

/** The client-node model names a kind may have (`CoreV1Event`, `EventsV1Event`, `V1ConfigMap`). */
export function modelCandidates(group: string, version: string, kind: string): string[] {
  const prefix = group === "" ? "Core" : capitalize(group.split(".")[0] ?? "");
  return [`${prefix}${capitalize(version)}${kind}`, `${capitalize(version)}${kind}`];
}

/**
 * Builds component schemas for `kinds`: `schemas[definitionName]` for each kind found, plus one
 * entry per nested model (named after it). `definitionName` maps a kind to its document name.
 */
export async function builtinSchemas(
  kinds: ReadonlyArray<{ group: string; version: string; kind: string }>,
  definitionName: (group: string, version: string, kind: string) => string,
  names: SchemaNames,
): Promise<Record<string, Json>> {
  const out: Record<string, Json> = {};
  // Each model file is imported once; the fields of every model are filled concurrently (so the
  // files of one level load in parallel), and a reference only needs the model to exist, which keeps
  // recursive types (JSONSchemaProps) from waiting on themselves.
  const models = new Map<string, Promise<Attribute[] | undefined>>();
  const fills: Promise<void>[] = [];
  const filled = new Set<string>();
  const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
  const model = (name: string) => {
    let load = models.get(name);
    if (!load) {
      load = loadModel(name);
      models.set(name, load);
    }
    return load;
  };

  const fill = (as: string, attributes: Attribute[]): void => {
    if (filled.has(as)) return;
    filled.add(as);
    const properties: Json = {};
    out[as] = { type: "object", properties };
    fills.push(
      (async () => {
        for (const [name, schema] of await Promise.all(
          attributes.map(async (a) => [a.baseName, await typeSchema(a.type, a.format || undefined)] as const),
        )) {
          properties[name] = schema;
        }
      })(),
    );
  };

  const typeSchema = async (type: string, format: string | undefined): Promise<Json> => {
    const array = /^Array<(.+)>$/.exec(type);
    if (array) return { type: "array", items: await typeSchema(array[1]!, undefined) };
    const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
    if (map) return { type: "object", additionalProperties: await typeSchema(map[1]!, undefined) };
    switch (type) {
      case "string":
        return format ? { type: "string", format } : { type: "string" };
      case "number":
        if (format === "int32" || format === "int64") return { type: "integer", format };
        return format ? { type: "number", format } : { type: "number" };
      case "boolean":
        return { type: "boolean" };
      case "Date":
      // metav1.MicroTime: client-node names a type it has no model for; its OpenAPI schema is Time's.
      case "V1MicroTime":
        return { type: "string", format: "date-time" };
      case "IntOrString":
        return { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] };
      case "any":
      case "object":
        return { type: "object", "x-kubernetes-preserve-unknown-fields": true };
      case "V1ObjectMeta":
        return ref(names.objectMeta);
      case "V1ListMeta":
        return ref(names.listMeta);
    }
    const attributes = await model(type);
    if (!attributes) return { "x-kubernetes-preserve-unknown-fields": true };
    fill(type, attributes);
    return ref(type);
  };

  for (const { group, version, kind } of kinds) {
    for (const candidate of modelCandidates(group, version, kind)) {
      const attributes = await model(candidate);
      if (!attributes) continue;
      fill(definitionName(group, version, kind), attributes);
      break;
    }
  }
  // Filling one model starts the fills of the models it references: wait until no new one appears.
  for (let done = 0; done < fills.length; ) {
    const batch = fills.slice(done);
    done = fills.length;
    await Promise.all(batch);
  }
  return out;
}
