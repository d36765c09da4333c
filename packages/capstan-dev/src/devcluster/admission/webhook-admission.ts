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
 * - A webhook is called for the version its rules match: the one the client wrote to, else under
 *   `matchPolicy: Equivalent` the first other version of the same storage a rule matches (a CRD's
 *   versions, events.k8s.io and core Events, autoscaling/v1 and v2); the objects are converted to
 *   it (versioned-objects.ts) and `requestKind`/`requestResource` say what the client wrote to.
 *   Equivalent resources are those sharing a storage, as kube-apiserver keys them by storage prefix.
 * - CONNECT is not admitted (there is nothing to connect to).
 * - The devcluster's own controllers delete in process: admission sees them with an empty
 *   username, as their writes (kube-apiserver sees each controller's service account).
 * - Webhook and policy configurations themselves are never sent to webhooks (as kube-apiserver).
 */

import { jsonEqual } from "../machinery/semantic-equal.ts";
import { ApiError, failure, forbidden, internalError } from "../machinery/status.ts";
import { applyJsonPatch, decodeJsonPatch, JsonPatchError, type Operation } from "../patch/json-patch.ts";
import type { ResourceRegistry } from "../registry/registry.ts";
import { bucketOf, gr, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import type { LabelSelector } from "../rest/label-selector.ts";
import type { AdmissionRequestInfo, CustomResourceConverter, DynamicAdmission } from "../rest/types.ts";
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
import { backToAdmitted, sameResource, type Versioned, VersionedObjects } from "./versioned-objects.ts";
import { type CalledWebhook, callWebhook, WebhookAgents, WebhookCallError } from "./webhook-call.ts";
import { MutatingReinvocation } from "./webhook-reinvocation.ts";
import { callFailure, rejection } from "./webhook-response.ts";
import { type RuleAttributes, ruleMatches, type WebhookRule } from "./webhook-rules.ts";

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
  /**
   * The resource the webhook is called for (the invocation's kind and resource): the requested one
   * when a rule matches it, else the first equivalent one a rule matches (matchPolicy Equivalent).
   */
  version: ServedResource;
}

/** The stored configurations' webhooks; see the module documentation. */
export class WebhookAdmission implements DynamicAdmission {
  private readonly agents = new WebhookAgents();
  /** Each configuration's webhooks' compiled matchConditions, by `<plural>/<name>`. */
  private readonly conditions = new CompiledByRevision<CompiledMatchCondition[][]>();
  private readonly parsed = new CompiledByRevision<StoredWebhook[]>();

  /**
   * `registry` lists the equivalent resources (the versions of one storage); `converter` is the
   * store's conversion of CRD versions through their webhook, read when needed (it is set later).
   */
  constructor(
    private readonly storage: Storage,
    private readonly registry: ResourceRegistry,
    private readonly converter: () => CustomResourceConverter | undefined = () => undefined,
  ) {}

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
    if (matched.length === 0) return;
    const versioned = new VersionedObjects(this.converter(), info.served, obj, old);
    // Every webhook's conditions are decided before any is called: an error fails the write first.
    const calls: { matched: MatchedWebhook; objects: Versioned }[] = [];
    for (const m of matched) {
      const objects = await versioned.in(m.version);
      if (this.conditionsHold(m, info, objects)) calls.push({ matched: m, objects });
    }
    if (calls.length === 0) return;
    const outcomes = await Promise.allSettled(calls.map((c) => this.call(c.matched, info, c.objects, false)));
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
    let versioned: VersionedObjects | undefined;
    for (const matched of this.matching("mutatingwebhookconfigurations", info)) {
      if (!this.selects(matched.hook, info, current, old)) continue;
      // The objects in the webhook's version, converted again only after a change.
      versioned ??= new VersionedObjects(this.converter(), info.served, current, old);
      const objects = await versioned.in(matched.version);
      if (!this.conditionsHold(matched, info, objects)) continue;
      if (!reinvocation.shouldCall(matched.uid)) continue;
      const { hook } = matched;
      const answer = await this.call(matched, info, objects, true);
      let patched = current;
      if (answer !== undefined) {
        const inVersion = patchedBy(hook.name, objects.obj, answer.ops);
        if (inVersion !== objects.obj && inVersion !== undefined) {
          patched = await backToAdmitted(this.converter(), info.served, matched.version, inVersion);
        }
      }
      const changed = !jsonEqual(patched, current);
      reinvocation.called(matched.uid, changed, hook.reinvocationPolicy === "IfNeeded");
      if (changed) versioned = undefined;
      current = patched;
    }
    return current as T;
  }

  /**
   * Whether a matched webhook's matchConditions let it be called; throws the 403 of an evaluation
   * error under failurePolicy Fail.
   */
  private conditionsHold(matched: MatchedWebhook, info: AdmissionRequestInfo, objects: Versioned): boolean {
    if (matched.conditions.length === 0) return true;
    const attributes = admissionAttributes(info, objects.obj, objects.old, matched.version);
    const activation = new AdmissionActivation({ attributes });
    const outcome = evaluateMatchConditions(matched.conditions, activation, matched.hook.failurePolicy);
    // Named as the request's resource (attr.GetResource()), whatever version the webhook is called for.
    if ("error" in outcome) throw forbidden(gr(info.requested ?? info.served), info.name, outcome.error);
    return outcome.matches;
  }

  /** Calls one webhook; resolves with its answer when it allowed, undefined when skipped (Ignore). */
  private async call(matched: MatchedWebhook, info: AdmissionRequestInfo, objects: Versioned, mutating: boolean) {
    const { hook } = matched;
    const dryRun = info.options.dryRun === true;
    if (dryRun && hook.sideEffects !== "None" && hook.sideEffects !== "NoneOnDryRun") {
      throw new ApiError(
        failure(400, "BadRequest", `admission webhook ${JSON.stringify(hook.name)} does not support dry run`),
      );
    }
    let answer: Awaited<ReturnType<typeof callWebhook>>;
    try {
      const attributes = admissionAttributes(info, objects.obj, objects.old, matched.version);
      answer = await callWebhook(hook, attributes, mutating, this.agents);
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

  /**
   * The webhooks of `plural` configurations whose rules match this request, in the order they run,
   * each with the resource it is called for (generic/webhook.go ShouldCallHook): a rule matching
   * the resource the client addressed calls it for that one; else, under matchPolicy Equivalent, the
   * rules in order, each against the other versions of the same storage in registration order.
   */
  private matching(plural: string, info: AdmissionRequestInfo): MatchedWebhook[] {
    if (info.served.group === GROUP && EXEMPT.has(info.served.plural)) return [];
    const configs = this.storage.list(`${GROUP}/${plural}`, "");
    if (configs.length === 0) return [];
    const requested = info.requested ?? info.served;
    const attrsOf = (r: ServedResource): RuleAttributes => ({
      operation: info.operation,
      resource: { group: r.group, version: r.version, resource: r.plural },
      subresource: info.subresource,
      namespace: admissionNamespace(info),
    });
    const asRequested = attrsOf(requested);
    let equivalents: { served: ServedResource; attrs: RuleAttributes }[] | undefined;
    const out: MatchedWebhook[] = [];
    const live = new Set<string>();
    // Configurations run in name order (the storage lists keys in order), webhooks in theirs.
    for (const stored of configs) {
      const key = `${plural}/${stored.key}`;
      live.add(key);
      // Parsed once per configuration version: every write of every kind reads them.
      const webhooks = this.parsed.get(key, stored.rev, () => parseWebhooks(stored.data));
      let compiled: CompiledMatchCondition[][] | undefined;
      webhooks.forEach((hook, i) => {
        const rules = hook.rules ?? [];
        let version: ServedResource | undefined;
        if (rules.some((r) => ruleMatches(r, asRequested))) version = requested;
        else if (hook.matchPolicy !== "Exact") {
          equivalents ??= this.equivalentsOf(info, requested).map((served) => ({ served, attrs: attrsOf(served) }));
          version = firstEquivalentMatch(rules, equivalents);
        }
        if (version === undefined) return;
        compiled ??= this.conditions.get(key, stored.rev, () =>
          webhooks.map((w) => compileMatchConditions(w.matchConditions, {})),
        );
        out.push({ hook, uid: `${stored.key}/${i}`, conditions: compiled[i] ?? [], version });
      });
    }
    this.conditions.retain(live);
    this.parsed.retain(live);
    return out;
  }

  /**
   * The resources equivalent to the request's (EquivalentResourceMapper): the other served versions
   * kept in the same storage (a CRD's versions, a conversion view and its storage) that have the
   * request's subresource, in registration order.
   */
  private equivalentsOf(info: AdmissionRequestInfo, requested: ServedResource): ServedResource[] {
    const bucket = bucketOf(info.served);
    return this.registry
      .all()
      .filter(
        (r) =>
          bucketOf(r) === bucket &&
          !sameResource(r, requested) &&
          r.computed === undefined &&
          (info.subresource === "" || hasSubresource(r, info.subresource)),
      );
  }
}

/** The first equivalent resource a rule matches, rules in order (earlier rules are honoured first). */
function firstEquivalentMatch(
  rules: readonly WebhookRule[],
  equivalents: readonly { served: ServedResource; attrs: RuleAttributes }[],
): ServedResource | undefined {
  for (const rule of rules) {
    for (const e of equivalents) if (ruleMatches(rule, e.attrs)) return e.served;
  }
  return undefined;
}

function hasSubresource(served: ServedResource, subresource: string): boolean {
  const subresources = served.subresources as Record<string, unknown>;
  return subresources[subresource] !== undefined && subresources[subresource] !== false;
}

function parseWebhooks(data: string): StoredWebhook[] {
  return (JSON.parse(data) as { webhooks?: StoredWebhook[] }).webhooks ?? [];
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
