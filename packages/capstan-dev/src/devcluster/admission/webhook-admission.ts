/**
 * The embedded API server's dynamic admission: MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook as kube-apiserver runs them on a write (k8s.io/apiserver
 * pkg/admission/plugin/webhook), over the configurations stored in the cluster.
 *
 * ## Expected flow (one create or update; the store calls it, rest/object-store.ts)
 * 1. `mutate`: the webhooks of every MutatingWebhookConfiguration (configurations in name order,
 *    webhooks in their order) whose rules, namespaceSelector and objectSelector match are called one
 *    after another; each sees the object as the previous one left it (its selectors and conditions
 *    are decided on that object too); a JSON Patch it answers is applied. When a webhook changed the
 *    object, the `reinvocationPolicy: IfNeeded` webhooks called before it are called once more, in
 *    order, in a second round (webhook-reinvocation.ts). The store then defaults and validates the
 *    result again.
 * 2. `validate`: the matching webhooks of every ValidatingWebhookConfiguration are called at once
 *    on the final object; the first refusal fails the write.
 *
 * ## Expected flow (one DELETE; store.go Delete, before the object is marked or removed)
 * `mutateDelete` then `validate`, with no object and the stored object as the old one: the webhooks
 * whose rules say DELETE are called as above (selectors read the stored object's labels), with the
 * request's DeleteOptions and requester. A mutating webhook may deny; one answering a patch with
 * operations fails the delete (500, `admission webhook "<name>" attempted to modify the object,
 * which is not supported for this operation`), as the mutating dispatcher refuses it.
 * A denial fails the write with the webhook's Status (`admission webhook "<name>" denied the
 * request: ...`); a webhook that cannot be called fails it with an internal error
 * (`failed calling webhook "<name>": ...`) under failurePolicy Fail, and is skipped under Ignore.
 * Warnings go to the response's `Warning` headers. A dry run calls only webhooks whose
 * sideEffects are None or NoneOnDryRun; another is a 400 (`admission webhook "<name>" does not
 * support dry run`).
 *
 * A webhook's `matchConditions` (match-conditions.ts) are decided after its rules and selectors, on
 * the object it would be sent: a false one skips it; an evaluation error fails the write with
 * `<resource> "<name>" is forbidden: expression '...' resulted in error: ...` (403) under failurePolicy
 * Fail and skips the webhook under Ignore (webhook/generic/webhook.go's ShouldCallHook). The
 * validating webhooks' conditions are all decided before any of them is called.
 *
 * ## Caveats (docs/webhooks.md)
 * - matchConditions cannot use `authorizer` (declared, but an expression calling it fails at
 *   evaluation).
 * - Only `clientConfig.url` can be called (no cluster network for a Service reference).
 * - Objects of a CRD with several versions are sent in the storage version (matchPolicy
 *   Equivalent, the default, matches any version; Exact compares with the storage version).
 * - CONNECT is not admitted (there is nothing to connect to).
 * - The devcluster's own controllers delete in process: admission sees them with an empty
 *   username, as their writes (kube-apiserver sees each controller's service account).
 * - Webhook and policy configurations themselves are never sent to webhooks (as kube-apiserver).
 */

import { jsonEqual } from "../machinery/semantic-equal.ts";
import { ApiError, failure, forbidden, internalError } from "../machinery/status.ts";
import { applyJsonPatch, decodeJsonPatch, JsonPatchError, type Operation } from "../patch/json-patch.ts";
import { gr, type JsonObject } from "../registry/served-resource.ts";
import type { LabelSelector } from "../rest/label-selector.ts";
import type { AdmissionRequestInfo, DynamicAdmission } from "../rest/types.ts";
import { GoJsonSyntaxError, parseJsonLimited } from "../serializer/nesting-depth.ts";
import type { Storage } from "../storage/storage.ts";
import { admissionAttributes } from "./admission-attributes.ts";
import { AdmissionActivation } from "./admission-cel.ts";
import { admissionNamespace, namespaceSelectorMatches, objectSelectorMatches } from "./admission-selectors.ts";
import { CompiledByRevision } from "./compiled-cache.ts";
import {
  type CompiledMatchCondition,
  compileMatchConditions,
  evaluateMatchConditions,
  type MatchCondition,
} from "./match-conditions.ts";
import { type CalledWebhook, callWebhook, WebhookAgents, WebhookCallError } from "./webhook-call.ts";
import { MutatingReinvocation } from "./webhook-reinvocation.ts";
import { callFailure, rejection } from "./webhook-response.ts";
import { ruleMatches, type WebhookRule } from "./webhook-rules.ts";

const GROUP = "admissionregistration.k8s.io";
/** Kinds never sent to webhooks, so that a broken webhook can always be removed. */
const EXEMPT = new Set([
  "validatingwebhookconfigurations",
  "mutatingwebhookconfigurations",
  "validatingadmissionpolicies",
  "validatingadmissionpolicybindings",
]);

