/**
 * The operator's side of a conversion webhook: a ConversionReview decoded, each object converted
 * through the kind's hub, and the answer served over HTTPS by the webhook server.
 */
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import {
  type ConversionHandlerSpec,
  type ConversionRequest,
  ConversionReviewError,
  decodeConversionReview,
  runConversion,
  type SpokeConversion,
} from "../../packages/capstan/src/webhooks/conversion.ts";
import { WebhookServer } from "../../packages/capstan/src/webhooks/webhook-server.ts";
import { createServingCertificates, type ServingCertificates } from "../../packages/capstan-dev/src/devcluster/tls.ts";

const GROUP = "gadgets.capstan.test";

type Gadget = KubeObject & { spec: Record<string, unknown> };

/** v2 is the hub: v1 names the position `switchPosition`, v3 keeps it in `settings.position`. */
const v1: SpokeConversion<Gadget, Gadget> = {
  toHub: (o) => {
    const { switchPosition, ...rest } = o.spec;
    if (switchPosition === "explode") throw new Error("an exploding switch has no position");
    return { ...o, spec: { ...rest, position: switchPosition } };
  },
  fromHub: (hub) => {
    const { position, ...rest } = hub.spec;
    return { ...hub, spec: { ...rest, switchPosition: position } };
  },
};
const v3: SpokeConversion<Gadget, Gadget> = {
  toHub: (o) => {
    const { settings, ...rest } = o.spec as { settings: { position: string } };
    return { ...o, spec: { ...rest, position: settings.position } };
  },
  // Builds a fresh object without metadata: the original's is kept.
  fromHub: (hub) => ({
    apiVersion: hub.apiVersion,
    kind: hub.kind,
    spec: { colour: hub.spec.colour, settings: { position: hub.spec.position } },
  }),
};

const spec: ConversionHandlerSpec = {
  name: "gadget-conversion",
  type: "conversion",
  group: GROUP,
  kind: "Gadget",
  hub: "v2",
  spokes: new Map<string, SpokeConversion>([
    ["v1", v1 as SpokeConversion],
    ["v3", v3 as SpokeConversion],
  ]),
};

const metadata = { name: "g", namespace: "ns", uid: "u-1", labels: { app: "gadgets" } };
const atV1 = (switchPosition = "up"): Gadget => ({
  apiVersion: `${GROUP}/v1`,
  kind: "Gadget",
  metadata,
  spec: { colour: "red", switchPosition },
});
const atV2: Gadget = { apiVersion: `${GROUP}/v2`, kind: "Gadget", metadata, spec: { colour: "red", position: "up" } };
const atV3: Gadget = {
  apiVersion: `${GROUP}/v3`,
  kind: "Gadget",
  metadata,
  spec: { colour: "red", settings: { position: "up" } },
};

const convert = (objects: KubeObject[], desired: string) =>
  runConversion(spec, { uid: "req-1", desiredAPIVersion: `${GROUP}/${desired}`, objects });

describe("decodeConversionReview", () => {
  it("says what is wrong with a body that is no ConversionReview it can answer", () => {
    const request = { uid: "r", desiredAPIVersion: `${GROUP}/v2`, objects: [] };
    const cases: [string, string][] = [
      ["{", "the body is not JSON: "],
      [
        JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request }),
        'expected a ConversionReview of apiextensions.k8s.io/v1 or v1beta1, got kind "AdmissionReview" of "admission.k8s.io/v1"',
      ],
      [
        JSON.stringify({ apiVersion: "apiextensions.k8s.io/v2", kind: "ConversionReview", request }),
        'expected a ConversionReview of apiextensions.k8s.io/v1 or v1beta1, got kind "ConversionReview" of "apiextensions.k8s.io/v2"',
      ],
      [
        JSON.stringify({ apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview" }),
        "the ConversionReview has no request",
      ],
      [
        JSON.stringify({
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "ConversionReview",
          request: { ...request, uid: "" },
        }),
        "the request has no uid",
      ],
      [
        JSON.stringify({
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "ConversionReview",
          request: { ...request, desiredAPIVersion: "v2" },
        }),
        "the request has no desiredAPIVersion",
      ],
      [
        JSON.stringify({
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "ConversionReview",
          request: { ...request, objects: {} },
        }),
        "the request has no objects",
      ],
    ];
    for (const [body, message] of cases) {
      let err: unknown;
      try {
        decodeConversionReview(body);
      } catch (e) {
        err = e;
      }
      expect(err, body).toBeInstanceOf(ConversionReviewError);
      expect((err as Error).message.startsWith(message), `${(err as Error).message} / ${message}`).toBe(true);
    }
  });

  it("reads the request of a v1 or v1beta1 review, keeping the review's version for the answer", () => {
    const request: ConversionRequest = { uid: "r", desiredAPIVersion: `${GROUP}/v2`, objects: [atV1()] };
    for (const apiVersion of ["apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"]) {
      expect(decodeConversionReview(JSON.stringify({ apiVersion, kind: "ConversionReview", request }))).toEqual({
        apiVersion,
        request,
      });
    }
  });
});

