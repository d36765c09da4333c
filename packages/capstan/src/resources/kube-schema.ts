/**
 * The schema dialect a CustomResourceDefinition speaks: OpenAPI v3 `JSONSchemaProps` plus the
 * `x-kubernetes-*` extensions the apiextensions-apiserver understands. kubernetes-types leaves the
 * extensions out of its `JSONSchemaProps`, so they are declared here.
 */
import type { JSONSchemaProps, ValidationRule } from "kubernetes-types/apiextensions/v1.d.ts";

export type { ValidationRule };

/** One node of a CRD's `openAPIV3Schema`, extensions included. */
export interface KubeSchema
  extends Omit<
    JSONSchemaProps,
    "properties" | "items" | "additionalProperties" | "allOf" | "anyOf" | "oneOf" | "not" | "default" | "enum"
  > {
  properties?: Record<string, KubeSchema>;
  items?: KubeSchema;
  additionalProperties?: KubeSchema | boolean;
  allOf?: KubeSchema[];
  anyOf?: KubeSchema[];
  oneOf?: KubeSchema[];
  not?: KubeSchema;
  default?: unknown;
  enum?: unknown[];
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-validations"?: ValidationRule[];
}

/**
 * The `reason` values a validation rule may carry (apiextensions `supportedValidationReason`).
 * Anything else is refused by the server.
 */
export const VALIDATION_REASONS = [
  "FieldValueRequired",
  "FieldValueForbidden",
  "FieldValueInvalid",
  "FieldValueDuplicate",
] as const;

/**
 * String formats the apiextensions-apiserver validates (`pkg/apiserver/validation/formats.go`,
 * set introduced in 1.0), compared after removing dashes as go-openapi does (`date-time` is `datetime`).
 * Other formats are silently stripped by the server, so a schema using one would not validate
 * what its author thinks it validates.
 */
export const STRING_FORMATS: ReadonlySet<string> = new Set([
  "bsonobjectid",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "hexcolor",
  "rgbcolor",
  "byte",
  "password",
  "date",
  "duration",
  "datetime",
]);

/** Formats the server accepts on `integer` and `number` schemas. */
export const INTEGER_FORMATS: ReadonlySet<string> = new Set(["int32", "int64"]);
export const NUMBER_FORMATS: ReadonlySet<string> = new Set(["float", "double"]);
