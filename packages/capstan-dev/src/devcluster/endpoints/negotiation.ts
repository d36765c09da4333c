/**
 * Content negotiation of responses: plain JSON, a meta.k8s.io Table, or metadata only
 * (PartialObjectMetadata / PartialObjectMetadataList) when the Accept header asks for one.
 */

import { ApiError, failure } from "../machinery/status.ts";
import type { MetadataApiVersion } from "./partial-metadata.ts";

export type ResponseShape =
  | { as: "object" }
  | { as: "Table"; apiVersion: string }
  | { as: "Metadata"; apiVersion: MetadataApiVersion };

/**
 * Reads the Accept header. Media ranges are tried in order; the first one the server can produce wins,
 * as kube-apiserver's negotiation does. Only protobuf or CBOR asked for, with no JSON fallback, is 406.
 */
export function negotiate(accept: string | undefined): ResponseShape {
  if (!accept || accept.trim() === "") return { as: "object" };
  for (const range of accept.split(",")) {
    const [typePart, ...paramParts] = range.split(";").map((s) => s.trim());
    const type = (typePart ?? "").toLowerCase();
    if (type !== "application/json" && type !== "*/*" && type !== "application/*" && type !== "application/yaml") {
      continue;
    }
    const params = new Map(paramParts.map((p) => p.split("=").map((s) => s.trim()) as [string, string]));
    const as = params.get("as");
    if (as === undefined) return { as: "object" };
    if (
      as === "Table" &&
      params.get("g") === "meta.k8s.io" &&
      (params.get("v") === "v1" || params.get("v") === "v1beta1")
    ) {
      return { as: "Table", apiVersion: `meta.k8s.io/${params.get("v")}` };
    }
    // Lenient on purpose: either name is taken for any verb (the real server wants the List form for lists).
    const version = params.get("v");
    if (
      (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") &&
      params.get("g") === "meta.k8s.io" &&
      (version === "v1" || version === "v1beta1")
    ) {
      return { as: "Metadata", apiVersion: `meta.k8s.io/${version}` };
    }
  }
  throw new ApiError(
    failure(406, "NotAcceptable", "only the following media types are accepted: application/json, application/yaml"),
  );
}
