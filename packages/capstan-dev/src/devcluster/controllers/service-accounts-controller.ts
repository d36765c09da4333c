/**
 * Every active namespace has a ServiceAccount named `default`, as kube-controller-manager's
 * serviceaccounts controller (pkg/controller/serviceaccount/serviceaccounts_controller.go) keeps it.
 *
 * Expected flow: a namespace's creation or update (and, at start, every existing namespace) and the
 * deletion of a `default` ServiceAccount queue the namespace; handling it creates `default` when the
 * namespace is Active and has none. The ServiceAccount is created bare (`metadata.name` only), as
 * the real controller creates it.
 *
 * Guarantees:
 * - a deleted `default` ServiceAccount comes back while its namespace is Active;
 * - nothing is created in a Terminating namespace (the phase check, and the store refuses it anyway:
 *   that refusal is ignored like the real controller's `NamespaceTerminating` check).
 *
 * Assumptions: the namespace strategy sets `status.phase: Active` on create (registry/builtins.ts).
 *
 * Caveats: creation is asynchronous, as in a real cluster: a client that creates a namespace and
 * at once lists its ServiceAccounts may not see `default` yet.
 */
import type { JsonObject } from "../registry/served-resource.ts";
import type { Change } from "../storage/storage.ts";
import { type Controller, type ControllerContext, isStatus, readObject, splitKey, watchAll } from "./cluster-view.ts";
import { LoopController } from "./reconcile-loop.ts";

const NAMESPACES_BUCKET = "/namespaces";
const SERVICE_ACCOUNTS_BUCKET = "/serviceaccounts";
/** The ServiceAccount every namespace gets (serviceAccountsToEnsure's only entry). */
export const DEFAULT_SERVICE_ACCOUNT = "default";
const SERVICE_ACCOUNTS = { group: "", version: "v1", plural: "serviceaccounts" };

/** True for the store's refusal to create content in a namespace being deleted. */
export function isNamespaceTerminating(err: unknown): boolean {
  if (!isStatus(err, 403)) return false;
  const causes = (err as { status: { details?: { causes?: { reason?: string }[] } } }).status.details?.causes ?? [];
  return causes.some((c) => c.reason === "NamespaceTerminating");
}

/** True when the stored namespace's phase is Active. */
export function namespaceActive(ns: JsonObject | undefined): boolean {
  return (ns?.["status"] as { phase?: string } | undefined)?.phase === "Active";
}

export class ServiceAccountsController extends LoopController implements Controller {
  constructor(private readonly ctx: ControllerContext) {
    super("serviceaccounts");
  }

  start(): this {
    for (const stored of this.ctx.store.storage.list(NAMESPACES_BUCKET, "")) this.loop.add(stored.key);
    this.unsubscribe = watchAll(this.ctx.store, (change) => this.onChange(change));
    return this;
  }

  private onChange(change: Change): void {
    if (change.bucket === NAMESPACES_BUCKET) {
      if (change.type !== "DELETED") this.loop.add(change.key);
      return;
    }
    if (change.bucket === SERVICE_ACCOUNTS_BUCKET && change.type === "DELETED") {
      const { namespace, name } = splitKey(change.key);
      if (name === DEFAULT_SERVICE_ACCOUNT) this.loop.add(namespace);
    }
  }

  protected async handle(namespace: string): Promise<undefined> {
    if (!namespaceActive(readObject(this.ctx.store, NAMESPACES_BUCKET, namespace))) return undefined;
    if (this.ctx.store.storage.get(SERVICE_ACCOUNTS_BUCKET, `${namespace}/${DEFAULT_SERVICE_ACCOUNT}`))
      return undefined;
    const served = this.ctx.registry.get(SERVICE_ACCOUNTS.group, SERVICE_ACCOUNTS.version, SERVICE_ACCOUNTS.plural);
    if (!served) return undefined;
    try {
      await this.ctx.store.create(served, namespace, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace },
      });
    } catch (err) {
      // Created meanwhile (409), namespace gone (404) or going (403 NamespaceTerminating): nothing to do.
      if (isStatus(err, 409) || isStatus(err, 404) || isNamespaceTerminating(err)) return undefined;
      throw err;
    }
    return undefined;
  }
}
