/**
 * Validation of built-in kinds' specs, as kube-apiserver's strategies run it on create and update:
 * one module per API group (`pkg/apis/<group>/validation`), the pod spec's rules shared in
 * core-pod.ts. This is the dispatch from a served resource to its group's table.
 */
import type { FieldError } from "../field-errors.ts";
import type { NameValidator } from "../names.ts";
import { appsValidation } from "./apps.ts";
import { autoscalingValidation } from "./autoscaling.ts";
import { batchValidation } from "./batch.ts";
import { coreValidation } from "./core.ts";
import { podValidation } from "./core-pod.ts";
import type { GroupValidation, Json, KindValidation } from "./kind-validation.ts";
import { networkingValidation } from "./networking.ts";
import { policyValidation } from "./policy.ts";
import { rbacValidation } from "./rbac.ts";

const GROUPS: Readonly<Record<string, GroupValidation>> = {
  "": { ...coreValidation, ...podValidation },
  apps: appsValidation,
  batch: batchValidation,
  "networking.k8s.io": networkingValidation,
  policy: policyValidation,
  autoscaling: autoscalingValidation,
  "rbac.authorization.k8s.io": rbacValidation,
};

function kindValidation(served: { group: string; plural: string }): KindValidation | undefined {
  const group = GROUPS[served.group];
  return group !== undefined && Object.hasOwn(group, served.plural) ? group[served.plural] : undefined;
}

/** The spec errors of a built-in object on create (`old` undefined) or update; none for other kinds. */
export function builtinKindErrors(
  served: { group: string; plural: string },
  obj: Json,
  old: Json | undefined,
): FieldError[] {
  const validation = kindValidation(served);
  if (validation === undefined) return [];
  if (old === undefined) return validation.create(obj);
  return validation.update ? validation.update(obj, old) : validation.create(obj);
}

/** The kind's own name rule (Services: DNS-1035 labels), when it has one. */
export function builtinNameRule(served: { group: string; plural: string }): NameValidator | undefined {
  return kindValidation(served)?.name;
}