/** A webhook of a stored configuration (admissionregistration/v1). */
interface StoredWebhook extends CalledWebhook {
  rules?: WebhookRule[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: string;
  matchConditions?: MatchCondition[];
  reinvocationPolicy?: string;
}

/** A webhook whose rules matched, with its compiled matchConditions. */
interface MatchedWebhook {
  hook: StoredWebhook;
  /** `<configuration>/<index>`: which webhook it is across rounds (the accessor's uid). */
  uid: string;
  conditions: readonly CompiledMatchCondition[];
}

/** The stored configurations' webhooks; see the module documentation. */
export class WebhookAdmission implements DynamicAdmission {
  private readonly agents = new WebhookAgents();
  /** Each configuration's webhooks' compiled matchConditions, by `<plural>/<name>`. */
  private readonly conditions = new CompiledByRevision<CompiledMatchCondition[][]>();
  private readonly parsed = new CompiledByRevision<ParsedWebhook[]>();

  constructor(private readonly storage: Storage) {}

  /** Closes the connections to webhooks (the server is stopping). */
  close(): void {
    this.agents.close();
  }

  async mutate(info: AdmissionRequestInfo, obj: JsonObject, old: JsonObject | undefined): Promise<JsonObject> {
    const reinvocation = new MutatingReinvocation();
    let current = await this.mutatingRound(info, obj, old, reinvocation);
    if (reinvocation.secondRound()) current = await this.mutatingRound(info, current, old, reinvocation);
    return current;
  }

  /** A DELETE's mutating webhooks: called on the stored object, which none of them may patch. */
  async mutateDelete(info: AdmissionRequestInfo, old: JsonObject): Promise<void> {
    // No patch is ever applied, so nothing can call for a second round.
    await this.mutatingRound(info, undefined, old, new MutatingReinvocation());
  }

  async validate(info: AdmissionRequestInfo, obj: JsonObject | undefined, old: JsonObject | undefined): Promise<void> {
    const matched = this.matching("validatingwebhookconfigurations", info).filter((m) =>
      this.selects(m.hook, info, obj, old),
    );
    // Every webhook's conditions are decided before any is called: an error fails the write first.
    const hooks = matched.filter((m) => this.conditionsHold(m, info, obj, old)).map((m) => m.hook);
    if (hooks.length === 0) return;
    const outcomes = await Promise.allSettled(hooks.map((hook) => this.call(hook, info, obj, old, false)));
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (refused !== undefined) throw refused.reason;
  }

  /**
   * One round of the mutating webhooks, in order, each on the object the previous one left (its
   * selectors and conditions too, as the dispatcher checks each webhook on the versioned object it
   * has so far); `obj` is undefined for a DELETE.
   */
  private async mutatingRound<T extends JsonObject | undefined>(
    info: AdmissionRequestInfo,
    obj: T,
    old: JsonObject | undefined,
    reinvocation: MutatingReinvocation,
  ): Promise<T> {
    let current: JsonObject | undefined = obj;
    for (const matched of this.matching("mutatingwebhookconfigurations", info)) {
      if (!this.selects(matched.hook, info, current, old)) continue;
      if (!this.conditionsHold(matched, info, current, old)) continue;
      if (!reinvocation.shouldCall(matched.uid)) continue;
      const { hook } = matched;
      const answer = await this.call(hook, info, current, old, true);
      const patched = answer === undefined ? current : patchedBy(hook.name, current, answer.ops);
      reinvocation.called(matched.uid, !jsonEqual(patched, current), hook.reinvocationPolicy === "IfNeeded");
      current = patched;
    }
    return current as T;
  }

  /**
   * Whether a matched webhook's matchConditions let it be called; throws the 403 of an evaluation
   * error under failurePolicy Fail.
   */
  private conditionsHold(
    matched: MatchedWebhook,
    info: AdmissionRequestInfo,
    obj: JsonObject | undefined,
    old: JsonObject | undefined,
  ): boolean {
    if (matched.conditions.length === 0) return true;
    const activation = new AdmissionActivation({ attributes: admissionAttributes(info, obj, old) });
    const outcome = evaluateMatchConditions(matched.conditions, activation, matched.hook.failurePolicy);
    if ("error" in outcome) throw forbidden(gr(info.served), info.name, outcome.error);
    return outcome.matches;
  }

