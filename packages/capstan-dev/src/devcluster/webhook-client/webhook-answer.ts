/**
 * Reading a webhook's answer body as kube-apiserver reads it (client-go rest Result.Into with the
 * webhook client's codec: apimachinery's recognizing decoder over JSON, YAML and protobuf, then the
 * JSON serializer's Interpret of apiVersion and kind). Whatever the answer's Content-Type, a body
 * starting with `{` (after white space) is read as JSON, anything else as YAML converted to JSON;
 * the failures are worded as Go words them:
 *
 * - an empty body: `0-length response with status code: 200 and content type: <type>`;
 * - malformed JSON: `couldn't get version/kind; json parse error: <encoding/json's syntax error>`;
 * - YAML that is not a mapping (a plain `this is not json` is a string): `couldn't get version/kind;
 *   json parse error: json: cannot unmarshal string into Go value of type struct { ... }`;
 * - an apiVersion or kind that is not a string: `... json: cannot unmarshal number into Go struct
 *   field .apiVersion of type string`.
 *
 * Callers prefix the message as kube-apiserver does (`failed to call webhook: ...`).
 */
import { parse as parseYaml } from "yaml";
import { yamlDepthMessage } from "../serializer/body.ts";
import { GoJsonSyntaxError, parseJsonLimited, yamlDepthProblem } from "../serializer/nesting-depth.ts";

/** An answer read off the wire (2xx). */
export interface WebhookAnswer {
  body: string;
  status: number;
  /** The Content-Type header, undefined when absent. */
  contentType: string | undefined;
}

/** A body kube-apiserver cannot decode; the message is Go's. */
export class UndecodableAnswer extends Error {
  override name = "UndecodableAnswer";
}

/** The type Interpret unmarshals into, as Go prints it. */
const FIND_KIND =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';
const PARSE_ERROR = "couldn't get version/kind; json parse error";
const YAML_ERROR = "error converting YAML to JSON";

/** The answer as the JSON value the review is decoded from; throws {@link UndecodableAnswer}. */
export function decodeWebhookAnswer(answer: WebhookAnswer): unknown {
  const { body } = answer;
  if (body.length === 0) {
    // The client's own content type when the answer names none (runtime.ContentTypeJSON).
    const type = answer.contentType || "application/json";
    throw new UndecodableAnswer(`0-length response with status code: ${answer.status} and content type: ${type}`);
  }
  let value: unknown;
  if (isJsonBuffer(body)) {
    try {
      value = parseJsonLimited(body);
    } catch (err) {
      if (err instanceof GoJsonSyntaxError) throw new UndecodableAnswer(`${PARSE_ERROR}: ${err.message}`);
      throw err;
    }
  } else {
    value = yamlToJson(body);
    if (value !== null && (typeof value !== "object" || Array.isArray(value))) {
      throw new UndecodableAnswer(
        `${PARSE_ERROR}: json: cannot unmarshal ${goKind(value)} into Go value of type ${FIND_KIND}`,
      );
    }
  }
  checkTypeMeta(value as Record<string, unknown> | null);
  return value;
}

/** utilyaml.IsJSONBuffer: the first character after Go's unicode.IsSpace ones is `{`. */
function isJsonBuffer(body: string): boolean {
  return /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*\{/.test(body);
}

/** sigs.k8s.io/yaml's YAMLToJSON (YAML 1.1 scalars, as go-yaml v2 resolves them). */
function yamlToJson(body: string): unknown {
  // Checked before parsing: the YAML parser recurses per level and would overflow the stack.
  const deep = yamlDepthProblem(body);
  if (deep?.kind === "yaml") throw new UndecodableAnswer(`${YAML_ERROR}: ${yamlDepthMessage(deep.line)}`);
  try {
    return parseYaml(body, { version: "1.1" }) ?? null;
  } catch (err) {
    // The YAML parser's own words: go-yaml's differ.
    throw new UndecodableAnswer(`${YAML_ERROR}: ${(err as Error).message.split("\n")[0]}`);
  }
}

/**
 * Interpret's json.Unmarshal into the apiVersion/kind struct: a key matching either name regardless
 * of case (encoding/json's field matching) must hold a string or null; the first one that does not
 * is the error.
 */
function checkTypeMeta(value: Record<string, unknown> | null): void {
  if (value === null) return;
  for (const [key, field] of Object.entries(value)) {
    const lower = key.toLowerCase();
    if (lower !== "apiversion" && lower !== "kind") continue;
    if (field === null || typeof field === "string") continue;
    const name = lower === "kind" ? "kind" : "apiVersion";
    throw new UndecodableAnswer(
      `${PARSE_ERROR}: json: cannot unmarshal ${goKind(field)} into Go struct field .${name} of type string`,
    );
  }
}

/** encoding/json's name of a JSON value's kind in an UnmarshalTypeError. */
function goKind(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "bool";
  return typeof value === "object" ? "object" : typeof value;
}
