/**
 * An operator's RBAC as `capstan generate rbac` prints it, applied to a test cluster, so a test
 * runs the operator with exactly those permissions, or with one taken away to see its 403.
 *
 * ```ts
 * const rbac = await cluster.generatedRbac("./operator.ts", { namespace: "ops" });
 * const sa = await rbac.apply();                          // ServiceAccount, Role(s), binding(s)
 * await cluster.run(op, { client: sa.client });           // the scenario passes
 * await rbac.apply((rule) => ({ ...rule, verbs: rule.verbs.filter((v) => v !== "create") }));
 * ```
 */
import { parseAllDocuments, stringify } from "yaml";
import type { KubectlOptions, KubectlResult } from "./kubectl.ts";

/** One resource rule of a generated (Cluster)Role. */
export interface GeneratedRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** A generated manifest: ServiceAccount, (Cluster)Role, (Cluster)RoleBinding. */
export type GeneratedManifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } & {
  rules?: GeneratedRule[];
} & Record<string, unknown>;

/** What `cluster.generatedRbac` returns. */
export interface GeneratedRbac<Identity> {
  /** The manifests as printed. */
  readonly manifests: readonly GeneratedManifest[];
  /** `<namespace>/<name>` of the generated ServiceAccount. */
  readonly serviceAccount: string;
  /**
   * The resource rules of every generated Role and ClusterRole: what the operator may do. Rules
   * on non-resource URLs (the `<operator>-metrics-reader` ClusterRole's `get` on `/metrics`,
   * which the operator's scrapers need, not the operator) are left out.
   */
  readonly rules: readonly GeneratedRule[];
  /**
   * Applies the manifests with kubectl (as admin; a role applied again gets exactly the rules
   * given), each role's resource rules passed through `edit` first (return the rule, changed or
   * not, or `undefined` to drop it; non-resource rules are kept as they are), and returns the
   * ServiceAccount's credentials.
   */
  apply(edit?: (rule: GeneratedRule) => GeneratedRule | undefined): Promise<Identity>;
}

type Run = (args: readonly string[], options?: KubectlOptions) => Promise<KubectlResult>;

/** Runs `capstan generate rbac` and wraps its output; see the module documentation. */
export async function generatedRbac<Identity>(
  operatorFile: string,
  options: { namespace?: string; args?: readonly string[] },
  deps: {
    capstan: Run;
    kubectl: Run;
    serviceAccount(key: string): Promise<Identity>;
    /** Sees (and may label) the manifests before kubectl applies them: a shared cluster records what it creates. */
    beforeApply?(manifests: readonly GeneratedManifest[]): Promise<GeneratedManifest[]>;
  },
): Promise<GeneratedRbac<Identity>> {
  const args = ["generate", "rbac", operatorFile, ...(options.namespace ? ["--namespace", options.namespace] : [])];
  const generated = await deps.capstan([...args, ...(options.args ?? [])]);
  if (generated.code !== 0) {
    throw new Error(`capstan ${args.join(" ")} exited with ${generated.code}: ${generated.stderr.trim()}`);
  }
  const manifests = parseAllDocuments(generated.stdout)
    .map((doc) => doc.toJS() as GeneratedManifest | null)
    .filter((m): m is GeneratedManifest => m !== null);
  const account = manifests.find((m) => m.kind === "ServiceAccount");
  if (account === undefined) throw new Error(`capstan ${args.join(" ")} printed no ServiceAccount`);
  const serviceAccount = `${account.metadata.namespace ?? "default"}/${account.metadata.name}`;
  const isRole = (m: GeneratedManifest) => m.kind === "Role" || m.kind === "ClusterRole";
  return {
    manifests,
    serviceAccount,
    rules: manifests.filter(isRole).flatMap((m) => (m.rules ?? []).filter(isResourceRule)),
    async apply(edit) {
      const edited = manifests.map((m) =>
        isRole(m) && edit !== undefined
          ? {
              ...m,
              rules: (m.rules ?? [])
                .map((r) => (isResourceRule(r) ? edit(structuredClone(r)) : r))
                .filter((r) => r !== undefined),
            }
          : m,
      );
      const docs = deps.beforeApply === undefined ? edited : await deps.beforeApply(edited);
      const applied = await deps.kubectl(["apply", "-f", "-"], {
        stdin: docs.map((d) => stringify(d)).join("---\n"),
      });
      if (applied.code !== 0) throw new Error(`kubectl apply of the generated RBAC failed: ${applied.stderr.trim()}`);
      return deps.serviceAccount(serviceAccount);
    },
  };
}

/** A rule on resources (`apiGroups`, `resources`), not on non-resource URLs (`nonResourceURLs`). */
function isResourceRule(rule: GeneratedRule): boolean {
  return Array.isArray(rule.resources) && Array.isArray(rule.apiGroups);
}