describe("runConversion through the hub", () => {
  it("converts a spoke to the hub, the hub to a spoke, and a spoke to another spoke through the hub", () => {
    expect(convert([atV1()], "v2").response).toEqual({
      uid: "req-1",
      result: { status: "Success" },
      convertedObjects: [atV2],
    });
    expect(convert([atV2], "v1").response.convertedObjects).toEqual([atV1()]);
    expect(convert([atV1()], "v3").response.convertedObjects).toEqual([atV3]);
    expect(convert([atV3], "v1").response.convertedObjects).toEqual([atV1()]);
  });

  it("leaves an object already in the desired version untouched, and keeps the objects' order", () => {
    const { response } = convert([atV2, atV1("down"), atV3], "v2");
    expect(response.convertedObjects[0]).toBe(atV2);
    expect(response.convertedObjects.map((o) => (o as Gadget).spec.position)).toEqual(["up", "down", "up"]);
  });

  it("keeps the original's metadata when the function builds an object without it", () => {
    const [out] = convert([atV2], "v3").response.convertedObjects;
    expect(out?.metadata).toEqual(metadata);
  });

  it("does not change the objects it was given", () => {
    const sent = atV1();
    const before = structuredClone(sent);
    convert([sent], "v3");
    expect(sent).toEqual(before);
  });

  it("answers Failure naming an unknown version, another group or another kind", () => {
    expect(convert([atV1()], "v9").response).toEqual({
      uid: "req-1",
      convertedObjects: [],
      result: {
        status: "Failure",
        message: `desiredAPIVersion "${GROUP}/v9" is not a version of Gadget (${GROUP}/v2, ${GROUP}/v1, ${GROUP}/v3)`,
      },
    });
    expect(convert([{ ...atV1(), apiVersion: "other.capstan.test/v1" }], "v2").response.result).toEqual({
      status: "Failure",
      message: `Gadget ns/g's apiVersion "other.capstan.test/v1" is not a version of Gadget (${GROUP}/v2, ${GROUP}/v1, ${GROUP}/v3)`,
    });
    expect(convert([{ ...atV1(), kind: "Widget" }], "v2").response.result).toEqual({
      status: "Failure",
      message: "cannot convert a Widget with the conversion webhook of Gadget",
    });
  });

  it("answers Failure naming the object and versions when a function throws, with nothing converted", () => {
    const { response, error } = convert([atV1(), atV1("explode")], "v3");
    expect(response).toEqual({
      uid: "req-1",
      convertedObjects: [],
      result: {
        status: "Failure",
        message: "converting Gadget ns/g from v1 to v3: an exploding switch has no position",
      },
    });
    expect(error?.message).toBe(response.result.message);
    const clusterScoped = { ...atV1("explode"), metadata: { name: "c" } };
    expect(convert([clusterScoped], "v2").response.result.message).toBe(
      "converting Gadget c from v1 to v2: an exploding switch has no position",
    );
  });
});

describe("the webhook server serving a conversion path", () => {
  let certs: ServingCertificates;
  let server: WebhookServer;
  beforeAll(async () => {
    certs = await createServingCertificates();
    server = new WebhookServer({ port: 0, host: "127.0.0.1", tls: { cert: certs.certPem, key: certs.keyPem } });
    server.register("/convert-gadgets-capstan-test-gadget", spec);
    await server.start();
  });
  afterAll(async () => {
    await server.stop();
  });

  function post(body: string): Promise<{ status: number; type: string | undefined; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: server.port,
          path: "/convert-gadgets-capstan-test-gadget?timeout=30s",
          method: "POST",
          ca: certs.caPem,
          agent: false,
          headers: { "content-type": "application/json" },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              type: res.headers["content-type"],
              text: Buffer.concat(chunks).toString("utf8"),
            }),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  it("answers in the review's own apiVersion, v1 or v1beta1", async () => {
    for (const apiVersion of ["apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"]) {
      const answer = await post(
        JSON.stringify({
          apiVersion,
          kind: "ConversionReview",
          request: { uid: "req-7", desiredAPIVersion: `${GROUP}/v3`, objects: [atV1(), atV2] },
        }),
      );
      expect(answer.status).toBe(200);
      expect(answer.type).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toEqual({
        apiVersion,
        kind: "ConversionReview",
        response: { uid: "req-7", result: { status: "Success" }, convertedObjects: [atV3, atV3] },
      });
    }
  });

  it("answers a conversion that fails with a Failure review, not an HTTP error", async () => {
    const answer = await post(
      JSON.stringify({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        request: { uid: "req-8", desiredAPIVersion: `${GROUP}/v2`, objects: [atV1("explode")] },
      }),
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).response).toEqual({
      uid: "req-8",
      convertedObjects: [],
      result: {
        status: "Failure",
        message: "converting Gadget ns/g from v1 to v2: an exploding switch has no position",
      },
    });
  });

  it("answers 400 with what is wrong for a body that is no ConversionReview", async () => {
    const answer = await post(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }));
    expect(answer.status).toBe(400);
    expect(answer.text).toBe(
      'expected a ConversionReview of apiextensions.k8s.io/v1 or v1beta1, got kind "AdmissionReview" of "admission.k8s.io/v1"\n',
    );
    expect(answer.type).toMatch(/^text\/plain/);
  });
});
