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
 * ## Caveats (docs/webhooks.md)
 * - `matchConditions` are not evaluated (a webhook with them is called as if they held), and
 *   `reinvocationPolicy: IfNeeded` does not call a webhook again.
 * - Only `clientConfig.url` can be called (no cluster network for a Service reference).
 * - Objects of a CRD with several versions are sent in the storage version (matchPolicy
 *   Equivalent, the default, matches any version; Exact compares with the storage version).
 * - DELETE and CONNECT are not admitted by webhooks yet.
 * - Webhook and policy configurations themselves are never sent to webhooks (as kube-apiserver).
 */

import { ApiError, failure, internalError } from "../machinery/status.ts";
import { applyJsonPatch, decodeJsonPatch } from "../patch/json-patch.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import { type LabelSelector, selectorMatches } from "../rest/label-selector.ts";
import type { AdmissionRequestInfo, DynamicAdmission } from "../rest/types.ts";
import type { Storage } from "../storage/storage.ts";
import {
  type AdmissionAttributes,
  type CalledWebhook,
  callWebhook,
  WebhookAgents,
  WebhookCallError,
} from "./webhook-call.ts";
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
}

/** The stored configurations' webhooks; see the module documentation. */
export class WebhookAdmission implements DynamicAdmission {
  private readonly agents = new WebhookAgents();

  constructor(private readonly storage: Storage) {}

  /** Closes the connections to webhooks (the server is stopping). */
  close(): void {
    this.agents.close();
  }

  async mutate(info: AdmissionRequestInfo, obj: JsonObject, old: JsonObject | undefined): Promise<JsonObject> {
    const hooks = this.matching("mutatingwebhookconfigurations", info, obj, old);
    let current = obj;
    for (const hook of hooks) {
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
    const hooks = this.matching("validatingwebhookconfigurations", info, obj, old);
    if (hooks.length === 0) return;
    const outcomes = await Promise.allSettled(hooks.map((hook) => this.call(hook, info, obj, old, false)));
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (refused !== undefined) throw refused.reason;
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
      answer = await callWebhook(hook, attributes(info, obj, old), mutating, this.agents);
    } catch (err) {
      if (!(err instanceof WebhookCallError)) throw err;
      if (hook.failurePolicy === "Ignore") return undefined;
      throw callFailure(hook.name, err.message);
    }
    for (const warning of answer.warnings) info.options.warnings?.push(warning);
    if (!answer.allowed) throw rejection(hook.name, answer.result);
    return answer;
  }

  /** The webhooks of `plural` configurations that apply to this write, in the order they run. */
  private matching(
    plural: string,
    info: AdmissionRequestInfo,
    obj: JsonObject | undefined,
    old: JsonObject | undefined,
  ): StoredWebhook[] {
    if (info.served.group === GROUP && EXEMPT.has(info.served.plural)) return [];
    const configs = this.storage.list(`${GROUP}/${plural}`, "");
    if (configs.length === 0) return [];
    const attrs = {
      operation: info.operation,
      resource: { group: info.served.group, version: info.served.version, resource: info.served.plural },
      subresource: info.subresource,
      namespace: info.served.namespaced
        ? info.namespace
        : info.served.plural === "namespaces" && info.served.group === ""
          ? info.name
          : "",
    };
    const out: StoredWebhook[] = [];
    // Configurations run in name order (the storage lists keys in order), webhooks in theirs.
    for (const stored of configs) {
      const config = JSON.parse(stored.data) as { webhooks?: StoredWebhook[] };
      for (const hook of config.webhooks ?? []) {
        const exact = hook.matchPolicy === "Exact";
        const rules = (hook.rules ?? []).map((r) => (exact ? r : { ...r, apiVersions: ["*"] }));
        if (!rules.some((r) => ruleMatches(r, attrs))) continue;
        if (!this.namespaceMatches(hook, info, attrs.namespace, obj)) continue;
        if (!objectMatches(hook.objectSelector, obj, old)) continue;
        out.push(hook);
      }
    }
    return out;
  }

  private namespaceMatches(
    hook: StoredWebhook,
    info: AdmissionRequestInfo,
    namespace: string,
    obj: JsonObject | undefined,
  ): boolean {
    const selector = hook.namespaceSelector;
    if (selector === undefined || isEmptySelector(selector)) return true;
    // A cluster-scoped object (other than a namespace) is not selected out by a namespaceSelector.
    if (namespace === "") return true;
    const isNamespace = info.served.group === "" && info.served.plural === "namespaces";
    let labels: Record<string, string> | undefined;
    if (isNamespace) labels = labelsOf(obj);
    else {
      // Namespaces are cluster-scoped: their key is their name.
      const stored = this.storage.get("/namespaces", namespace);
      labels = stored === undefined ? undefined : labelsOf(JSON.parse(stored.data) as JsonObject);
    }
    return selectorMatches(selector, labels ?? {});
  }
}

function attributes(
  info: AdmissionRequestInfo,
  obj: JsonObject | undefined,
  old: JsonObject | undefined,
): AdmissionAttributes {
  const { served } = info;
  const requester = info.options.requester;
  const object = obj === undefined ? null : withoutPlaceholders(obj, info.operation);
  const optionsKind =
    info.operation === "CREATE" ? "CreateOptions" : info.operation === "UPDATE" ? "UpdateOptions" : "DeleteOptions";
  return {
    kind: { group: served.group, version: served.version, kind: served.kind },
    resource: { group: served.group, version: served.version, resource: served.plural },
    subResource: info.subresource,
    name: info.name,
    namespace: served.namespaced ? info.namespace : "",
    operation: info.operation,
    userInfo:
      requester === undefined
        ? { username: "" }
        : { username: requester.username, groups: requester.groups, ...(requester.uid ? { uid: requester.uid } : {}) },
    object,
    oldObject: old ?? null,
    dryRun: info.options.dryRun === true,
    options: {
      apiVersion: "meta.k8s.io/v1",
      kind: optionsKind,
      ...(info.options.dryRun ? { dryRun: ["All"] } : {}),
      ...(info.options.fieldManager?.manager ? { fieldManager: info.options.fieldManager.manager } : {}),
    },
  };
}

/** The store holds a created object's resourceVersion place as `""`; a webhook sees none. */
function withoutPlaceholders(obj: JsonObject, operation: string): JsonObject {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (operation !== "CREATE" || meta?.resourceVersion !== "") return obj;
  const { resourceVersion: _, ...rest } = meta;
  return { ...obj, metadata: rest };
}

function objectMatches(
  selector: LabelSelector | undefined,
  obj: JsonObject | undefined,
  old: JsonObject | undefined,
): boolean {
  if (selector === undefined || isEmptySelector(selector)) return true;
  return (
    (obj !== undefined && selectorMatches(selector, labelsOf(obj))) ||
    (old !== undefined && selectorMatches(selector, labelsOf(old)))
  );
}

function isEmptySelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

function labelsOf(obj: JsonObject | undefined): Record<string, string> {
  return ((obj?.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<string, string>;
}
