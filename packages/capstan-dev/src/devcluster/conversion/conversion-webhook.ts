/**
 * Converting custom objects between the versions of a CRD through its conversion webhook, as
 * apiextensions-apiserver's webhookConverter does (pkg/apiserver/conversion/webhook_converter.go):
 * the objects not already in the desired version go in one ConversionReview (the first of the
 * CRD's `conversionReviewVersions` it knows, v1 or v1beta1) POSTed to the webhook's URL with its CA
 * bundle and `?timeout=30s`; the answer is checked (kind and uid of the review, Success, as many
 * objects as sent, each of the desired group/version, the same kind, name, namespace and uid) and
 * each converted object gets the original's metadata back, except the labels and annotations the
 * webhook set.
 *
 * Guarantees: a failure rejects with a 500 as kube-apiserver answers it: the converter's error is a
 * plain Go error, so the Status has no reason and the bare message, `conversion webhook for
 * <group/version>, Kind=<kind> failed: ...` (checked against kube-apiserver 1.26); nothing converts
 * objects silently. Connections are kept alive per URL and CA; `close()` ends them.
 *
 * Caveats: only `clientConfig.url` can be called (no cluster network for a Service reference); the
 * GroupVersionKind named in messages is the first sent object's, where kube-apiserver names a list's
 * kind for a list, and a list of one object is worded as a single object; an answer of a kind
 * apiextensions' scheme knows other than ConversionReview (a CustomResourceDefinition, meta's
 * options) is worded as not registered, where Go says it cannot convert it; a converted object that
 * is not a JSON object, or has no kind, is worded in our words, not the decoder's.
 */
import { randomUUID } from "node:crypto";
import { unknownError } from "../machinery/status.ts";
import type { JsonObject, WebhookConversion } from "../registry/served-resource.ts";
import type { CustomResourceConverter } from "../rest/types.ts";
import { fieldErrorMessage } from "../validation/field-errors.ts";
import { fieldPath } from "../validation/field-path.ts";
import { validateAnnotations, validateLabels } from "../validation/object-meta.ts";
import { postToWebhook, WebhookAgents } from "../webhook-client/webhook-post.ts";

/** The conversion webhook's REST client timeout (`?timeout=30s` in kube-apiserver's messages). */
const CONVERSION_TIMEOUT_SECONDS = 30;

const REVIEW_VERSIONS: Record<string, string> = {
  v1: "apiextensions.k8s.io/v1",
  v1beta1: "apiextensions.k8s.io/v1beta1",
};

/** Counts kept for `bench:webhooks` and tests: reviews sent and objects converted. */
export interface ConversionCounts {
  reviews: number;
  objects: number;
}

export class ConversionWebhookCaller implements CustomResourceConverter {
  private readonly agents = new WebhookAgents();
  readonly counts: ConversionCounts = { reviews: 0, objects: 0 };

  async convert(conversion: WebhookConversion, objects: JsonObject[], apiVersion: string): Promise<JsonObject[]> {
    const pending: number[] = [];
    objects.forEach((obj, i) => {
      if (obj.apiVersion !== apiVersion) pending.push(i);
    });
    if (pending.length === 0) return objects;
    const first = objects[pending[0]!]!;
    const what = `${String(first.apiVersion)}, Kind=${String(first.kind)}`;
    const sent = pending.map((i) => objects[i]!);
    let converted: unknown[];
    try {
      converted = await this.call(conversion, sent, apiVersion);
    } catch (err) {
      throw unknownError(`conversion webhook for ${what} failed: ${(err as Error).message}`);
    }
    if (converted.length !== sent.length) {
      throw unknownError(
        `conversion webhook for ${what} returned ${converted.length} objects, expected ${sent.length}`,
      );
    }
    const out = [...objects];
    const list = objects.length > 1;
    pending.forEach((at, i) => {
      try {
        out[at] = checkedObject(sent[i]!, converted[i], apiVersion);
      } catch (err) {
        // A single object's groupVersion and kind errors name index 0, its other errors none.
        const object = list
          ? `converted object at index ${i}`
          : err instanceof TypeMetaError
            ? "object at index 0"
            : "object";
        const where = err instanceof MetadataError ? `invalid metadata${list ? ` in object at index ${i}` : ""}` : "";
        const message =
          where !== ""
            ? `conversion webhook for ${what} returned ${where}: ${(err as Error).message}`
            : `conversion webhook for ${what} returned invalid ${object}: ${(err as Error).message}`;
        throw unknownError(message);
      }
    });
    this.counts.reviews++;
    this.counts.objects += sent.length;
    return out;
  }

