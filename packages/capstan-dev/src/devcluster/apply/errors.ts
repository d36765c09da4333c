/**
 * Errors server-side apply answers with, carrying the Status body kube-apiserver sends: 409 Conflict with
 * one `FieldManagerConflict` cause per field (k8s.io/apimachinery managedfields/internal/conflict.go),
 * 400 for a malformed apply request, 500 for objects the typed conversion refuses.
 */
import type { Status } from "kubernetes-types/meta/v1.d.ts";
import { printManager } from "./managed-fields.ts";
import { pathToString } from "./path-element.ts";
import type { Conflict } from "./updater.ts";

/** Base class: an apply failure with the HTTP status the server gives it. */
export class ApplyError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string, message: string) {
    super(message);
    this.name = "ApplyError";
    this.code = code;
    this.reason = reason;
  }

  /** The `kind: Status` body of the response. */
  status(): Status {
    const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: this.message };
    if (this.reason) status.reason = this.reason;
    status.code = this.code;
    return status;
  }
}

/** 400 BadRequest (apply body of the wrong kind, managedFields set in the body...). */
export function applyBadRequest(message: string): ApplyError {
  return new ApplyError(400, "BadRequest", message);
}

/** 500 with an unknown reason: what the apiserver answers for errors that are not API statuses. */
export function applyInternal(message: string): ApplyError {
  return new ApplyError(500, "", message);
}

/** Managers in the order the message lists them (sorted identifiers), conflicts per manager in path order. */
function byManager(conflicts: readonly Conflict[]): [string, Conflict[]][] {
  const m = new Map<string, Conflict[]>();
  for (const c of conflicts) m.set(c.manager, [...(m.get(c.manager) ?? []), c]);
  return [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** getConflictMessage: `Apply failed with 1 conflict: conflict with "alice": .data.a`, or the grouped form. */
export function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    return `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathToString(c.path)}`;
  }
  const lines: string[] = [];
  for (const [manager, list] of byManager(conflicts)) {
    lines.push(`conflicts with ${printManager(manager)}:`);
    for (const c of list) lines.push(`- ${pathToString(c.path)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
}

/** 409 Conflict of an apply that would change fields other managers own. */
export class ApplyConflictError extends ApplyError {
  readonly conflicts: readonly Conflict[];
  constructor(conflicts: readonly Conflict[]) {
    super(409, "Conflict", conflictMessage(conflicts));
    this.name = "ApplyConflictError";
    this.conflicts = byManager(conflicts).flatMap(([, list]) => list);
  }

  override status(): Status {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: "Conflict",
      details: {
        causes: this.conflicts.map((c) => ({
          reason: "FieldManagerConflict",
          message: `conflict with ${printManager(c.manager)}`,
          field: pathToString(c.path),
        })),
      },
      code: 409,
    };
  }
}
