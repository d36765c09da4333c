/**
 * The embedded API server's ValidatingAdmissionPolicy plugin (k8s.io/apiserver
 * pkg/admission/plugin/policy/validating, dispatcher.go), over the ValidatingAdmissionPolicies and
 * ValidatingAdmissionPolicyBindings stored in the cluster.
 *
 * ## Expected flow (one create, update or DELETE, in the validating phase, before validating webhooks;
 * a DELETE has `object` null and the stored object as `oldObject`)
 * 1. Bindings are grouped by `policyName`; a policy without a binding, or a binding without its
 *    policy, does nothing. Policies run in name order, each one's bindings in name order.
 * 2. The policy's `matchConstraints` must select the request, then the binding's `matchResources`
 *    (absent: everything the policy selects).
 * 3. The binding's params are collected (policy-params.ts); the policy is evaluated once per param
 *    (policy-validator.ts) with object, oldObject, request, params, namespaceObject and variables.
 * 4. Each denying decision goes where the binding's `validationActions` send it: `Deny` fails the
 *    write, `Warn` adds a `Warning` header (`Validation failed for ValidatingAdmissionPolicy '<p>'
 *    with binding '<b>': <message>`), `Audit` is dropped (there is no audit log).
 * 5. A configuration error (unresolvable paramKind, missing param under Deny, a namespaced paramRef
 *    on a cluster-scoped request) denies under the policy's failurePolicy Fail and is ignored under
 *    Ignore, as `failed to configure policy: ...` / `failed to configure binding: ...`.
 *
 * ## Guarantees
 * The first denial fails the write with admission.NewForbidden's message, `<resource> "<name>" is
 * forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request: <message>`, whose
 * reason and code are the decision's (`Invalid` 422 when the validation names none; Forbidden 403,
 * Unauthorized 401, RequestEntityTooLarge 413) and whose details carry the message as a cause.
 * Expressions are compiled once per policy resourceVersion.
 *
 * ## Caveats (docs/webhooks.md)
 * - ValidatingAdmissionPolicies and their bindings are not themselves subject to policies.
 * - No `authorizer`, `auditAnnotations`, audit annotations of Audit, cost budgets, type-checking
 *   warnings in the policy's status; CONNECT is not admitted.
 * - The real server evaluates policies in no fixed order: with several denials, which one is
 *   reported may differ there.
 */
import { ApiError, forbidden } from "../machinery/status.ts";
import type { ResourceRegistry } from "../registry/registry.ts";
import { gr, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import type { AdmissionRequestInfo, DynamicAdmission } from "../rest/types.ts";
import type { Storage } from "../storage/storage.ts";
import { admissionAttributes } from "./admission-attributes.ts";
import { AdmissionActivation } from "./admission-cel.ts";
import { isNamespaceRequest, storedNamespace } from "./admission-selectors.ts";
import { CompiledByRevision } from "./compiled-cache.ts";
import { type MatchedRequest, type MatchResources, matchResourcesMatch } from "./match-resources.ts";
import { collectParams, type ParamRef, type ParamsError, resolveParamKind } from "./policy-params.ts";
import {
  type CompiledPolicy,
  compilePolicy,
  type PolicyDecision,
  type PolicySpec,
  policyDecisions,
} from "./policy-validator.ts";

const GROUP = "admissionregistration.k8s.io";
const POLICIES = `${GROUP}/validatingadmissionpolicies`;
const BINDINGS = `${GROUP}/validatingadmissionpolicybindings`;
/** Admission policy kinds are never subject to policies (generic/plugin.go's admissionResources). */
const EXEMPT = new Set(["validatingadmissionpolicies", "validatingadmissionpolicybindings"]);

interface StoredBinding {
  metadata: { name: string };
  spec?: {
    policyName?: string;
    paramRef?: ParamRef | null;
    matchResources?: MatchResources | null;
    validationActions?: string[];
  };
}

/** A denial to report: the policy, the binding (absent for the policy's own configuration error). */
interface Denial {
  policy: string;
  binding: string | undefined;
  decision: PolicyDecision;
}

/** reasonToCode: the HTTP code of a denial's reason. */
const CODES: Record<string, number> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 };

/** The stored policies and bindings; see the module documentation. */
export class PolicyAdmission implements DynamicAdmission {
  private readonly compiled = new CompiledByRevision<CompiledPolicy>();

  constructor(
    private readonly storage: Storage,
    private readonly registry: ResourceRegistry,
  ) {}

  async mutate(_info: AdmissionRequestInfo, obj: JsonObject): Promise<JsonObject> {
    return obj;
  }

  /** ValidatingAdmissionPolicies do not mutate. */
  async mutateDelete(): Promise<void> {}