  /** Calls one webhook; resolves with its answer when it allowed, undefined when skipped (Ignore). */
  private async call(
    hook: StoredWebhook,
    info: AdmissionRequestInfo,
    obj: JsonObject | undefined,
    old: JsonObject | undefined,
    mutating: boolean,
  ) {
    const dryRun = info.options.dryRun === true;
    if (dryRun && hook.sideEffects !== "None" && hook.sideEffects !== "NoneOnDryRun") {
      throw new ApiError(
        failure(400, "BadRequest", `admission webhook ${JSON.stringify(hook.name)} does not support dry run`),
      );
    }
    let answer: Awaited<ReturnType<typeof callWebhook>>;
    try {
      answer = await callWebhook(hook, admissionAttributes(info, obj, old), mutating, this.agents);
    } catch (err) {
      if (!(err instanceof WebhookCallError)) throw err;
      if (hook.failurePolicy === "Ignore") return undefined;
      throw callFailure(hook.name, err.message);
    }
    for (const warning of answer.warnings) info.options.warnings?.push(warning);
    if (!answer.allowed) throw rejection(hook.name, answer.result);
    if (answer.patch === undefined) return { ...answer, ops: [] };
    try {
      return { ...answer, ops: decodeJsonPatch(parseJsonLimited(answer.patch.toString("utf8"))) };
    } catch (err) {
      // jsonpatch.DecodePatch failing is a failed call (the dispatcher's ErrCallingWebhook): failurePolicy decides.
      if (!(err instanceof GoJsonSyntaxError || err instanceof JsonPatchError)) throw err;
      if (hook.failurePolicy === "Ignore") return undefined;
      throw callFailure(hook.name, `received undecodable patch in webhook response: ${err.message}`);
    }
  }

  /** Whether a webhook's namespaceSelector and objectSelector select this request's objects. */
  private selects(
    hook: StoredWebhook,
    info: AdmissionRequestInfo,
    obj: JsonObject | undefined,
    old: JsonObject | undefined,
  ): boolean {
    // On a DELETE there is no object: a namespace's selector reads the namespace being deleted.
    const namespaceObject = obj ?? (info.operation === "DELETE" ? old : undefined);
    return (
      namespaceSelectorMatches(this.storage, hook.namespaceSelector, info, namespaceObject) &&
      objectSelectorMatches(hook.objectSelector, obj, old)
    );
  }

  /** The webhooks of `plural` configurations whose rules match this request, in the order they run. */
  private matching(plural: string, info: AdmissionRequestInfo): MatchedWebhook[] {
    if (info.served.group === GROUP && EXEMPT.has(info.served.plural)) return [];
    const configs = this.storage.list(`${GROUP}/${plural}`, "");
    if (configs.length === 0) return [];
    const attrs = {
      operation: info.operation,
      resource: { group: info.served.group, version: info.served.version, resource: info.served.plural },
      subresource: info.subresource,
      namespace: admissionNamespace(info),
    };
    const out: MatchedWebhook[] = [];
    const live = new Set<string>();
    // Configurations run in name order (the storage lists keys in order), webhooks in theirs.
    for (const stored of configs) {
      const key = `${plural}/${stored.key}`;
      live.add(key);
      // Parsed once per configuration version: every write of every kind reads them.
      const webhooks = this.parsed.get(key, stored.rev, () => parseWebhooks(stored.data));
      let compiled: CompiledMatchCondition[][] | undefined;
      webhooks.forEach(({ hook, rules }, i) => {
        if (!rules.some((r) => ruleMatches(r, attrs))) return;
        compiled ??= this.conditions.get(key, stored.rev, () =>
          webhooks.map((w) => compileMatchConditions(w.hook.matchConditions, {})),
        );
        out.push({ hook, uid: `${stored.key}/${i}`, conditions: compiled[i] ?? [] });
      });
    }
    this.conditions.retain(live);
    this.parsed.retain(live);
    return out;
  }
}

/** A stored webhook and the rules it matches with (any version under `matchPolicy: Equivalent`). */
interface ParsedWebhook {
  hook: StoredWebhook;
  rules: WebhookRule[];
}

function parseWebhooks(data: string): ParsedWebhook[] {
  const config = JSON.parse(data) as { webhooks?: StoredWebhook[] };
  return (config.webhooks ?? []).map((hook) => {
    const exact = hook.matchPolicy === "Exact";
    return { hook, rules: (hook.rules ?? []).map((r) => (exact ? r : { ...r, apiVersions: ["*"] })) };
  });
}

/**
 * `obj` with a mutating webhook's JSON Patch applied. A DELETE has no object to patch: a patch with
 * operations fails it, as the mutating dispatcher refuses one (an empty patch changes nothing). A
 * patch that does not apply is an internal error carrying json-patch's own message, as the
 * dispatcher answers it (apierrors.NewInternalError).
 */
function patchedBy(name: string, obj: JsonObject | undefined, ops: Operation[]): JsonObject | undefined {
  if (ops.length === 0) return obj;
  if (obj === undefined) {
    throw internalError(
      new Error(
        `admission webhook ${JSON.stringify(name)} attempted to modify the object, which is not supported for this operation`,
      ),
    );
  }
  try {
    return applyJsonPatch(obj, ops) as JsonObject;
  } catch (err) {
    if (err instanceof JsonPatchError) throw internalError(err);
    throw err;
  }
}
