/**
 * The embedded API server's side of a CRD conversion: the ConversionReview it sends to a webhook
 * over real HTTPS, and how it checks the answer, each failure in kube-apiserver's words
 * (apiextensions-apiserver pkg/apiserver/conversion/webhook_converter.go, client-go's REST client).
 * The webhook is a local HTTPS server whose answer each test chooses.
 */
import type { IncomingMessage } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConversionWebhookCaller } from "../../../packages/capstan-dev/src/devcluster/conversion/conversion-webhook.ts";
import { ApiError } from "../../../packages/capstan-dev/src/devcluster/machinery/status.ts";
import type {
  JsonObject,
  ServedResource,
  WebhookConversion,
} from "../../../packages/capstan-dev/src/devcluster/registry/served-resource.ts";
import {
  createServingCertificates,
  type ServingCertificates,
} from "../../../packages/capstan-dev/src/devcluster/tls.ts";

const GROUP = "gadgets.capstan.test";
const V1 = `${GROUP}/v1`;
const V2 = `${GROUP}/v2`;

interface SentReview {
  apiVersion: string;
  kind: string;
  request: { uid: string; desiredAPIVersion: string; objects: JsonObject[] };
}

interface Received {
  url: string;
  contentType: string | undefined;
  review: SentReview;
}

/** What the webhook answers: a status, a body (JSON unless a string) and its content type. */
interface Answer {
  status?: number;
  body: unknown;
  contentType?: string;
}

/** A converter as a webhook should be: each object in the desired version, spec marked. */
function converting(review: SentReview): Answer {
  const { uid, desiredAPIVersion, objects } = review.request;
  return {
    body: {
      apiVersion: review.apiVersion,
      kind: "ConversionReview",
      response: {
        uid,
        result: { status: "Success" },
        convertedObjects: objects.map((o) => ({
          ...o,
          apiVersion: desiredAPIVersion,
          spec: { ...(o.spec as object), convertedFrom: o.apiVersion },
        })),
      },
    },
  };
}

/** A well-formed answer whose `response` (merged over a successful one) or whole body a test changes. */
function answering(change: (ok: Record<string, unknown>, review: SentReview) => unknown): (r: SentReview) => Answer {
  return (review) => {
    const ok = converting(review).body as Record<string, unknown>;
    return { body: change(ok, review) };
  };
}

