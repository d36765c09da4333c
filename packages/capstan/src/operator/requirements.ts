/**
 * An operator's requirements: what it watches, owns and writes, from its handled kinds and declared
 * controllers, and the permission needs those requests add up to (input for `capstan generate rbac`
 * and CRD registration). Free functions of what the operator holds, so this module does not import
 * the operator (its methods `requirements()` and `permissions()` call these).
 */
import type { ResourceKind } from "../client/types.ts";
import { isCustomResource } from "../resources/define-resource.ts";
import { needs, type PermissionNeed } from "../resources/rbac.ts";
import type { CustomResource } from "../resources/resource-types.ts";

/**
 * What an operator watches, owns and writes: input for RBAC derivation and CRD registration. Each
 * list names the kinds one piece of Capstan sends requests for; {@link Operator.permissions} maps
 * each to the verbs of those requests.
 */
export interface OperatorRequirements {
  /** Kinds with informers (handled kinds and every kind a controller reconciles, owns or watches): list, watch. */
  readonly watches: readonly ResourceKind[];
  /**
   * Child kinds controllers own (`owns`) and write with `ctx.apply` (server-side apply): create,
   * patch. Not those owned with `{ apply: false }`, which are only watched.
   */
  readonly owns: readonly ResourceKind[];
  /**
   * Kinds whose objects the handler engine writes (kinds with change handlers or timers: the
   * finalizer, progress annotations, `ctx.patch` metadata and spec). It only merge-patches: patch.
   */
  readonly updates: readonly ResourceKind[];
  /**
   * Kinds with a status subresource that the operator patches (handler results and
   * `ctx.patch.status` of change handlers and timers, `ctx.patchStatus` of controllers): patch on `/status`.
   */
  readonly statusWrites: readonly ResourceKind[];
  /**
   * Kinds whose contexts offer `adopt` (change handlers, timers, daemons, controllers), whose
   * `blockOwnerDeletion` owner references need update on `<plural>/finalizers` where
   * OwnerReferencesPermissionEnforcement runs.
   */
  readonly ownerReferencesTo: readonly ResourceKind[];
  /** The operator posts core/v1 Events (handler failures, `ctx.event`): create, patch. */
  readonly events: true;
  /** CRDs registered at start-up. */
  readonly crds: readonly CustomResource[];
}

/** What {@link operatorRequirements} needs of a handled kind: its kind and what is registered for it. */
export interface HandledKind {
  readonly kind: ResourceKind;
  readonly change: readonly unknown[];
  readonly timers: readonly unknown[];
  readonly daemons: readonly unknown[];
}

/** What {@link operatorRequirements} needs of a declared controller (a `DeferredControllerBuilder` has it). */
export interface DeclaredController {
  readonly kind: ResourceKind;
  /** `applies`: the owned kinds written with `ctx.apply` (default: every owned kind). */
  kinds(): { owns: ResourceKind[]; watches: ResourceKind[]; applies?: ResourceKind[] };
}

/** Options of {@link operatorPermissions}. */
export interface PermissionOptions {
  /** Grant the Lease: `true` for the manager's default `<name>-leader`, or the Lease `name` it is started with. */
  leaderElection?: boolean | { name?: string };
  registerCrds?: boolean;
  /**
   * Grant what sharding sends (`capstan run --sharded`): the Leases of its members and coordinator,
   * and patch of the ring's kinds (`ringKinds`: handled kinds and controllers' `for` kinds) and of
   * their owned kinds, whose shard labels the coordinator writes.
   */
  sharding?: boolean;
  /** Grant the reviews of the secure metrics endpoint (`needs.delegatedAuth()`): what the generated Deployment runs. */
  secureMetrics?: boolean;
}