  async validate(info: AdmissionRequestInfo, obj: JsonObject | undefined, old: JsonObject | undefined): Promise<void> {
    if (info.served.group === GROUP && EXEMPT.has(info.served.plural)) return;
    const bindings = this.storage.list(BINDINGS, "");
    if (bindings.length === 0) return;
    const byPolicy = new Map<string, StoredBinding[]>();
    for (const stored of bindings) {
      const binding = JSON.parse(stored.data) as StoredBinding;
      const name = binding.spec?.policyName ?? "";
      byPolicy.set(name, [...(byPolicy.get(name) ?? []), binding]);
    }
    const request: MatchedRequest = { info, obj, old, storage: this.storage };
    const denials: Denial[] = [];
    const live = new Set<string>();
    for (const policyName of [...byPolicy.keys()].sort()) {
      const stored = this.storage.get(POLICIES, policyName);
      if (stored === undefined) continue;
      live.add(policyName);
      const policy = this.compiled.get(policyName, stored.rev, () =>
        compilePolicy(((JSON.parse(stored.data) as { spec?: PolicySpec }).spec ?? {}) as PolicySpec),
      );
      this.evaluate(policyName, policy, byPolicy.get(policyName) ?? [], request, denials);
    }
    this.compiled.retain(live);
    const first = denials[0];
    if (first !== undefined) throw denialError(info, obj, first);
  }

  /** Evaluates one policy's matching bindings; denials are collected, warnings added to the response. */
  private evaluate(
    policyName: string,
    policy: CompiledPolicy,
    bindings: StoredBinding[],
    request: MatchedRequest,
    denials: Denial[],
  ): void {
    const { spec } = policy;
    const configError = (err: ParamsError | Error, binding: string | undefined) => {
      if (spec.failurePolicy === "Ignore") return;
      const what = binding === undefined ? "policy" : "binding";
      denials.push({
        policy: policyName,
        binding,
        decision: { action: "deny", message: `failed to configure ${what}: ${err.message}` },
      });
    };
    const constraints = spec.matchConstraints;
    if (constraints === undefined || constraints === null) {
      configError(new Error("policy contained no match constraints, a required field"), undefined);
      return;
    }
    if (!matchResourcesMatch(constraints, request)) return;
    let paramServed: ServedResource | undefined;
    if (spec.paramKind !== undefined && spec.paramKind !== null) {
      try {
        paramServed = resolveParamKind(this.registry, spec.paramKind);
      } catch (err) {
        configError(err as Error, undefined);
        return;
      }
    }
    const { info, obj, old } = request;
    const attributes = admissionAttributes(info, obj, old);
    // The namespace's object, for namespaced requests (a namespace's own request has none).
    const namespaceName = isNamespaceRequest(info) ? "" : attributes.namespace;
    const namespaceObject = namespaceName === "" ? null : namespaceForCel(storedNamespace(this.storage, namespaceName));
    for (const binding of [...bindings].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
      const bindingName = binding.metadata.name;
      const match = binding.spec?.matchResources;
      if (match !== undefined && match !== null && !matchResourcesMatch(match, request)) continue;
      let params: (JsonObject | null)[];
      try {
        params = collectParams(
          this.storage,
          paramServed,
          binding.spec?.paramRef,
          attributes.namespace || info.namespace,
        );
      } catch (err) {
        configError(err as Error, bindingName);
        continue;
      }
      const actions = binding.spec?.validationActions ?? [];
      for (const param of params) {
        const activation = new AdmissionActivation({
          attributes,
          params: param,
          namespaceObject,
          variables: policy.variables,
        });
        for (const decision of policyDecisions(policy, activation)) {
          if (decision.action !== "deny") continue;
          if (actions.includes("Deny")) denials.push({ policy: policyName, binding: bindingName, decision });
          if (actions.includes("Warn")) {
            info.options.warnings?.push(
              `Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${decision.message}`,
            );
          }
        }
      }
    }
  }
}

/** cel.CreateNamespaceObject: the namespace's metadata fields a policy may read, its spec and status. */
function namespaceForCel(ns: JsonObject | undefined): JsonObject | null {
  if (ns === undefined) return null;
  const meta = (ns.metadata ?? {}) as Record<string, unknown>;
  const kept = [
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "finalizers",
  ];
  const metadata = Object.fromEntries(kept.filter((k) => meta[k] !== undefined).map((k) => [k, meta[k]]));
  return { metadata, ...(ns.spec ? { spec: ns.spec } : {}), ...(ns.status ? { status: ns.status } : {}) } as JsonObject;
}

/** The error of the first denial (dispatcher.go: admission.NewForbidden, then the decision's reason and code). */
function denialError(info: AdmissionRequestInfo, obj: JsonObject | undefined, denial: Denial): ApiError {
  const message =
    denial.binding === undefined
      ? `ValidatingAdmissionPolicy '${denial.policy}' denied request: ${denial.decision.message}`
      : `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.decision.message}`;
  const base = forbidden(gr(info.served), resourceName(info, obj), message).status;
  const reason = denial.decision.reason || "Invalid";
  return new ApiError({
    ...base,
    reason,
    code: CODES[reason] ?? 422,
    details: { ...base.details, causes: [...(base.details?.causes ?? []), { message }] },
  });
}

/** extractResourceName: the request's name, else the object's name or generateName, else "Unknown". */
function resourceName(info: AdmissionRequestInfo, obj: JsonObject | undefined): string {
  if (info.name !== "") return info.name;
  const meta = (obj?.metadata ?? {}) as { name?: string; generateName?: string };
  return meta.name || meta.generateName || "Unknown";
}
