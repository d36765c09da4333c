/**
 * An HTTPS admission webhook server for the devcluster's admission tests: it records every
 * AdmissionReview request as the API server sent it (nulls included) and answers what the test
 * programmed for its path: allowed or denied, a JSON Patch, warnings, or a body that is no review.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { createServingCertificates } from "../../../../packages/capstan-dev/src/devcluster/tls.ts";

/** What a programmed webhook answers to one request. */
export interface ProgrammedAnswer {
  allowed?: boolean;
  status?: { code?: number; message?: string; reason?: string };
  /** JSON Patch operations (sent base64-encoded with patchType JSONPatch). */
  patch?: unknown[];
  warnings?: string[];
  /** The patch's bytes as sent (base64-encoded with patchType JSONPatch), when they are not a JSON document. */
  rawPatch?: string;
  /** An answer body sent as is instead of an AdmissionReview, with its Content-Type (none when undefined). */
  raw?: { body: string; contentType?: string };
}

// biome-ignore lint/suspicious/noExplicitAny: reviews are arbitrary JSON read by assertions
export type AdmissionRequestJson = any;

export interface RecordingWebhooks {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** The CA of the server's certificate, base64 (a configuration's `caBundle`). */
  caBundle: string;
  /** Every request received, in order, with the path it was sent to. */
  calls: { path: string; request: AdmissionRequestJson }[];
  /** Programs the answer of `path` (default: allowed, nothing else). */
  answer(path: string, fn: (request: AdmissionRequestJson) => ProgrammedAnswer): void;
  /** The requests sent to `path`. */
  requestsTo(path: string): AdmissionRequestJson[];
  /** Forgets calls and programmed answers. */
  reset(): void;
  stop(): Promise<void>;
}

export async function startRecordingWebhooks(): Promise<RecordingWebhooks> {
  const certs = await createServingCertificates();
  const answers = new Map<string, (request: AdmissionRequestJson) => ProgrammedAnswer>();
  const calls: { path: string; request: AdmissionRequestJson }[] = [];
  const server: Server = createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    req.on("end", () => {
      const review = JSON.parse(text) as { request: AdmissionRequestJson };
      const path = (req.url ?? "").split("?")[0] ?? "";
      calls.push({ path, request: review.request });
      const programmed = answers.get(path)?.(review.request) ?? {};
      if (programmed.raw !== undefined) {
        if (programmed.raw.contentType !== undefined) res.setHeader("content-type", programmed.raw.contentType);
        res.end(programmed.raw.body);
        return;
      }
      const patch = programmed.rawPatch ?? (programmed.patch ? JSON.stringify(programmed.patch) : undefined);
      const response = {
        uid: review.request.uid,
        allowed: programmed.allowed ?? true,
        ...(programmed.status ? { status: programmed.status } : {}),
        ...(programmed.warnings ? { warnings: programmed.warnings } : {}),
        ...(patch !== undefined ? { patchType: "JSONPatch", patch: Buffer.from(patch).toString("base64") } : {}),
      };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(certs.caPem).toString("base64"),
    calls,
    answer: (path, fn) => {
      answers.set(path, fn);
    },
    requestsTo: (path) => calls.filter((c) => c.path === path).map((c) => c.request),
    reset: () => {
      calls.length = 0;
      answers.clear();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