/** What an operator with these handled kinds and controllers watches, owns and writes (for RBAC and CRD registration). */
export function operatorRequirements(
  handled: Iterable<HandledKind>,
  controllers: Iterable<DeclaredController>,
): OperatorRequirements {
  const watches = new KindSet();
  const owns = new KindSet();
  const updates = new KindSet();
  const statusWrites = new KindSet();
  const ownerReferencesTo = new KindSet();
  for (const e of handled) {
    watches.add(e.kind);
    // Change handlers always write their progress; timers write their ctx.patch and results.
    const writes = e.change.length > 0 || e.timers.length > 0;
    if (writes) {
      updates.add(e.kind);
      if (hasStatusSubresource(e.kind)) statusWrites.add(e.kind);
    }
    // Raw event handlers get no adopt; every other handler context has it.
    if (writes || e.daemons.length > 0) ownerReferencesTo.add(e.kind);
  }
  for (const c of controllers) {
    const k = c.kinds();
    for (const w of k.watches) watches.add(w);
    for (const o of k.owns) watches.add(o);
    for (const o of k.applies ?? k.owns) owns.add(o);
    // ctx.patchStatus patches the reconciled object's status; ctx.adopt points children at it.
    if (hasStatusSubresource(c.kind as ResourceKind)) statusWrites.add(c.kind as ResourceKind);
    ownerReferencesTo.add(c.kind as ResourceKind);
  }
  const crds = new Map<string, CustomResource>();
  for (const k of [...watches.values(), ...owns.values()]) if (isCustomResource(k)) crds.set(k.crdName, k);
  return {
    watches: watches.values(),
    owns: owns.values(),
    updates: updates.values(),
    statusWrites: statusWrites.values(),
    ownerReferencesTo: ownerReferencesTo.values(),
    events: true,
    crds: [...crds.values()],
  };
}

/**
 * The permission needs of an operator named `name` with `requirements`, for `deriveRules` / `rbacManifests`: exactly the
 * verbs of the requests Capstan sends for this operator (informers list and watch; the handler
 * engine patches the object and its status; `ctx.apply` applies, which may create; the event
 * recorder creates and patches core/v1 Events; CRD registration gets, creates and updates its own
 * CRDs; leader election gets, creates and updates its own Lease), plus what was declared with
 * `operator({ permissions })` (`declared`) for the requests handlers send themselves through `api` / `ctx.client`.
 */
export function operatorPermissions(
  name: string,
  requirements: OperatorRequirements,
  declared: readonly PermissionNeed[],
  options: PermissionOptions = {},
  ringKinds: readonly ResourceKind[] = [],
): PermissionNeed[] {
  const r = requirements;
  const out: PermissionNeed[] = [];
  for (const k of r.watches) out.push(...needs.watch(k));
  for (const k of r.owns) out.push(...needs.apply(k));
  for (const k of r.updates) out.push(...needs.patch(k));
  for (const k of r.statusWrites) out.push(...needs.writeStatus(k));
  for (const k of r.ownerReferencesTo) out.push(...needs.ownerReferencesTo(k));
  out.push(...needs.events());
  out.push(...declared);
  if (options.leaderElection) {
    // The manager's default Lease name (manager.ts), which `capstan run --leader-elect` uses.
    const lease = typeof options.leaderElection === "object" ? options.leaderElection.name : undefined;
    out.push(...needs.leaderElection(lease ?? `${name}-leader`));
  }
  if (options.sharding) {
    out.push(...needs.sharding());
    // The coordinator labels the ring's objects and their children (owned kinds: `apply` has patch).
    for (const k of ringKinds) out.push(...needs.patch(k));
  }
  if (options.registerCrds ?? true) out.push(...needs.crdRegistration(r.crds.map((k) => k.crdName)));
  if (options.secureMetrics) out.push(...needs.delegatedAuth());
  return out;
}

/**
 * Whether the kind has a status subresource: for `defineResource` kinds, when the typed version
 * has a status schema (then `toCrd` enables the subresource); built-in kinds without a status
 * are listed; any other kind is assumed to have one.
 */
export function hasStatusSubresource(kind: ResourceKind): boolean {
  if (isCustomResource(kind)) return kind.versions.find((v) => v.name === kind.version)?.status !== undefined;
  return !KINDS_WITHOUT_STATUS.has(`${kind.kind}.${kind.group}`);
}

/** Built-in kinds that have no status at all (so no status subresource). */
const KINDS_WITHOUT_STATUS = new Set([
  "ConfigMap.",
  "Secret.",
  "ServiceAccount.",
  "Endpoints.",
  "Event.",
  "Event.events.k8s.io",
  "Lease.coordination.k8s.io",
  "Role.rbac.authorization.k8s.io",
  "RoleBinding.rbac.authorization.k8s.io",
  "ClusterRole.rbac.authorization.k8s.io",
  "ClusterRoleBinding.rbac.authorization.k8s.io",
  "ValidatingWebhookConfiguration.admissionregistration.k8s.io",
  "MutatingWebhookConfiguration.admissionregistration.k8s.io",
]);

class KindSet {
  private readonly map = new Map<string, ResourceKind>();
  add(kind: ResourceKind): void {
    this.map.set(`${kind.group}/${kind.version}/${kind.kind}`, kind);
  }
  values(): ResourceKind[] {
    return [...this.map.values()];
  }
}
