/**
 * The patch types the server accepts, by Content-Type. Each patcher turns (current object, patch body)
 * into the next object; the REST layer then writes it with the same rules as an update. Part 2 registers
 * `application/strategic-merge-patch+json` (real strategic merge) and `application/apply-patch+yaml`
 * (server-side apply) here without touching the handlers.
 */
import { parse as parseYaml } from "yaml";
import { applyPatchType, strategicMergePatchType } from "../apply/patch-types.ts";
import { goJsonSyntaxError } from "../machinery/json-syntax-error.ts";
import { ApiError, badRequest, failure, unsupportedMediaType } from "../machinery/status.ts";
import { applyJsonPatch, decodeJsonPatch, JsonPatchError } from "../patch/json-patch.ts";
import { applyMergePatch } from "../patch/merge-patch.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";

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

function decodeJson(patch: string): unknown {
  try {
    return JSON.parse(patch);
  } catch {
    throw badRequest(goJsonSyntaxError(patch));
  }
}

/** 422 with the patch library's message as a cause (NewGenericServerResponse for 422, as patch.go does). */
function patchRejected(message: string): ApiError {
  return new ApiError(
    failure(422, "Invalid", "the server rejected our request due to an error in our request", {
      causes: [{ reason: "UnexpectedServerResponse", message }],
    }),
  );
}

export const jsonPatchType: PatchType = {
  contentType: "application/json-patch+json",
  appliesTo: () => true,
  patch: (current, patch) => {
    try {
      const result = applyJsonPatch(current, decodeJsonPatch(decodeJson(patch)));
      if (result === null || typeof result !== "object" || Array.isArray(result)) {
        throw new JsonPatchError("the result of the patch is not an object");
      }
      return result as JsonObject;
    } catch (err) {
      if (err instanceof JsonPatchError) throw patchRejected(err.message);
      throw err;
    }
  },
};

export const mergePatchType: PatchType = {
  contentType: "application/merge-patch+json",
  appliesTo: () => true,
  patch: (current, patch) => {
    const doc = decodeJson(patch);
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
      throw badRequest(
        "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type map[string]interface {}",
      );
    }
    return applyMergePatch(current, doc) as JsonObject;
  },
};

/** Parses a YAML or JSON patch body (apply patches are YAML). Exported for part 2's apply patcher. */
export function decodeYamlPatch(patch: string): unknown {
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
