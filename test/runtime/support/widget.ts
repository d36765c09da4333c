/**
 * The Widget kind of the runtime's end-to-end tests (spec.size, status.observedSize), its CRD, and a
 * plain ConfigMap kind; the cluster comes from `capstan-dev/testing`.
 */
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import type { KubeObject, ResourceKind } from "../../../packages/capstan/src/client/types.ts";

export type Widget = KubeObject & {
  spec: { size: number };
  status?: { observedSize?: number };
};

export const Widget: ResourceKind<Widget> = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
};

export type ConfigMapObject = KubeObject & { data?: Record<string, string> };
export const ConfigMap: ResourceKind<ConfigMapObject> = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

/** The Widget CRD: spec.size, status.observedSize, status subresource. */
export function widgetCrd(
  extraColumns: { name: string; type: string; jsonPath: string }[] = [],
): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.com" },
    spec: {
      group: "example.com",
      names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(extraColumns.length > 0 ? { additionalPrinterColumns: extraColumns } : {}),
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { size: { type: "integer" } } },
                status: { type: "object", properties: { observedSize: { type: "integer" } } },
              },
            },
          },
        },
      ],
    },
  };
}
