/**
 * The OpenAPI v3 schema of a CRD version (apiextensions.k8s.io/v1 JSONSchemaProps), with the
 * `x-kubernetes-*` extensions kubernetes-types leaves out.
 */
import type { JSONSchemaProps as BaseJSONSchemaProps } from "kubernetes-types/apiextensions/v1.d.ts";

/** One `x-kubernetes-validations` rule (evaluated by the CEL extension point, not here). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** JSONSchemaProps as a CRD stores it, extensions included. */
export interface JSONSchemaProps
  extends Omit<
    BaseJSONSchemaProps,
    | "properties"
    | "items"
    | "additionalProperties"
    | "additionalItems"
    | "allOf"
    | "anyOf"
    | "oneOf"
    | "not"
    | "patternProperties"
    | "definitions"
    | "dependencies"
  > {
  properties?: Record<string, JSONSchemaProps>;
  patternProperties?: Record<string, JSONSchemaProps>;
  definitions?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  items?: JSONSchemaProps | JSONSchemaProps[];
  additionalProperties?: JSONSchemaProps | boolean;
  additionalItems?: JSONSchemaProps | boolean;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-validations"?: ValidationRule[];
}
