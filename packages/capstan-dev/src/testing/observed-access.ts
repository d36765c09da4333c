/**
 * Least privilege from what an operator did in a test: the embedded server records the distinct
 * requests each user made (`server.access`), and this module turns them into RBAC rules, compares
 * them with the generated RBAC, and writes the report `capstan generate rbac --observed` reads.
 *
 * ```ts
 * const rbac = await cluster.generatedRbac("./operator.ts", { namespace: "ops" });
 * const sa = await rbac.apply();
 * await cluster.run(op, { client: sa.client });          // ... the scenarios ...
 * const report = await cluster.rbacReport(rbac);          // used, unused, missing grants
 * await cluster.writeRbacReport("rbac-observed.json");    // for capstan generate rbac --observed
 * ```
 *
 * With `CAPSTAN_RBAC_REPORT_DIR=<dir>` set, every TestCluster on the embedded backend writes its
 * report into `<dir>` when it stops, so a whole test run can be turned into rules afterwards.
 */
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  compareRbac,
  OBSERVED_ACCESS_REPORT_KIND,
  type ObservedAccess,
  type ObservedAccessReport,
  type ObservedRules,
  observedRules,
  type PolicyRule,
  type RbacComparison,
} from "capstan/resources";
import type { AccessRecorder } from "../devcluster/index.ts";

/** What one user did on the cluster: its distinct requests, and the rules they used. */
export interface ObservedAccessView extends ObservedAccess {
  /** The allowed requests as RBAC rules, cluster-scope and per namespace (no resourceNames). */
  rules: ObservedRules;
  /** More distinct requests were made than the server keeps per user (20 000); the rest are missing. */
  truncated: boolean;
}

/** The generated RBAC of an operator beside what its ServiceAccount did. */
export interface RbacReport extends RbacComparison {
  /** The ServiceAccount's username, `system:serviceaccount:<namespace>:<name>`. */
  user: string;
  /** The generated resource rules (as `GeneratedRbac.rules`). */
  generated: readonly PolicyRule[];
  /** The rules the ServiceAccount's allowed requests used. */
  observed: ObservedRules;
}

/** The environment variable that makes every embedded TestCluster write its report at `stop()`. */
export const RBAC_REPORT_DIR_ENV = "CAPSTAN_RBAC_REPORT_DIR";

/** What `user` did, from the server's recorder. */
export function observedAccessOf(recorder: AccessRecorder, user: string): ObservedAccessView {
  const recorded = recorder.access(user);
  return {
    user,
    allowed: recorded.allowed,
    denied: recorded.denied,
    rules: observedRules(recorded.allowed),
    truncated: recorded.truncated === true,
  };
}

/** `generated` compared with what `access` did; see {@link compareRbac}. */
export function rbacReportOf(access: ObservedAccessView, generated: readonly PolicyRule[]): RbacReport {
  return { user: access.user, generated, observed: access.rules, ...compareRbac(generated, access) };
}

/** The report file of `users` (every user with recorded requests when absent). */
export function accessReport(recorder: AccessRecorder, users?: readonly string[]): ObservedAccessReport {
  return {
    kind: OBSERVED_ACCESS_REPORT_KIND,
    users: (users ?? recorder.usernames()).map((u) => {
      const { allowed, denied } = recorder.access(u);
      return { user: u, allowed, denied };
    }),
  };
}

/** Writes {@link accessReport} as JSON to `path`. */
export async function writeAccessReport(
  recorder: AccessRecorder,
  path: string,
  users?: readonly string[],
): Promise<void> {
  await writeFile(path, `${JSON.stringify(accessReport(recorder, users), null, 2)}\n`);
}

/**
 * Writes the report into `$CAPSTAN_RBAC_REPORT_DIR` under a name of its own (clusters of parallel
 * test files stop at once), when the variable is set and someone but the admin made requests.
 */
export async function writeAccessReportFromEnv(recorder: AccessRecorder): Promise<void> {
  const dir = process.env[RBAC_REPORT_DIR_ENV];
  if (dir === undefined || dir === "" || recorder.usernames().length === 0) return;
  await mkdir(dir, { recursive: true });
  await writeAccessReport(recorder, join(dir, `observed-access-${randomUUID()}.json`));
}
