/**
 * The patch types the server accepts, by Content-Type. Each patcher turns (current object, patch body)
 * into the next object; the REST layer then writes it with the same rules as an update. Part 2 registers
 * `application/strategic-merge-patch+json` (real strategic merge) and `application/apply-patch+yaml`
 * (server-side apply) here without touching the handlers.
 */
import { parse as parseYaml } from "yaml";
import { applyPatchType, strategicMergePatchType } from "../apply/patch-types.ts";
import { badRequest, unsupportedMediaType } from "../machinery/status.ts";
import { applyMergePatch } from "../patch/merge-patch.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { yamlDepthMessage } from "../serializer/body.ts";
import { GoJsonSyntaxError, parseJsonLimited, yamlDepthProblem } from "../serializer/nesting-depth.ts";
import { applyJsonPatchRequest, jsonPatchRejected } from "./json-patch-request.ts";
import { patchResultTooDeep } from "./patch-result-depth.ts";

export interface PatchContext {
  served: ServedResource;
  /** Query parameters of the request (`fieldManager`, `force`...). */
  query: URLSearchParams;
  /** `status` or `scale` when the patch targets that subresource. */
  subresource?: string;
}

/** Turns the current object and a raw patch into the next object. Throws ApiError for a bad patch. */
export type Patcher = (current: JsonObject, patch: string, context: PatchContext) => JsonObject;

export interface PatchType {
  contentType: string;
  /** False for patch types a served resource refuses (strategic merge on custom resources). */
  appliesTo(served: ServedResource): boolean;
  patch: Patcher;
}

/** The order kube-apiserver lists patch types in its 415 message. */
const ORDER = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
  "application/apply-patch+yaml",
];

export class PatchTypes {
  private readonly types = new Map<string, PatchType>();

  register(type: PatchType): void {
    this.types.set(type.contentType, type);
  }

  /** The patcher for a Content-Type, or the 415 the real server answers with. */
  resolve(contentType: string, served: ServedResource): Patcher {
    const type = this.types.get(contentType);
    if (type?.appliesTo(served)) return type.patch;
    const accepted = ORDER.filter((t) => this.types.get(t)?.appliesTo(served) ?? false);
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
    );
  }
}

/**
 * Parses a JSON or merge patch, malformed or too deep text answered as patch.go answers it: under
 * fieldValidation Strict or Warn (the default) its strict pre-decode fails first ("error decoding
 * patch: ..."); under Ignore the patch library's own decode does (json-patch's message as is, merge
 * patch's ErrBadJSONPatch).
 */
function decodeJson(patch: string, query: URLSearchParams, kind: "json" | "merge"): unknown {
  try {
    return parseJsonLimited(patch);
  } catch (err) {
    if (!(err instanceof GoJsonSyntaxError)) throw err;
    if ((query.get("fieldValidation") ?? "") !== "Ignore") throw badRequest(`error decoding patch: ${err.message}`);
    throw badRequest(kind === "json" ? err.message : "Invalid JSON Patch");
  }
}

export const jsonPatchType: PatchType = {
  contentType: "application/json-patch+json",
  appliesTo: () => true,
  patch: (current, patch, context) => {
    const result = applyJsonPatchRequest(current, decodeJson(patch, context.query, "json"), context.query);
    // Not an object (the whole document replaced by an array): decoding the result would fail.
    if (result === null || typeof result !== "object" || Array.isArray(result)) throw jsonPatchRejected();
    // A value added at a deep path nests deeper than either: decoding the result refuses it.
    const tooDeep = patchResultTooDeep(result as JsonObject);
    if (tooDeep) throw tooDeep;
    return result as JsonObject;
  },
};

export const mergePatchType: PatchType = {
  contentType: "application/merge-patch+json",
  appliesTo: () => true,
  patch: (current, patch, context) => {
    const doc = decodeJson(patch, context.query, "merge");
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
      throw badRequest(
        "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type map[string]interface {}",
      );
    }
    const result = applyMergePatch(current, doc) as JsonObject;
    // A merge nests no deeper than its inputs, but the result is decoded whole, managedFields included.
    const tooDeep = patchResultTooDeep(result);
    if (tooDeep) throw tooDeep;
    return result;
  },
};

/** Parses a YAML or JSON patch body (apply patches are YAML). Exported for part 2's apply patcher. */
export function decodeYamlPatch(patch: string): unknown {
  const deep = yamlDepthProblem(patch);
  if (deep?.kind === "yaml") throw badRequest(`error converting YAML to JSON: ${yamlDepthMessage(deep.line)}`);
  if (deep) throw badRequest(`invalid character '${deep.char}' exceeded max depth`);
  try {
    return parseYaml(patch);
  } catch (err) {
    throw badRequest(`error converting YAML to JSON: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** The patch types a kube-apiserver accepts: JSON, merge, strategic merge (built-ins) and apply. */
export function defaultPatchTypes(): PatchTypes {
  const types = new PatchTypes();
  types.register(jsonPatchType);
  types.register(mergePatchType);
  types.register(strategicMergePatchType);
  types.register(applyPatchType);
  return types;
}