  close(): void {
    this.agents.close();
  }

  /** One ConversionReview round trip; rejects with the reason (Go's wording) the caller prefixes. */
  private async call(conversion: WebhookConversion, objects: JsonObject[], apiVersion: string): Promise<unknown[]> {
    const reviewVersion = conversion.conversionReviewVersions.map((v) => REVIEW_VERSIONS[v]).find(Boolean);
    if (reviewVersion === undefined) throw new Error("no supported conversion review versions");
    const { url, caBundle, service } = conversion.clientConfig;
    if (url === undefined) {
      throw new Error(
        `service ${service?.namespace ?? ""}/${service?.name ?? ""} cannot be reached from the embedded API server (no cluster network); set the CRD's conversion webhook clientConfig.url`,
      );
    }
    const target = new URL(url);
    target.searchParams.set("timeout", `${CONVERSION_TIMEOUT_SECONDS}s`);
    const uid = randomUUID();
    const body = JSON.stringify({
      kind: "ConversionReview",
      apiVersion: reviewVersion,
      request: { uid, desiredAPIVersion: apiVersion, objects },
    });
    const ca = caBundle ? Buffer.from(caBundle, "base64").toString("utf8") : undefined;
    const { body: answer } = await postToWebhook(
      target,
      body,
      ca,
      CONVERSION_TIMEOUT_SECONDS * 1000,
      this.agents.agentFor(target, ca),
    );
    let review: unknown;
    try {
      review = JSON.parse(answer);
    } catch (err) {
      throw new Error(`invalid character in the answer: ${(err as Error).message}`);
    }
    return convertedObjectsOf(reviewVersion, uid, review);
  }
}

