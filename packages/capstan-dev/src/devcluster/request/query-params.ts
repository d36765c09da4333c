/**
 * A boolean query parameter as kube-apiserver's parameter codec reads it (apimachinery's
 * `runtime.Convert_Slice_string_To_bool`): absent is `undefined`; `0` and `false` in any case are
 * false; anything else is true, `True` (the Python client's spelling) and the empty string included.
 */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  return !(value === "0" || value.toLowerCase() === "false");
}
