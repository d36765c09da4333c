/** Reading request bodies with kube-apiserver's size limit, and decoding JSON or YAML with its error forms. */
import type { IncomingMessage } from "node:http";
import { parse as parseYaml } from "yaml";
import { goJsonSyntaxError } from "../machinery/json-syntax-error.ts";
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from "../machinery/status.ts";
import { decodeProtobufObject } from "./protobuf.ts";

/**
 * 3 MiB: kube-apiserver's MaxRequestBodyBytes default (the etcd request limit of 1.5 MiB plus room for
 * encoding overhead). Larger bodies get 413.
 */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole body, failing with 413 past `limit` bytes (without buffering the excess). */
export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw requestEntityTooLarge(limit);
  }
  // Event-based rather than `for await`: an async iterator per request is measurable on the create path.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const onData = (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        req.off("data", onData);
        req.resume();
        reject(requestEntityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.once("error", (err) => {
      if (!failed) reject(err);
    });
  });
}

/** The media type of a Content-Type header, lower-cased and without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

const OBJECT_MEDIA_TYPES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"];

/**
 * Decodes a create/update body: JSON (also the default when no Content-Type is sent) or YAML. Anything
 * else is 415; malformed input is 400 with the decoder's message as the real server words it.
 */
export function decodeObject(body: Buffer, contentType: string | undefined): Record<string, unknown> {
  const type = mediaType(contentType);
  let value: unknown;
  if (type === "" || type === "application/json" || type === "*/*") {
    const text = body.toString("utf8");
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest(`couldn't get version/kind; json parse error: ${goJsonSyntaxError(text)}`);
    }
  } else if (type === "application/vnd.kubernetes.protobuf") {
    value = decodeProtobufObject(body);
  } else if (type === "application/yaml") {
    try {
      value = parseYaml(body.toString("utf8"));
    } catch (err) {
      throw badRequest(`error converting YAML to JSON: ${(err as Error).message.split("\n")[0]}`);
    }
  } else {
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: ${OBJECT_MEDIA_TYPES.join(", ")}`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const what = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    throw badRequest(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${goTypeName(what)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  return value as Record<string, unknown>;
}

function goTypeName(jsType: string): string {
  return jsType === "array" ? "array" : jsType === "null" ? "null" : jsType === "boolean" ? "bool" : jsType;
}
