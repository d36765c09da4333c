import type { ConfigMap as ConfigMapObject, Pod as PodObject } from "kubernetes-types/core/v1.d.ts";
import { describe, expect, expectTypeOf, it } from "vitest";
import { apiVersionOf, type ObjectOf, type ResourceKind } from "../../packages/capstan/src/client/types.ts";
import * as core from "../../packages/capstan/src/core.ts";
import {
  BUILTIN_KINDS,
  ConfigMap,
  Deployment,
  EventsV1Event,
  Lease,
  Namespace,
  Pod,
} from "../../packages/capstan/src/resources/builtins.ts";
import { pluralize } from "../../packages/capstan/src/resources/plural.ts";

describe("built-in kinds", () => {
  it("exports every kind the brief lists through capstan/core", () => {
    const names = Object.keys(core).filter((k) => k !== "BUILTIN_KINDS");
    expect(names.sort()).toEqual(
      [
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "CronJob",
        "CustomResourceDefinition",
        "DaemonSet",
        "Deployment",
        "Event",
        "EventsV1Event",
        "Ingress",
        "Job",
        "Lease",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolumeClaim",
        "Pod",
        "ReplicaSet",
        "Role",
        "RoleBinding",
        "Secret",
        "Service",
        "ServiceAccount",
        "StatefulSet",
        "ValidatingWebhookConfiguration",
      ].sort(),
    );
    expect(BUILTIN_KINDS).toHaveLength(25);
  });

  it("carries the REST coordinates the API server serves them at", () => {
    expect(Pod).toMatchObject({ group: "", version: "v1", plural: "pods", namespaced: true, apiVersion: "v1" });
    expect(Deployment).toMatchObject({ group: "apps", version: "v1", plural: "deployments", apiVersion: "apps/v1" });
    expect(Lease).toMatchObject({ group: "coordination.k8s.io", plural: "leases", namespaced: true });
    expect(Namespace).toMatchObject({ plural: "namespaces", namespaced: false });
    expect(EventsV1Event).toMatchObject({ group: "events.k8s.io", kind: "Event", plural: "events" });
    for (const kind of BUILTIN_KINDS) {
      expect(kind.apiVersion).toBe(apiVersionOf(kind));
      expect(kind.listKind).toBe(`${kind.kind}List`);
      // Every built-in plural follows the same rule user kinds get, so the rule is the real one.
      expect(pluralize(kind.kind)).toBe(kind.plural);
    }
  });

  it("make() fills apiVersion and kind", () => {
    const cm = ConfigMap.make({ metadata: { name: "usd", namespace: "default" }, data: { rate: "1.3" } });
    expect(cm).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "usd", namespace: "default" },
      data: { rate: "1.3" },
    });
    expect(Deployment.make({ metadata: { name: "d" } })).toMatchObject({ apiVersion: "apps/v1", kind: "Deployment" });
  });

  it("is typed with kubernetes-types and fits wherever a ResourceKind goes", () => {
    expectTypeOf<ObjectOf<typeof Pod>>().toEqualTypeOf<PodObject>();
    expectTypeOf(ConfigMap.make({ metadata: { name: "x" } })).toEqualTypeOf<ConfigMapObject>();
    expectTypeOf(Pod).toExtend<ResourceKind<PodObject>>();
    // @ts-expect-error ConfigMap data values are strings
    ConfigMap.make({ metadata: { name: "x" }, data: { rate: 1 } });
  });
});
