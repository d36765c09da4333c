/**
 * The reports `capstan generate rbac --observed <report.json>` reads: what a test run saw each user
 * do (capstan-dev's `cluster.writeRbacReport(path)`, `CAPSTAN_RBAC_REPORT_DIR`, or the embedded
 * server's `GET /capstan/access`). Several reports merge into one user's access; the summary says
 * what of the generated RBAC was used, never used, and missing.
 */
import { readFile } from "node:fs/promises";
import {
  describeGrants,
  describeRequest,
  OBSERVED_ACCESS_REPORT_KIND,
  type ObservedAccess,
  type ObservedAccessReport,
  type ObservedRequest,
  type RbacComparison,
} from "../resources/observed-rbac.ts";

/** A report that cannot be read, or holds nothing for the operator. */
export class ObservedReportError extends Error {
  override readonly name = "ObservedReportError";
}

/** Reads the report files and merges what `user` did in each (distinct requests once). */
export async function readObservedAccess(files: readonly string[], user: string): Promise<ObservedAccess> {
  const allowed = new Map<string, ObservedRequest>();
  const denied = new Map<string, ObservedRequest>();
  const seen = new Set<string>();
  for (const file of files) {
    let report: ObservedAccessReport;
    try {
      report = JSON.parse(await readFile(file, "utf8")) as ObservedAccessReport;
    } catch (err) {
      throw new ObservedReportError(`--observed ${file}: ${(err as Error).message}`);
    }
    if (report?.kind !== OBSERVED_ACCESS_REPORT_KIND || !Array.isArray(report.users)) {
      throw new ObservedReportError(
        `--observed ${file}: not an observed-access report (expected "kind": "${OBSERVED_ACCESS_REPORT_KIND}")`,
      );
    }
    for (const access of report.users) {
      seen.add(access.user);
      if (access.user !== user) continue;
      for (const r of access.allowed) allowed.set(JSON.stringify(r), r);
      for (const r of access.denied) denied.set(JSON.stringify(r), r);
    }
  }
  if (!seen.has(user)) {
    const others = [...seen].filter((u) => u.startsWith("system:serviceaccount:")).sort();
    throw new ObservedReportError(
      `no requests of ${user} in ${files.join(", ")}${others.length > 0 ? `; they hold ${others.join(", ")} (--namespace chooses the ServiceAccount's namespace)` : ""}`,
    );
  }
  return { user, allowed: [...allowed.values()], denied: [...denied.values()] };
}

/** What `capstan generate rbac --observed` prints on stderr beside the manifests. */
export function comparisonSummary(access: ObservedAccess, comparison: RbacComparison): string {
  const lines = [
    `observed ${access.allowed.length} distinct allowed and ${access.denied.length} denied requests of ${access.user}`,
    "used (kept):",
    ...describeGrants(comparison.used).map((l) => `  ${l}`),
    "never used (left out; needed on a path the tests did not take? then keep it):",
    ...describeGrants(comparison.unused).map((l) => `  ${l}`),
    "missing (no generated rule allows it; added):",
    ...comparison.missing.map((r) => `  ${describeRequest(r)}`),
    "allowed to every authenticated user (discovery, health, self-reviews):",
    ...comparison.everyone.map((r) => `  ${describeRequest(r)}`),
  ];
  return `${lines.join("\n")}\n`;
}
