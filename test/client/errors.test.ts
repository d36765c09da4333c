import { describe, expect, it } from "vitest";
import {
  ApiError,
  apiErrorFromResponse,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isServerTimeout,
  isTooManyRequests,
  parseRetryAfter,
} from "../../packages/capstan/src/client/errors.ts";

const statusBody = (code: number, reason: string, message = "m") =>
  JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", code, reason, message });

describe("ApiError from a response", () => {
  it("keeps the server's Status as is", () => {
    const err = apiErrorFromResponse({ statusCode: 409, method: "PUT", body: statusBody(409, "Conflict", "stale") });
    expect(err.status.message).toBe("stale");
    expect(err.code).toBe(409);
    expect(err.reason).toBe("Conflict");
    expect(err.message).toBe("stale");
  });

  it("synthesizes client-go's InternalError message and keeps a text body as the cause", () => {
    const err = apiErrorFromResponse({
      statusCode: 502,
      method: "GET",
      body: "<html>bad gateway</html>",
      contentType: "text/html",
      resource: { group: "apps", plural: "deployments", name: "web" },
    });
    expect(err.reason).toBe("InternalError");
    expect(err.message).toBe(
      'an error on the server ("<html>bad gateway</html>") has prevented the request from succeeding (get deployments.apps web)',
    );
    expect(err.status.details?.causes).toEqual([
      { reason: "UnexpectedServerResponse", message: "<html>bad gateway</html>" },
    ]);
  });

  it("does not quote a non-text body (e.g. protobuf or JSON that is not a Status)", () => {
    const err = apiErrorFromResponse({
      statusCode: 500,
      method: "GET",
      body: '{"x":1}',
      contentType: "application/json",
    });
    expect(err.message).toBe('an error on the server ("unknown") has prevented the request from succeeding');
  });

  it("keeps the Retry-After seconds of a 429", () => {
    const err = apiErrorFromResponse({ statusCode: 429, method: "POST", body: "", retryAfter: "3" });
    expect(isTooManyRequests(err)).toBe(true);
    expect(err.retryAfterSeconds).toBe(3);
  });

  it("fills a missing code in a Status body from the HTTP status", () => {
    const body = JSON.stringify({ kind: "Status", status: "Failure", reason: "NotFound", message: "gone" });
    expect(apiErrorFromResponse({ statusCode: 404, method: "GET", body }).code).toBe(404);
  });
});

describe("is* helpers", () => {
  const e = (code: number, reason: string) => new ApiError({ kind: "Status", status: "Failure", code, reason });

  it("judge by reason first, then by code when the reason is unknown (apimachinery's rule)", () => {
    expect(isNotFound(e(404, "NotFound"))).toBe(true);
    expect(isNotFound(e(404, "SomethingNew"))).toBe(true);
    // A known reason with another meaning wins over the code.
    expect(isNotFound(e(404, "Forbidden"))).toBe(false);
    expect(isConflict(e(409, "Conflict"))).toBe(true);
    expect(isConflict(e(409, "AlreadyExists"))).toBe(false);
    expect(isAlreadyExists(e(409, "AlreadyExists"))).toBe(true);
    expect(isInvalid(e(422, "Invalid"))).toBe(true);
    expect(isForbidden(e(403, "Forbidden"))).toBe(true);
    expect(isServerTimeout(e(504, "Timeout"))).toBe(true);
  });

  it("isGone covers both Gone and the Expired reason a watch sends with 410", () => {
    expect(isGone(e(410, "Gone"))).toBe(true);
    expect(isGone(e(410, "Expired"))).toBe(true);
    expect(isGone(e(404, "NotFound"))).toBe(false);
  });

  it("accept unknown values and follow Error.cause", () => {
    expect(isNotFound(undefined)).toBe(false);
    expect(isNotFound("404")).toBe(false);
    expect(isNotFound(new Error("wrapped", { cause: e(404, "NotFound") }))).toBe(true);
  });
});

describe("Retry-After", () => {
  it("accepts integer seconds only, like client-go", () => {
    expect(parseRetryAfter("5")).toBe(5);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
