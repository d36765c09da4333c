/**
 * CertificateSigningRequests (certificates.k8s.io/v1) with the strategies of
 * pkg/registry/certificates/certificates/strategy.go: create records the requesting user and starts
 * with an empty status; updates of the object change only metadata; `/status` may not touch the
 * Approved and Denied conditions, which only `/approval` writes; both fill condition timestamps. No
 * signer issues certificates.
 */
import { nowRfc3339 } from "../machinery/timestamps.ts";
import { record, served } from "./builtin-descriptor.ts";
import type { JsonObject, Requester, ServedResource } from "./served-resource.ts";

type Condition = Record<string, unknown>;
const APPROVAL_TYPES = new Set(["Approved", "Denied"]);

function conditionsOf(obj: JsonObject): Condition[] {
  const status = obj["status"] as Record<string, unknown> | undefined;
  const conditions = status?.["conditions"];
  return Array.isArray(conditions) ? (conditions as Condition[]) : [];
}

function setConditions(obj: JsonObject, conditions: Condition[]): void {
  const status = record(obj, "status");
  if (conditions.length > 0) status["conditions"] = conditions;
  else delete status["conditions"];
}

/** SetDefaults_CertificateSigningRequestCondition: a condition without status is True. */
function defaultCsr(csr: JsonObject): void {
  for (const condition of conditionsOf(csr)) {
    if (typeof condition["status"] !== "string" || condition["status"] === "") condition["status"] = "True";
  }
}

/** PrepareForCreate: the requester's identity instead of any the client sent, and no status. */
function prepareCsr(csr: JsonObject, requester: Requester | undefined): void {
  const spec = record(csr, "spec");
  delete spec["username"];
  delete spec["uid"];
  delete spec["groups"];
  delete spec["extra"];
  if (requester) {
    spec["username"] = requester.username;
    if (requester.uid) spec["uid"] = requester.uid;
    if (requester.groups.length > 0) spec["groups"] = [...requester.groups];
  }
  csr["status"] = {};
}

/**
 * populateConditionTimestamps: lastUpdateTime now when unset; lastTransitionTime from the old condition
 * of the same type and status, else now.
 */
function populateTimestamps(next: JsonObject, old: JsonObject): void {
  const now = nowRfc3339();
  for (const condition of conditionsOf(next)) {
    if (!condition["lastUpdateTime"]) condition["lastUpdateTime"] = now;
    if (condition["lastTransitionTime"]) continue;
    const previous = conditionsOf(old).find(
      (c) => c["type"] === condition["type"] && c["status"] === condition["status"] && c["lastTransitionTime"],
    );
    condition["lastTransitionTime"] = previous?.["lastTransitionTime"] ?? now;
  }
}

/**
 * The status strategy: spec stays; the Approved and Denied conditions stay as stored (preserveConditionInstances;
 * adding or removing one, which the real server refuses in validation, is ignored here).
 */
function statusUpdate(next: JsonObject, old: JsonObject): void {
  next["spec"] = old["spec"];
  defaultCsr(next);
  const kept = conditionsOf(old).filter((c) => APPROVAL_TYPES.has(String(c["type"])));
  const others = conditionsOf(next).filter((c) => !APPROVAL_TYPES.has(String(c["type"])));
  setConditions(next, [...kept, ...others]);
  populateTimestamps(next, old);
}

/** The approval strategy: only the conditions change, everything else is the stored object. */
function approvalUpdate(old: JsonObject, input: JsonObject): JsonObject {
  const next = structuredClone(old);
  setConditions(next, structuredClone(conditionsOf(input)));
  defaultCsr(next);
  populateTimestamps(next, old);
  return next;
}

export function certificateSigningRequests(): ServedResource {
  return served({
    group: "certificates.k8s.io",
    version: "v1",
    kind: "CertificateSigningRequest",
    plural: "certificatesigningrequests",
    namespaced: false,
    shortNames: ["csr"],
    subresources: { status: true, approval: true },
    defaults: defaultCsr,
    defaultOnCreate: prepareCsr,
    updateStrategy: {
      // Requests are immutable after creation except through the subresources.
      main: (next, old) => {
        next["spec"] = old["spec"];
      },
      status: statusUpdate,
      approval: approvalUpdate,
    },
  });
}
