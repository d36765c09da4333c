/**
 * The embedded API server's dynamic admission: MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook as kube-apiserver runs them on a write (k8s.io/apiserver
 * pkg/admission/plugin/webhook), over the configurations stored in the cluster.
 *
 * ## Expected flow (one create or update; the store calls it, rest/object-store.ts)
 * 1. `mutate`: the webhooks of every MutatingWebhookConfiguration (configurations in name order,
 *    webhooks in their order) whose rules, namespaceSelector and objectSelector match are called one
 *    after another; each sees the object as the previous one left it; a JSON Patch it answers is
 *    applied. The store then defaults and validates the result again.
 * 2. `validate`: the matching webhooks of every ValidatingWebhookConfiguration are called at once
 *    on the final object; the first refusal fails the write.
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
 * - `reinvocationPolicy: IfNeeded` does not call a webhook again; matchConditions cannot use
 *   `authorizer` (declared, but an expression calling it fails at evaluation).
 * - Only `clientConfig.url` can be called (no cluster network for a Service reference).
 * - Objects of a CRD with several versions are sent in the storage version (matchPolicy
 *   Equivalent, the default, matches any version; Exact compares with the storage version).
 * - DELETE and CONNECT are not admitted by webhooks yet.
 * - Webhook and policy configurations themselves are never sent to webhooks (as kube-apiserver).
 */

import { ApiError, failure, forbidden, internalError } from "../machinery/status.ts";
import { applyJsonPatch, decodeJsonPatch } from "../patch/json-patch.ts";
import { gr, type JsonObject } from "../registry/served-resource.ts";
import type { LabelSelector } from "../rest/label-selector.ts";
import type { AdmissionRequestInfo, DynamicAdmission } from "../rest/types.ts";
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
}

/** A webhook whose rules and selectors matched, with its compiled matchConditions. */
interface MatchedWebhook {
  hook: StoredWebhook;
  conditions: readonly CompiledMatchCondition[];
}

/** The stored configurations' webhooks; see the module documentation. */
export class WebhookAdmission implements DynamicAdmission {
  private readonly agents = new WebhookAgents();
  /** Each configuration's webhooks' compiled matchConditions, by `<plural>/<name>`. */
  private readonly conditions = new CompiledByRevision<CompiledMatchCondition[][]>();

  constructor(private readonly storage: Storage) {}

  /** Closes the connections to webhooks (the server is stopping). */
  close(): void {
    this.agents.close();
  }

  async mutate(info: AdmissionRequestInfo, obj: JsonObject, old: JsonObject | undefined): Promise<JsonObject> {
    const hooks = this.matching("mutatingwebhookconfigurations", info, obj, old);
    let current = obj;
    for (const matched of hooks) {
      // Each webhook's conditions see the object the previous webhooks left, as it would be sent.
      if (!this.conditionsHold(matched, info, current, old)) continue;
      const { hook } = matched;
      const answer = await this.call(hook, info, current, old, true);
      if (answer?.patch === undefined) continue;
      try {
        current = applyJsonPatch(current, decodeJsonPatch(JSON.parse(answer.patch.toString("utf8")))) as JsonObject;
      } catch (err) {
        throw internalError(
          new Error(`JSON Patch of webhook ${JSON.stringify(hook.name)} does not apply: ${(err as Error).message}`),
        );
      }
    }
    return current;
  }

  async validate(info: AdmissionRequestInfo, obj: JsonObject | undefined, old: JsonObject | undefined): Promise<void> {
    const matched = this.matching("validatingwebhookconfigurations", info, obj, old);
    // Every webhook's conditions are decided before any is called: an error fails the write first.
    const hooks = matched.filter((m) => this.conditionsHold(m, info, obj, old)).map((m) => m.hook);
    if (hooks.length === 0) return;
    const outcomes = await Promise.allSettled(hooks.map((hook) => this.call(hook, info, obj, old, false)));
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (refused !== undefined) throw refused.reason;
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
    return answer;
  }

  /** The webhooks of `plural` configurations whose rules and selectors match this write, in the order they run. */
  private matching(
    plural: string,
    info: AdmissionRequestInfo,
    obj: JsonObject | undefined,
    old: JsonObject | undefined,
  ): MatchedWebhook[] {
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
      const config = JSON.parse(stored.data) as { webhooks?: StoredWebhook[] };
      const webhooks = config.webhooks ?? [];
      const key = `${plural}/${stored.key}`;
      live.add(key);
      let compiled: CompiledMatchCondition[][] | undefined;
      webhooks.forEach((hook, i) => {
        const exact = hook.matchPolicy === "Exact";
        const rules = (hook.rules ?? []).map((r) => (exact ? r : { ...r, apiVersions: ["*"] }));
        if (!rules.some((r) => ruleMatches(r, attrs))) return;
        if (!namespaceSelectorMatches(this.storage, hook.namespaceSelector, info, obj)) return;
        if (!objectSelectorMatches(hook.objectSelector, obj, old)) return;
        compiled ??= this.conditions.get(key, stored.rev, () =>
          webhooks.map((w) => compileMatchConditions(w.matchConditions, {})),
        );
        out.push({ hook, conditions: compiled[i] ?? [] });
      });
    }
    this.conditions.retain(live);
    return out;
  }
}
