/**
 * The depth check on a patch's result. kube-apiserver decodes the JSON a JSON patch produced, and that
 * decoding has the same depth limit as a request body's; a JSON patch can nest deeper than its body
 * and its target (a deep value added at a deep path), so its result is checked the same way.
 */
import { goJsonSyntaxError } from "../machinery/json-syntax-error.ts";
import { ApiError } from "../machinery/status.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import { nestsDeeperThan } from "../serializer/nesting-depth.ts";
import { invalid, invalidStatus } from "../validation/field-errors.ts";

/**
 * The 422 patch.go answers when the patched object does not decode (`"" is invalid: patch: Invalid
 * value: "<the patched JSON>": <the decoder's error>`), or undefined when the result is within the limit.
 */
export function patchResultTooDeep(result: JsonObject): ApiError | undefined {
  if (!nestsDeeperThan(result)) return undefined;
  const json = JSON.stringify(result);
  const status = invalidStatus("", "", "", [
    invalid("patch", json, `couldn't get version/kind; json parse error: ${goJsonSyntaxError(json)}`),
  ]);
  // NewInvalid with an empty GroupKind: Go's omitempty leaves `kind` out of the details.
  const { kind: _kind, ...details } = status.details;
  return new ApiError({ ...status, details } as typeof status);
}
