/**
 * The namespaces no one may delete: the NamespaceLifecycle admission plugin's "immortal" set
 * (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle), refused with 403 Forbidden before the
 * delete reaches storage, dry runs included.
 */

/** `default`, `kube-system` and `kube-public` (kube-node-lease is not protected, as in kube-apiserver). */
export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(["default", "kube-system", "kube-public"]);

/** The reason a delete of namespace `name` is refused (the 403's message tail), or undefined when allowed. */
export function immortalNamespaceRefusal(name: string): string | undefined {
  return IMMORTAL_NAMESPACES.has(name) ? "this namespace may not be deleted" : undefined;
}
