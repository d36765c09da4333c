/**
 * A JSON patch request as kube-apiserver 1.32's patch handler answers it (endpoints/handlers/patch.go,
 * `applyJSPatch`), the body already parsed:
 * 1. under fieldValidation Strict or Warn (the default) the body is first decoded into
 *    `[]handlers.jsonPatchOp`: a wrongly typed body or member is 400 "error decoding patch: ...";
 * 2. the library's DecodePatch: 400 with its message;
 * 3. more than 10000 operations: 413;
 * 4. any operation that does not apply: 422 Invalid with NewGenericServerResponse's fixed message and
 *    empty details, the library's own message dropped (patch/json-patch.ts has it, for the log).
 */
import { ApiError, badRequest, failure } from "../machinery/status.ts";
import { applyJsonPatch, decodeJsonPatch, goJsonKind, JsonPatchError } from "../patch/json-patch.ts";

/** patch.go's maxJSONPatchOperations. */
const MAX_OPERATIONS = 10000;

/** The members jsonPatchOp decodes as strings (`value` takes anything). */
const STRING_MEMBERS = ["op", "path", "from"];

/** Applies a parsed JSON patch body to `current`, or throws the Status kube-apiserver answers with. */
export function applyJsonPatchRequest(current: unknown, body: unknown, query: URLSearchParams): unknown {
  if (query.get("fieldValidation") !== "Ignore") {
    const typeError = strictDecodeError(body);
    if (typeError) throw badRequest(`error decoding patch: ${typeError}`);
  }
  let ops: ReturnType<typeof decodeJsonPatch>;
  try {
    ops = decodeJsonPatch(body);
  } catch (err) {
    if (err instanceof JsonPatchError) throw badRequest(err.message);
    throw err;
  }
  if (ops.length > MAX_OPERATIONS) {
    throw new ApiError(
      failure(
        413,
        "RequestEntityTooLarge",
        `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${ops.length}`,
      ),
    );
  }
  try {
    return applyJsonPatch(current, ops);
  } catch (err) {
    if (err instanceof JsonPatchError) throw jsonPatchRejected();
    throw err;
  }
}

/** NewGenericServerResponse(422, ...) without the server's message: what every failed operation gets. */
export function jsonPatchRejected(): ApiError {
  return new ApiError(failure(422, "Invalid", "the server rejected our request due to an error in our request", {}));
}

/**
 * The first type error encoding/json meets decoding `body` into `[]handlers.jsonPatchOp` (it keeps
 * decoding after one and reports the first), or undefined. Unknown members are not type errors.
 */
function strictDecodeError(body: unknown): string | undefined {
  if (body === null) return undefined;
  if (!Array.isArray(body))
    return `json: cannot unmarshal ${goJsonKind(body)} into Go value of type []handlers.jsonPatchOp`;
  for (const op of body) {
    if (op === null) continue;
    if (typeof op !== "object" || Array.isArray(op)) {
      return `json: cannot unmarshal ${goJsonKind(op)} into Go value of type handlers.jsonPatchOp`;
    }
    for (const [name, value] of Object.entries(op as Record<string, unknown>)) {
      if (!STRING_MEMBERS.includes(name) || value === null || typeof value === "string") continue;
      return `json: cannot unmarshal ${goJsonKind(value)} into Go struct field jsonPatchOp.${name} of type string`;
    }
  }
  return undefined;
}
