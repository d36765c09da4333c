/** Reading request bodies with kube-apiserver's size limit, and decoding JSON or YAML with its error forms. */
import type { IncomingMessage } from "node:http";
import { parse as parseYaml } from "yaml";
import { MAX_NESTING_DEPTH } from "../machinery/json-syntax-error.ts";
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from "../machinery/status.ts";
import { GoJsonSyntaxError, parseJsonLimited, yamlDepthProblem } from "./nesting-depth.ts";
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
 * else is 415; malformed or too deeply nested input is 400 with the decoder's message as the real
 * server words it. With `into` (the kind the handler decodes into), the message is wrapped as the
 * create and update handlers' transformDecodeError wraps it.
 */
export function decodeObject(body: Buffer, contentType: string | undefined, into?: string): Record<string, unknown> {
  const type = mediaType(contentType);
  const fail = (message: string) => badRequest(into === undefined ? message : unrecognized(into, message, body));
  let value: unknown;
  if (type === "" || type === "application/json" || type === "*/*") {
    try {
      value = parseJsonLimited(body.toString("utf8"));
    } catch (err) {
      if (!(err instanceof GoJsonSyntaxError)) throw err;
      throw fail(`couldn't get version/kind; json parse error: ${err.message}`);
    }
  } else if (type === "application/vnd.kubernetes.protobuf") {
    value = decodeProtobufObject(body);
  } else if (type === "application/yaml") {
    const text = body.toString("utf8");
    // Checked before parsing: the YAML parser recurses per level and would overflow the stack.
    const deep = yamlDepthProblem(text);
    if (deep?.kind === "yaml") throw fail(yamlDepthMessage(deep.line));
    if (deep?.kind === "json") {
      throw fail(`couldn't get version/kind; json parse error: invalid character '${deep.char}' exceeded max depth`);
    }
    try {
      value = parseYaml(text);
    } catch (err) {
      throw fail(`error converting YAML to JSON: ${(err as Error).message.split("\n")[0]}`);
    }
  } else {
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: ${OBJECT_MEDIA_TYPES.join(", ")}`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const what = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    throw fail(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${goTypeName(what)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  return value as Record<string, unknown>;
}

/** go-yaml's scanner error for too many nested levels (it names the line unless it is the first). */
export function yamlDepthMessage(line: number | undefined): string {
  return `yaml: ${line === undefined ? "" : `line ${line}: `}exceeded max depth of ${MAX_NESTING_DEPTH}`;
}

/** transformDecodeError's message when the body's kind could not even be read. */
function unrecognized(kind: string, message: string, body: Buffer): string {
  return `the object provided is unrecognized (must be of type ${kind}): ${message} (${summarizeData(body, 30)})`;
}

/** summarizeData in handlers/rest.go: the start of a JSON object as text, of anything else as a hex dump. */
function summarizeData(data: Buffer, maxLength: number): string {
  if (data.length === 0) return "<empty>";
  if (data[0] === 0x7b) {
    return data.length > maxLength ? `${data.subarray(0, maxLength).toString("utf8")} ...` : data.toString("utf8");
  }
  return goHexDump(data.subarray(0, maxLength));
}

/** Go's hex.Dump: offset, 16 bytes in two groups of 8, and their printable characters between bars. */
export function goHexDump(data: Buffer): string {
  let out = "";
  for (let line = 0; line < data.length; line += 16) {
    const bytes = data.subarray(line, line + 16);
    let hex = "";
    for (let i = 0; i < 16; i++) {
      hex += i < bytes.length ? `${bytes[i]!.toString(16).padStart(2, "0")} ` : "   ";
      if (i === 7) hex += " ";
    }
    let chars = "";
    for (const b of bytes) chars += b < 32 || b > 126 ? "." : String.fromCharCode(b);
    out += `${line.toString(16).padStart(8, "0")}  ${hex} |${chars}|\n`;
  }
  return out;
}

function goTypeName(jsType: string): string {
  return jsType === "array" ? "array" : jsType === "null" ? "null" : jsType === "boolean" ? "bool" : jsType;
}