let certs: ServingCertificates;
let server: Server;
let port: number;
let answer: (review: SentReview) => Answer = converting;
const received: Received[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

beforeAll(async () => {
  certs = await createServingCertificates();
  server = createServer({ cert: certs.certPem, key: certs.keyPem }, async (req, res) => {
    const review = JSON.parse(await readBody(req)) as SentReview;
    received.push({ url: req.url ?? "", contentType: req.headers["content-type"], review });
    const { status = 200, body, contentType = "application/json" } = answer(review);
    const text = typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

let caller: ConversionWebhookCaller;
beforeEach(() => {
  answer = converting;
  received.length = 0;
  caller?.close();
  caller = new ConversionWebhookCaller();
});

function conversion(extra: Partial<WebhookConversion> = {}, url = `https://127.0.0.1:${port}/convert`) {
  return {
    // The caller never reads the storage descriptor: the store uses it to choose the version.
    storage: {} as ServedResource,
    crdName: `gadgets.${GROUP}`,
    clientConfig: { url, caBundle: Buffer.from(certs.caPem).toString("base64") },
    conversionReviewVersions: ["v1"],
    ...extra,
  } satisfies WebhookConversion;
}

const gadget = (name: string, apiVersion = V1, metadata: Record<string, unknown> = {}): JsonObject => ({
  apiVersion,
  kind: "Gadget",
  metadata: {
    name,
    namespace: "ns",
    uid: `uid-${name}`,
    resourceVersion: "7",
    generation: 2,
    labels: { app: "gadgets" },
    ...metadata,
  },
  spec: { colour: "red" },
});

/** The 500 the request fails with, and its message. */
async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err = await promise.then(
    () => expect.fail("the conversion succeeded"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return { code: (err as ApiError).code, message: (err as ApiError).message };
}

const prefix = `conversion webhook for ${V1}, Kind=Gadget`;

describe("what the API server sends to a conversion webhook", () => {
  it("makes no call when every object is already in the desired version, and returns them as they are", async () => {
    const objects = [gadget("a", V2), gadget("b", V2)];
    const out = await caller.convert(conversion(), objects, V2);
    expect(out).toEqual(objects);
    expect(received).toEqual([]);
    expect(caller.counts).toEqual({ reviews: 0, objects: 0 });
  });

  it("sends one review of only the objects to convert, and puts the answers back in the list's order", async () => {
    const objects = [gadget("a"), gadget("b", V2), gadget("c")];
    const out = await caller.convert(conversion(), objects, V2);
    expect(received).toHaveLength(1);
    const sent = received[0]!;
    expect(sent.url).toBe("/convert?timeout=30s");
    expect(sent.contentType).toBe("application/json");
    expect(sent.review).toMatchObject({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      request: { desiredAPIVersion: V2 },
    });
    expect(sent.review.request.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.review.request.objects).toEqual([gadget("a"), gadget("c")]);
    expect(out.map((o) => [(o.metadata as { name: string }).name, o.apiVersion, o.spec])).toEqual([
      ["a", V2, { colour: "red", convertedFrom: V1 }],
      ["b", V2, { colour: "red" }],
      ["c", V2, { colour: "red", convertedFrom: V1 }],
    ]);
    expect(caller.counts).toEqual({ reviews: 1, objects: 2 });
    await caller.convert(conversion(), [gadget("d")], V2);
    expect(caller.counts).toEqual({ reviews: 2, objects: 3 });
  });

  it("sends the first review version of conversionReviewVersions it knows, v1 or v1beta1", async () => {
    for (const [versions, expected] of [
      [["v1beta1", "v1"], "apiextensions.k8s.io/v1beta1"],
      [["v1", "v1beta1"], "apiextensions.k8s.io/v1"],
      [["v3", "v1beta1", "v1"], "apiextensions.k8s.io/v1beta1"],
      [["v3", "v1"], "apiextensions.k8s.io/v1"],
    ] as const) {
      received.length = 0;
      const [out] = await caller.convert(conversion({ conversionReviewVersions: versions }), [gadget("a")], V2);
      expect(received.map((r) => r.review.apiVersion)).toEqual([expected]);
      expect(out?.apiVersion).toBe(V2);
    }
  });

  it("does not check a v1beta1 answer's kind and uid, as kube-apiserver never did", async () => {
    answer = answering((ok) => ({ response: { ...(ok["response"] as object), uid: "another" } }));
    const [out] = await caller.convert(conversion({ conversionReviewVersions: ["v1beta1"] }), [gadget("a")], V2);
    expect(out?.apiVersion).toBe(V2);
  });

  it("gives a converted object the original's metadata back, but for the labels and annotations the webhook set", async () => {
    answer = answering((ok) => {
      const response = ok["response"] as { convertedObjects: JsonObject[] };
      for (const o of response.convertedObjects) {
        o.metadata = {
          name: (o.metadata as { name: string }).name,
          namespace: "ns",
          uid: (o.metadata as { uid: string }).uid,
          resourceVersion: "999",
          generation: 40,
          finalizers: ["webhook.example.com/added"],
          labels: { app: "gadgets", converted: "yes" },
          annotations: { "gadgets.capstan.test/from": "v1" },
        };
      }
      return ok;
    });
    const [out] = await caller.convert(
      conversion(),
      [gadget("a", V1, { annotations: { old: "dropped by the webhook" } })],
      V2,
    );
    expect(out?.metadata).toEqual({
      name: "a",
      namespace: "ns",
      uid: "uid-a",
      resourceVersion: "7",
      generation: 2,
      labels: { app: "gadgets", converted: "yes" },
      annotations: { "gadgets.capstan.test/from": "v1" },
    });
  });

  it("drops the labels and annotations a webhook answered without", async () => {
    answer = answering((ok) => {
      for (const o of (ok["response"] as { convertedObjects: JsonObject[] }).convertedObjects) {
        o.metadata = { name: "a", namespace: "ns", uid: "uid-a" };
      }
      return ok;
    });
    const [out] = await caller.convert(conversion(), [gadget("a", V1, { annotations: { a: "b" } })], V2);
    expect(out?.metadata).toEqual({ name: "a", namespace: "ns", uid: "uid-a", resourceVersion: "7", generation: 2 });
  });
});

describe("a conversion webhook's answer refused, in kube-apiserver's words", () => {
  const response = (change: Record<string, unknown>) =>
    answering((ok) => ({ ...ok, response: { ...(ok["response"] as object), ...change } }));
  const firstObject = (change: (o: JsonObject) => void) =>
    answering((ok) => {
      change((ok["response"] as { convertedObjects: JsonObject[] }).convertedObjects[0]!);
      return ok;
    });

  it("refuses an answer that is no v1 ConversionReview", async () => {
    answer = answering((ok) => ({ response: ok["response"] }));
    expect(await failure(caller.convert(conversion(), [gadget("a")], V2))).toEqual({
      code: 500,
      message: `${prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind=`,
    });
    answer = answering((ok) => ({ ...ok, kind: undefined }));
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=`,
    );
    // The other review version decodes, but client-go's decoder cannot convert it into the one sent.
    answer = answering((ok) => ({ ...ok, apiVersion: "apiextensions.k8s.io/v1beta1" }));
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: converting (v1beta1.ConversionReview) to (v1.ConversionReview): unknown conversion`,
    );
    answer = answering((ok) => ({ ...ok, apiVersion: "apiextensions.k8s.io/v1" }));
    expect(
      (await failure(caller.convert(conversion({ conversionReviewVersions: ["v1beta1"] }), [gadget("a")], V2))).message,
    ).toBe(`${prefix} failed: converting (v1.ConversionReview) to (v1beta1.ConversionReview): unknown conversion`);
    answer = answering((ok) => ({ ...ok, kind: "AdmissionReview" }));
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: no kind "AdmissionReview" is registered for version "apiextensions.k8s.io/v1" in scheme "k8s.io/apiserver/pkg/util/webhook/client.go:74"`,
    );
  });

  it("refuses an answer without a response, or for another request", async () => {
    answer = answering((ok) => ({ ...ok, response: undefined }));
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: no response provided`,
    );
    answer = response({ uid: "not-the-request" });
    const { message } = await failure(caller.convert(conversion(), [gadget("a")], V2));
    const uid = received.at(-1)?.review.request.uid;
    expect(message).toBe(`${prefix} failed: expected response.uid="${uid}", got "not-the-request"`);
  });

  it("fails with the webhook's own message, or says the status was not Success", async () => {
    answer = response({ result: { status: "Failure", message: "cannot convert gadget a: no colour" } });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: cannot convert gadget a: no colour`,
    );
    answer = response({ result: { status: "Failure" } });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: response.result.status was 'Failure', not 'Success'`,
    );
    answer = response({ result: {} });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: response.result.status was '', not 'Success'`,
    );
  });

  it("refuses an answer with another number of objects than were sent", async () => {
    answer = answering((ok) => {
      (ok["response"] as { convertedObjects: JsonObject[] }).convertedObjects.pop();
      return ok;
    });
    expect((await failure(caller.convert(conversion(), [gadget("a"), gadget("b", V2), gadget("c")], V2))).message).toBe(
      `${prefix} returned 1 objects, expected 2`,
    );
  });

  it("refuses a converted object of another groupVersion or kind: at index 0 for one object, its index in a list", async () => {
    answer = firstObject((o) => {
      o.apiVersion = "other.capstan.test/v2";
    });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} returned invalid object at index 0: invalid groupVersion (expected ${V2}, received other.capstan.test/v2)`,
    );
    answer = firstObject((o) => {
      o.kind = "Widget";
    });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} returned invalid object at index 0: invalid kind (expected Gadget, received Widget)`,
    );
    // In a list, the index is the object's among those sent.
    answer = answering((ok) => {
      (ok["response"] as { convertedObjects: JsonObject[] }).convertedObjects[1]!.apiVersion = V1;
      return ok;
    });
    expect((await failure(caller.convert(conversion(), [gadget("a"), gadget("b", V2), gadget("c")], V2))).message).toBe(
      `${prefix} returned invalid converted object at index 1: invalid groupVersion (expected ${V2}, received ${V1})`,
    );
    answer = answering((ok) => {
      (ok["response"] as { convertedObjects: JsonObject[] }).convertedObjects[1]!.kind = "Widget";
      return ok;
    });
    expect((await failure(caller.convert(conversion(), [gadget("a"), gadget("c")], V2))).message).toBe(
      `${prefix} returned invalid converted object at index 1: invalid kind (expected Gadget, received Widget)`,
    );
  });

  it("refuses a converted object whose name, namespace or uid changed", async () => {
    for (const [field, value, said] of [
      ["name", "b", "name: a != b"],
      ["namespace", "elsewhere", "namespace: ns != elsewhere"],
      ["uid", "uid-other", "UID: uid-a != uid-other"],
    ] as const) {
      answer = firstObject((o) => {
        (o.metadata as Record<string, unknown>)[field] = value;
      });
      expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
        `${prefix} returned invalid object: must have the same ${said}`,
      );
      expect((await failure(caller.convert(conversion(), [gadget("a"), gadget("c")], V2))).message).toBe(
        `${prefix} returned invalid converted object at index 0: must have the same ${said}`,
      );
    }
  });

  it("refuses labels and annotations it cannot keep", async () => {
    answer = firstObject((o) => {
      (o.metadata as Record<string, unknown>).labels = { app: "gadgets", count: 3 };
    });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} returned invalid metadata: metadata.labels[count] must be a string, but is int64 in converted object`,
    );
    answer = firstObject((o) => {
      (o.metadata as Record<string, unknown>).annotations = { ratio: 0.5 };
    });
    expect((await failure(caller.convert(conversion(), [gadget("c"), gadget("a")], V2))).message).toBe(
      `${prefix} returned invalid metadata in object at index 0: metadata.annotations[ratio] must be a string, but is float64 in converted object`,
    );
    answer = firstObject((o) => {
      (o.metadata as Record<string, unknown>).labels = { "bad key!": "x" };
    });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} returned invalid metadata: metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
    answer = firstObject((o) => {
      (o.metadata as Record<string, unknown>).labels = "app=gadgets";
    });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} returned invalid metadata: invalid metadata.labels of type string in converted object`,
    );
    answer = firstObject((o) => {
      delete o.metadata;
    });
    expect(
      (await failure(caller.convert(conversion(), [gadget("", V1, { namespace: "", uid: "" })], V2))).message,
    ).toBe(`${prefix} returned invalid metadata: missing metadata in converted object`);
  });

  it("says what the webhook answered outside 200-206, as client-go does, without the URL", async () => {
    answer = () => ({
      status: 403,
      body: { kind: "Status", apiVersion: "v1", status: "Failure", message: "gadgets are not for you", code: 403 },
    });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: gadgets are not for you`,
    );
    answer = () => ({ status: 500, body: "the converter crashed\n", contentType: "text/plain; charset=utf-8" });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: an error on the server ("the converter crashed") has prevented the request from succeeding`,
    );
    // A body that is not text is not quoted (rest/request.go newUnstructuredResponseError).
    answer = () => ({ status: 500, body: { error: "crashed" } });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: an error on the server ("unknown") has prevented the request from succeeding`,
    );
    answer = () => ({ status: 404, body: "404 page not found", contentType: "text/plain" });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: the server could not find the requested resource`,
    );
    answer = (review) => ({ ...converting(review), status: 207 });
    expect((await failure(caller.convert(conversion(), [gadget("a")], V2))).message).toBe(
      `${prefix} failed: the server responded with the status code 207 but did not return more information`,
    );
  });

  it("says why the webhook could not be called: connection refused, unknown authority", async () => {
    const closed = createServer({ cert: certs.certPem, key: certs.keyPem });
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const gone = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const url = `https://127.0.0.1:${gone}/convert`;
    expect(await failure(caller.convert(conversion({}, url), [gadget("a")], V2))).toEqual({
      code: 500,
      message: `${prefix} failed: Post "${url}?timeout=30s": dial tcp 127.0.0.1:${gone}: connect: connection refused`,
    });
    const other = await createServingCertificates();
    const untrusted = {
      ...conversion(),
      clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(other.caPem).toString("base64") },
    };
    expect((await failure(caller.convert(untrusted, [gadget("a")], V2))).message).toBe(
      `${prefix} failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
    );
    expect(received).toEqual([]);
    expect(caller.counts).toEqual({ reviews: 0, objects: 0 });
  });
});
