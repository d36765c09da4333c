/**
 * apimachinery's path.IsValidPathSegmentName, as the generic registry's key functions apply it to the
 * name of every get, update, patch and delete: a name that cannot be a storage path segment is a 400
 * before storage is touched, so `..` never addresses the parent collection.
 */
import { badRequest } from "../machinery/status.ts";
import { goQuote } from "../validation/go-format.ts";

/** IsValidPathSegmentName's messages for `name` (none when it is valid). */
export function pathSegmentNameErrors(name: string): string[] {
  if (name === "." || name === "..") return [`may not be '${name}'`];
  const errors: string[] = [];
  for (const illegal of ["/", "%"]) if (name.includes(illegal)) errors.push(`may not contain '${illegal}'`);
  return errors;
}

/** NamespaceKeyFunc / NoNamespaceKeyFunc's 400 for a name that is not a valid path segment. */
export function checkPathSegmentName(name: string): void {
  const errors = pathSegmentNameErrors(name);
  if (errors.length > 0) throw badRequest(`Name parameter invalid: ${goQuote(name)}: ${errors.join(";")}`);
}
