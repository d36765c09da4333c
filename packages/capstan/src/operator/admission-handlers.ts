/**
 * `op.on.validate` and `op.on.mutate`: admission handlers of an operator, each served at its own
 * path of the operator's webhook server (webhooks/webhook-server.ts) and described well enough for
 * a webhook configuration to be generated from it (which operations, subresources, failure policy,
 * timeout, selectors).
 *
 * Paths follow kubebuilder's convention plus the handler id, so several handlers of one kind
 * coexist: `/validate-<group with dots as dashes>-<version>-<kind in lower case>-<id>`.
 * Webhook names (what the API server names in its messages: `admission webhook "<name>" denied
 * the request`) are `<id>.<plural>.<operator>.capstan.dev`, a fully qualified name as
 * admissionregistration requires.
 */
import type { LabelSelector } from "kubernetes-types/meta/v1.d.ts";
import type { KubeClient } from "../client/kube-client.ts";
import type { ResourceKind } from "../client/types.ts";
import { type Duration, toMilliseconds } from "../runtime/duration.ts";
import type { AdmissionHandlerSpec, MutatingHandler, ValidatingHandler } from "../webhooks/admission.ts";
import { DEFAULT_ADMISSION_TIMEOUT_MS } from "../webhooks/admission.ts";
import type { AdmissionOperation } from "../webhooks/admission-review.ts";
import { normalizeHandlerId } from "./naming.ts";

/** Options of an admission handler; they become its webhook configuration's fields. */
export interface AdmissionHandlerOptions {
  /** Handler id (default: the function's name, else `validate-<n>` / `mutate-<n>`). */
  id?: string;
  /** Operations sent to the handler (default CREATE and UPDATE, kubebuilder's default). */
  operations?: readonly AdmissionOperation[];
  /** Subresources included besides the object itself, e.g. `["status"]` (default none). */
  subresources?: readonly string[];
  /** What the API server does when the handler cannot be reached: `Fail` (default) or `Ignore`. */
  failurePolicy?: "Fail" | "Ignore";
  /** The API server's timeout for the call, and the handler's own (default 10 s, at most 30 s). */
  timeout?: Duration;
  /** `None` (default): the handler changes nothing outside the object; `NoneOnDryRun`: only when not dryRun. */
  sideEffects?: "None" | "NoneOnDryRun";
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  /** Mutating handlers: `IfNeeded` to be called again after later mutations (default `Never`). */
  reinvocationPolicy?: "Never" | "IfNeeded";
}

/** One registered admission handler, as generation and the webhook server see it. */
export interface AdmissionWebhook {
  type: "validating" | "mutating";
  kind: ResourceKind;
  id: string;
  /** The path it is served at. */
  path: string;
  /** The webhook's name in its configuration. */
  name: string;
  options: Readonly<AdmissionHandlerOptions>;
  timeoutMs: number;
  fn: ValidatingHandler | MutatingHandler;
}

/** The API server allows 1 to 30 seconds. */
const MAX_TIMEOUT_MS = 30_000;

/** The admission handlers of one operator. */
export class AdmissionHandlers {
  private readonly list: AdmissionWebhook[] = [];

  constructor(private readonly operatorName: string) {}

  /** Registers a handler; throws for a duplicate id or an invalid option. */
  add(
    type: AdmissionWebhook["type"],
    kind: ResourceKind,
    options: AdmissionHandlerOptions,
    fn: ValidatingHandler | MutatingHandler,
  ): void {
    if (typeof fn !== "function")
      throw new Error(
        `on.${type === "validating" ? "validate" : "mutate"}(${kind.kind}): the handler is not a function`,
      );
    const verb = type === "validating" ? "validate" : "mutate";
    const sameKind = this.list.filter(
      (w) => w.type === type && w.kind.group === kind.group && w.kind.kind === kind.kind,
    );
    const fnName = fn.name !== "" && fn.name !== "anonymous" ? fn.name : undefined;
    // Webhook names are DNS names: lower case, no "_".
    const id = normalizeHandlerId(options.id ?? fnName ?? `${verb}-${sameKind.length + 1}`)
      .toLowerCase()
      .replace(/_/g, "-");
    if (sameKind.some((w) => w.id === id)) {
      throw new Error(`${kind.kind}: two ${verb} handlers share the id "${id}"; give one of them an explicit { id }`);
    }
    const timeoutMs = options.timeout === undefined ? DEFAULT_ADMISSION_TIMEOUT_MS : toMilliseconds(options.timeout);
    if (timeoutMs < 1000 || timeoutMs > MAX_TIMEOUT_MS) {
      throw new Error(`on.${verb}(${kind.kind}) ${id}: timeout must be from 1 s to 30 s (the API server's limits)`);
    }
    const group = kind.group === "" ? "" : kind.group.replace(/\./g, "-");
    this.list.push({
      type,
      kind,
      id,
      path: `/${verb}-${group}-${kind.version}-${kind.kind.toLowerCase()}-${id}`,
      name: `${id}.${kind.plural}.${this.operatorName}.capstan.dev`,
      options: { ...options },
      timeoutMs,
      fn,
    });
  }

  /** Every registered handler, in registration order. */
  all(): readonly AdmissionWebhook[] {
    return this.list;
  }

  /** What the webhook server runs for each path; handlers get `api` as their `ctx.api`. */
  specs(api?: KubeClient): { path: string; spec: AdmissionHandlerSpec }[] {
    return this.list.map((w) => ({
      path: w.path,
      spec: { name: `handler "${w.id}"`, type: w.type, fn: w.fn, timeoutMs: w.timeoutMs, ...(api ? { api } : {}) },
    }));
  }
}