/** getConvertedObjectsFromResponse: v1 checks the review's kind and uid; v1beta1 never did. */
function convertedObjectsOf(reviewVersion: string, uid: string, review: unknown): unknown[] {
  const r = (review ?? {}) as { apiVersion?: unknown; kind?: unknown; response?: Record<string, unknown> | null };
  checkDecodable(reviewVersion, r.apiVersion, r.kind);
  if (reviewVersion === REVIEW_VERSIONS["v1"]) {
    if (r.apiVersion !== reviewVersion || r.kind !== "ConversionReview") {
      throw new Error(
        `expected webhook response of ${reviewVersion}, Kind=ConversionReview, got ${goGvk(r.apiVersion, r.kind)}`,
      );
    }
  }
  const response = r.response;
  if (response === undefined || response === null || typeof response !== "object") {
    throw new Error("no response provided");
  }
  if (reviewVersion === REVIEW_VERSIONS["v1"] && response["uid"] !== uid) {
    throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response["uid"] ?? "")}`);
  }
  const result = (response["result"] ?? {}) as { status?: unknown; message?: unknown };
  if (result.status !== "Success") {
    if (typeof result.message === "string" && result.message !== "") throw new Error(result.message);
    throw new Error(
      `response.result.status was '${typeof result.status === "string" ? result.status : ""}', not 'Success'`,
    );
  }
  const converted = response["convertedObjects"];
  return Array.isArray(converted) ? converted : [];
}

/**
 * The scheme kube-apiserver's webhook client decodes answers with, named as Go names it in errors:
 * where k8s.io/apiserver's NewClientManager calls runtime.NewScheme (pkg/util/webhook/client.go).
 */
const HOOK_SCHEME = "k8s.io/apiserver/pkg/util/webhook/client.go:74";

/**
 * What client-go's decoder (a LegacyCodec of apiextensions v1 and v1beta1) makes of the answer's
 * apiVersion and kind before getConvertedObjectsFromResponse looks at it: a missing one is the sent
 * review's (the JSON serializer's gvkWithDefaults), the other review version decodes but cannot be
 * converted into the one sent, and any other kind is not in its scheme.
 */
function checkDecodable(reviewVersion: string, apiVersion: unknown, kind: unknown): void {
  const [sentGroup, sentVersion] = reviewVersion.split("/") as [string, string];
  const gv = typeof apiVersion === "string" && apiVersion !== "/" ? apiVersion : "";
  let [group, version] = gv.includes("/") ? (gv.split("/", 2) as [string, string]) : ["", gv];
  const k = typeof kind === "string" && kind !== "" ? kind : "ConversionReview";
  if (group === "" && version === "") [group, version] = [sentGroup, sentVersion];
  if (version === "" && group === sentGroup) version = sentVersion;
  if (group === sentGroup && version === sentVersion && k === "ConversionReview") return;
  if (group === sentGroup && REVIEW_VERSIONS[version] !== undefined && k === "ConversionReview") {
    throw new Error(
      `converting (${version}.ConversionReview) to (${sentVersion}.ConversionReview): unknown conversion`,
    );
  }
  const named = group === "" ? version : `${group}/${version}`;
  throw new Error(
    `no kind ${JSON.stringify(k)} is registered for version ${JSON.stringify(named)} in scheme "${HOOK_SCHEME}"`,
  );
}

/** Go's GroupVersionKind.String() of what a review said it was. */
function goGvk(apiVersion: unknown, kind: unknown): string {
  const gv = typeof apiVersion === "string" ? apiVersion : "";
  const [group, version] = gv.includes("/") ? gv.split("/", 2) : ["", gv];
  return `${group}/${version}, Kind=${typeof kind === "string" ? kind : ""}`;
}

/** The converted object's apiVersion or kind is not the one asked for. */
class TypeMetaError extends Error {}

/** The converted object's labels or annotations cannot be kept (restoreObjectMeta). */
class MetadataError extends Error {}

/**
 * A converted object as kube-apiserver accepts it: in the desired group/version, the original's
 * kind, name, namespace and uid; then the original's metadata with the webhook's labels and
 * annotations (restoreObjectMeta).
 */
function checkedObject(original: JsonObject, answer: unknown, apiVersion: string): JsonObject {
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
    throw new Error("Object 'Kind' is missing in converted object");
  }
  const converted = answer as JsonObject;
  const received = typeof converted.apiVersion === "string" ? converted.apiVersion : "";
  if (received !== apiVersion) {
    throw new TypeMetaError(`invalid groupVersion (expected ${apiVersion}, received ${received})`);
  }
  if (converted.kind !== original.kind) {
    throw new TypeMetaError(
      `invalid kind (expected ${String(original.kind)}, received ${String(converted.kind ?? "")})`,
    );
  }
  const before = (original.metadata ?? {}) as Record<string, unknown>;
  const after = converted.metadata;
  for (const field of ["name", "namespace", "uid"] as const) {
    const a = before[field] ?? "";
    const b = (after as Record<string, unknown> | undefined)?.[field] ?? "";
    if (a !== b) throw new Error(`must have the same ${field === "uid" ? "UID" : field}: ${String(a)} != ${String(b)}`);
  }
  if (after === undefined) throw new MetadataError("missing metadata in converted object");
  if (after === null || typeof after !== "object" || Array.isArray(after)) {
    throw new MetadataError(`invalid metadata of type ${goTypeName(after)} in converted object`);
  }
  const meta = structuredClone(before);
  for (const field of ["labels", "annotations"] as const) {
    const given = (after as Record<string, unknown>)[field];
    if (given === undefined || given === null) {
      delete meta[field];
      continue;
    }
    if (typeof given !== "object" || Array.isArray(given)) {
      throw new MetadataError(`invalid metadata.${field} of type ${goTypeName(given)} in converted object`);
    }
    for (const [key, value] of Object.entries(given)) {
      if (typeof value !== "string") {
        throw new MetadataError(
          `metadata.${field}[${key}] must be a string, but is ${goTypeName(value)} in converted object`,
        );
      }
    }
    const errors =
      field === "labels"
        ? validateLabels(given, fieldPath("metadata", "labels"))
        : validateAnnotations(given, fieldPath("metadata", "annotation"));
    if (errors.length > 0) throw new MetadataError(aggregate(errors.map(fieldErrorMessage)));
    meta[field] = given;
  }
  return { ...converted, metadata: meta };
}

/** utilerrors.NewAggregate's message: one error as is, several in brackets. */
function aggregate(messages: string[]): string {
  return messages.length === 1 ? messages[0]! : `[${messages.join(", ")}]`;
}

/**
 * The Go type apimachinery's JSON decoding gives a JSON value (util/json keeps integers as int64,
 * sigs.k8s.io/json UnmarshalCaseSensitivePreserveInts).
 */
function goTypeName(value: unknown): string {
  if (value === null) return "<nil>";
  if (Array.isArray(value)) return "[]interface {}";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
      return Number.isSafeInteger(value) ? "int64" : "float64";
    case "boolean":
      return "bool";
    default:
      return "map[string]interface {}";
  }
}
