/**
 * Conversion webhooks: a ConversionReview (apiextensions.k8s.io/v1 or v1beta1) answered by
 * converting each object through the kind's hub version, as controller-runtime's conversion
 * webhook does (hub and spokes): a spoke converts to the hub and back, so n versions need n - 1
 * pairs of functions, never one per pair of versions.
 *
 * Expected flow: `decodeConversionReview(body)`, `runConversion(spec, request)`,
 * `encodeConversionReview(apiVersion, response)` (the webhook server does all three).
 *
 * Guarantees: the answer has one converted object per object sent, in order, each with the desired
 * apiVersion and the original's metadata unless the function changed it; a conversion that throws,
 * or an object of another group, kind or an unknown version, makes the whole answer a Failure whose
 * message names the object and versions (the API server then fails the request with it).
 */
import type { KubeObject } from "../client/types.ts";

/** Converts one spoke version to the hub and back. Both get a copy they may change. */
export interface SpokeConversion<Spoke = KubeObject, Hub = KubeObject> {
  toHub(obj: Spoke): Hub;
  fromHub(hub: Hub): Spoke;
}

/** What the webhook server needs to answer ConversionReviews for one kind. */
export interface ConversionHandlerSpec {
  /** Names the handler in logs and errors. */
  name: string;
  type: "conversion";
  group: string;
  kind: string;
  /** The hub version's name (the kind's typed version). */
  hub: string;
  /** Every other version, by name. */
  spokes: ReadonlyMap<string, SpokeConversion>;
}

/** A ConversionReview's request. */
export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: KubeObject[];
}

/** A ConversionReview's response. */
export interface ConversionResponse {
  uid: string;
  convertedObjects: KubeObject[];
  result: { status: "Success" | "Failure"; message?: string };
}

/** A body that is not a ConversionReview this server can answer (a 400). */
export class ConversionReviewError extends Error {
  override readonly name = "ConversionReviewError";
}

const REVIEW_VERSIONS = new Set(["apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"]);

/** Parses a ConversionReview; throws {@link ConversionReviewError} saying what is wrong. */
export function decodeConversionReview(body: string): { apiVersion: string; request: ConversionRequest } {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch (err) {
    throw new ConversionReviewError(`the body is not JSON: ${(err as Error).message}`);
  }
  const r = (review ?? {}) as { apiVersion?: unknown; kind?: unknown; request?: Partial<ConversionRequest> };
  if (r.kind !== "ConversionReview" || typeof r.apiVersion !== "string" || !REVIEW_VERSIONS.has(r.apiVersion)) {
    throw new ConversionReviewError(
      `expected a ConversionReview of apiextensions.k8s.io/v1 or v1beta1, got kind ${JSON.stringify(r.kind)} of ${JSON.stringify(r.apiVersion)}`,
    );
  }
  const request = r.request;
  if (request === undefined || request === null || typeof request !== "object") {
    throw new ConversionReviewError("the ConversionReview has no request");
  }
  if (typeof request.uid !== "string" || request.uid === "") throw new ConversionReviewError("the request has no uid");
  if (typeof request.desiredAPIVersion !== "string" || !request.desiredAPIVersion.includes("/")) {
    throw new ConversionReviewError("the request has no desiredAPIVersion");
  }
  if (!Array.isArray(request.objects)) throw new ConversionReviewError("the request has no objects");
  return {
    apiVersion: r.apiVersion,
    request: { uid: request.uid, desiredAPIVersion: request.desiredAPIVersion, objects: request.objects },
  };
}

/** The answer, in the review's own version. */
export function encodeConversionReview(apiVersion: string, response: ConversionResponse): string {
  return JSON.stringify({ apiVersion, kind: "ConversionReview", response });
}

/** Converts every object of `request`; the first failure makes the answer a Failure. */
export function runConversion(
  spec: ConversionHandlerSpec,
  request: ConversionRequest,
): { response: ConversionResponse; error?: Error } {
  const convertedObjects: KubeObject[] = [];
  try {
    const desired = versionOf(spec, request.desiredAPIVersion, "desiredAPIVersion");
    for (const obj of request.objects) convertedObjects.push(convertOne(spec, obj, desired, request.desiredAPIVersion));
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    return {
      response: { uid: request.uid, convertedObjects: [], result: { status: "Failure", message: error.message } },
      error,
    };
  }
  return { response: { uid: request.uid, convertedObjects, result: { status: "Success" } } };
}

function convertOne(
  spec: ConversionHandlerSpec,
  obj: KubeObject,
  desired: string,
  desiredApiVersion: string,
): KubeObject {
  const meta = obj.metadata ?? {};
  const what = `${spec.kind} ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name ?? ""}`;
  if (obj.kind !== spec.kind) {
    throw new Error(`cannot convert a ${String(obj.kind)} with the conversion webhook of ${spec.kind}`);
  }
  const source = versionOf(spec, String(obj.apiVersion ?? ""), `${what}'s apiVersion`);
  if (source === desired) return obj;
  let hub: KubeObject;
  let out: KubeObject;
  try {
    hub = source === spec.hub ? structuredClone(obj) : spec.spokes.get(source)!.toHub(structuredClone(obj));
    hub = { ...hub, apiVersion: `${spec.group}/${spec.hub}`, kind: spec.kind };
    out = desired === spec.hub ? hub : spec.spokes.get(desired)!.fromHub(structuredClone(hub));
  } catch (err) {
    throw new Error(`converting ${what} from ${source} to ${desired}: ${(err as Error).message ?? String(err)}`);
  }
  if (out === null || typeof out !== "object") {
    throw new Error(`converting ${what} from ${source} to ${desired}: the conversion returned no object`);
  }
  // The API server keeps the original's metadata but for labels and annotations: a function that
  // built a fresh object without metadata has not meant to drop them.
  return { ...out, apiVersion: desiredApiVersion, kind: spec.kind, metadata: out.metadata ?? obj.metadata };
}

/** The version name in `apiVersion`, checked to be one of the kind's. */
function versionOf(spec: ConversionHandlerSpec, apiVersion: string, what: string): string {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (group !== spec.group || (version !== spec.hub && !spec.spokes.has(version))) {
    const known = [spec.hub, ...spec.spokes.keys()].map((v) => `${spec.group}/${v}`).join(", ");
    throw new Error(`${what} ${JSON.stringify(apiVersion)} is not a version of ${spec.kind} (${known})`);
  }
  return version;
}
