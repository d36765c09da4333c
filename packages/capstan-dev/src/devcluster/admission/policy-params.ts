/**
 * The parameter objects of a policy binding (k8s.io/apiserver pkg/admission/plugin/policy/generic:
 * policy_source.go resolving `paramKind`, policy_dispatcher.go's CollectParams).
 *
 * - A policy without paramKind, or a binding without paramRef, is evaluated once with `params` null.
 * - `paramRef.name` finds one object, `paramRef.selector` every matching one (each evaluated
 *   separately); for a namespaced paramKind, in `paramRef.namespace`, else the request's namespace.
 * - None found: `parameterNotFoundAction: Deny` is a configuration error (the policy's failurePolicy
 *   decides), `Allow` evaluates nothing.
 * Errors carry the real server's texts; see {@link ParamsError}.
 * Caveat: params are read as stored (a CRD with several versions: in its storage version).
 */

import type { ResourceRegistry } from "../registry/registry.ts";
import { bucketOf, type JsonObject, keyOf, type ServedResource } from "../registry/served-resource.ts";
import { type LabelSelector, selectorMatches } from "../rest/label-selector.ts";
import type { Storage } from "../storage/storage.ts";
import { labelsOf } from "./admission-selectors.ts";

/** A binding's paramRef (admissionregistration/v1 ParamRef). */
export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelector | null;
  parameterNotFoundAction?: string;
}

/** A configuration error of the policy (`binding: false`) or of the binding, worded as kube-apiserver's. */
export class ParamsError extends Error {
  constructor(
    message: string,
    readonly binding: boolean,
  ) {
    super(message);
  }
}

/** The served resource of `paramKind`; throws the policy's configuration error when none is served. */
export function resolveParamKind(
  registry: ResourceRegistry,
  paramKind: { apiVersion?: string; kind?: string },
): ServedResource {
  const apiVersion = paramKind.apiVersion ?? "";
  const slash = apiVersion.indexOf("/");
  const [group, version] = slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
  const kind = paramKind.kind ?? "";
  const served = registry.inGroupVersion(group, version).find((s) => s.kind === kind);
  if (served !== undefined) return served;
  // schema.GroupVersionKind's String(), as %v prints it.
  throw new ParamsError(`failed to find resource referenced by paramKind: '${group}/${version}, Kind=${kind}'`, false);
}

/** The params to evaluate with (null: none declared); throws {@link ParamsError}. */
export function collectParams(
  storage: Storage,
  paramServed: ServedResource | undefined,
  paramRef: ParamRef | undefined | null,
  requestNamespace: string,
): (JsonObject | null)[] {
  if (paramServed === undefined || paramRef === undefined || paramRef === null) return [null];
  let namespace = "";
  if (paramServed.namespaced) {
    namespace = paramRef.namespace || requestNamespace;
    if (namespace === "") {
      throw new ParamsError(
        "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
        true,
      );
    }
  } else if (paramRef.namespace) {
    throw new ParamsError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`", true);
  }
  const bucket = bucketOf(paramServed);
  let params: JsonObject[];
  if (paramRef.name) {
    if (paramRef.selector) throw new ParamsError("paramRef.name and paramRef.selector are mutually exclusive", true);
    const stored = storage.get(bucket, keyOf(paramServed, namespace, paramRef.name));
    params = stored === undefined ? [] : [JSON.parse(stored.data) as JsonObject];
  } else if (paramRef.selector) {
    const selector = paramRef.selector;
    params = storage
      .list(bucket, paramServed.namespaced ? `${namespace}/` : "")
      .map((s) => JSON.parse(s.data) as JsonObject)
      .filter((p) => selectorMatches(selector, labelsOf(p)));
  } else {
    throw new ParamsError("one of name or selector must be provided", true);
  }
  if (params.length === 0 && paramRef.parameterNotFoundAction === "Deny") {
    throw new ParamsError("no params found for policy binding with `Deny` parameterNotFoundAction", true);
  }
  return params;
}
