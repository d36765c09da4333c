/**
 * The 1 MiB cap ValidateConfigMap and ValidateSecret put on the data an object carries (core's
 * MaxSecretSize): the sum of every value's bytes — ConfigMap `data` and decoded `binaryData`, Secret
 * decoded `data` (with `stringData` merged in, as conversion merges it) — reported on the whole
 * object (`[]`) for a ConfigMap and on `data` for a Secret.
 */
import { type FieldError, tooLong } from "./field-errors.ts";

/** core.MaxSecretSize. */
export const MAX_CONFIG_DATA_BYTES = 1024 * 1024;

type Values = Record<string, unknown> | undefined;

function textBytes(values: Values): number {
  let total = 0;
  for (const v of Object.values(values ?? {})) if (typeof v === "string") total += Buffer.byteLength(v, "utf8");
  return total;
}

function base64Bytes(values: Values, except?: Values): number {
  let total = 0;
  for (const [k, v] of Object.entries(values ?? {})) {
    if (typeof v === "string" && !(except && k in except)) total += Buffer.byteLength(v, "base64");
  }
  return total;
}

/** The size errors of a core/v1 ConfigMap or Secret (none for other kinds). */
export function configDataSizeErrors(
  served: { group: string; kind: string },
  obj: Record<string, unknown>,
): FieldError[] {
  if (served.group !== "") return [];
  if (served.kind === "ConfigMap") {
    const size = textBytes(obj["data"] as Values) + base64Bytes(obj["binaryData"] as Values);
    // NewPath("") renders as "[]" (an empty name prints as an index).
    return size > MAX_CONFIG_DATA_BYTES ? [tooLong("[]", MAX_CONFIG_DATA_BYTES)] : [];
  }
  if (served.kind === "Secret") {
    const stringData = obj["stringData"] as Values;
    const size = base64Bytes(obj["data"] as Values, stringData) + textBytes(stringData);
    return size > MAX_CONFIG_DATA_BYTES ? [tooLong("data", MAX_CONFIG_DATA_BYTES)] : [];
  }
  return [];
}
