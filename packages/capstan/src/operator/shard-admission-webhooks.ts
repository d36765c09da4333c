/**
 * The mutating webhook of assignment at admission (`sharding: { admission }`, see
 * runtime/shard-admission.ts): one webhook per kind of the ring (the kinds the operator handles
 * or reconciles, and the kinds its controllers own), all served at one path of the operator's
 * webhook server, all in the operator's MutatingWebhookConfiguration (`<operator>-mutating`).
 *
 * The configuration's fields, and what kube-apiserver does with them
 * (k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go, predicates/object):
 * - `operations: [CREATE]`: only a new object is assigned here; every later change is the
 *   coordinator's.
 * - `objectSelector`: the shard and drain labels `DoesNotExist`. On a CREATE the API server matches
 *   the new object's labels (old object absent), so an object its creator labelled already (a
 *   member's children carry its label) or one with a drain label is not even sent.
 * - `failurePolicy: Ignore`: an error calling the webhook (unreachable, TLS, timeout) lets the
 *   create through unlabelled ("failing open"). A denial is never ignored, whatever the policy,
 *   so the handler never denies: whatever goes wrong, it leaves the object as it is.
 * - `timeoutSeconds`: short (`ShardAdmissionConfig.timeout`, default 2 s), so a slow replica
 *   costs a create at most that.
 * - `sideEffects: None`: the handler writes nothing, so the API server calls it on dryRun too.
 * - `reinvocationPolicy: Never`: the label is decided by the object's name and owner, which a
 *   later webhook cannot change; one call is enough.
 * - `matchPolicy: Equivalent` and `admissionReviewVersions: [v1]`, as every Capstan webhook: a
 *   create through another version of the kind is converted to the rule's version and sent too.
 */
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { toMilliseconds } from "../runtime/duration.ts";
import { DEFAULT_SHARD_ADMISSION_TIMEOUT, type ShardAdmissionConfig } from "../runtime/shard-admission.ts";
import { shardLabels } from "../runtime/shard-labels.ts";
import type { Sharding, ShardingConfig } from "../runtime/sharding.ts";
import type { MutatingHandler } from "../webhooks/admission.ts";
import type { AdmissionWebhook } from "./admission-handlers.ts";

/** The handler id of the shard assignment webhooks (their names are `assign-shard.<plural>.<operator>.capstan.dev`). */
export const SHARD_ADMISSION_ID = "assign-shard";

/** The admission settings of a sharding option, or `undefined` when admission is off. */
export function shardAdmissionConfig(sharding: boolean | ShardingConfig | undefined): ShardAdmissionConfig | undefined {
  if (sharding === undefined || sharding === false || sharding === true) return undefined;
  const { admission } = sharding;
  if (admission === undefined || admission === false) return undefined;
  return admission === true ? {} : admission;
}

/**
 * The webhooks assigning new objects of `kinds` at admission, for ring `ring` of operator
 * `operatorName`; `sharding()` gives the running replica's sharding (undefined before it starts:
 * then nothing is labelled).
 */
export function shardAdmissionWebhooks(options: {
  operatorName: string;
  ring: string;
  kinds: readonly ResourceKind[];
  config: ShardAdmissionConfig;
  sharding: () => Sharding | undefined;
}): AdmissionWebhook[] {
  const labels = shardLabels(options.ring);
  const timeoutMs = toMilliseconds(options.config.timeout ?? DEFAULT_SHARD_ADMISSION_TIMEOUT);
  if (!Number.isInteger(timeoutMs / 1000) || timeoutMs < 1000 || timeoutMs > 30_000) {
    throw new Error(
      `sharding: admission timeout must be whole seconds from 1 s to 30 s (timeoutSeconds), got ${timeoutMs} ms`,
    );
  }
  const fn: MutatingHandler = (ctx) => {
    if (ctx.operation !== "CREATE") return;
    let member: string | undefined;
    try {
      member = options.sharding()?.admission?.memberFor({
        group: ctx.request.kind.group,
        kind: ctx.request.kind.kind,
        namespace: ctx.namespace,
        obj: ctx.obj,
      });
    } catch {
      return; // never a denial (failurePolicy does not excuse one): the coordinator assigns it
    }
    if (member === undefined) return;
    const obj: KubeObject = ctx.obj;
    obj.metadata = { ...obj.metadata, labels: { ...obj.metadata?.labels, [labels.shard]: member } };
  };
  const seen = new Set<string>();
  const webhooks: AdmissionWebhook[] = [];
  for (const kind of options.kinds) {
    const id = `${kind.group}/${kind.kind}`;
    if (seen.has(id)) continue;
    seen.add(id);
    webhooks.push({
      type: "mutating",
      kind,
      id: SHARD_ADMISSION_ID,
      path: `/${SHARD_ADMISSION_ID}-${options.ring}`,
      name: `${SHARD_ADMISSION_ID}.${kind.plural}.${options.operatorName}.capstan.dev`,
      options: {
        id: SHARD_ADMISSION_ID,
        operations: ["CREATE"],
        failurePolicy: "Ignore",
        sideEffects: "None",
        reinvocationPolicy: "Never",
        timeout: `${timeoutMs / 1000}s`,
        objectSelector: {
          matchExpressions: [
            { key: labels.shard, operator: "DoesNotExist" },
            { key: labels.drain, operator: "DoesNotExist" },
          ],
        },
      },
      timeoutMs,
      fn,
    });
  }
  return webhooks;
}
