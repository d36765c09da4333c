/** `isEstablished`, the public waitFor predicate for a CRD whose kind the API server serves. */
import { describe, expect, it } from "vitest";
import { isEstablished } from "../../packages/capstan-dev/src/testing/index.ts";

const crd = (conditions?: { type: string; status: string }[]) => ({ status: conditions ? { conditions } : {} });

describe("isEstablished", () => {
  it("is true only with an Established condition whose status is True", () => {
    expect(
      isEstablished(
        crd([
          { type: "NamesAccepted", status: "True" },
          { type: "Established", status: "True" },
        ]),
      ),
    ).toBe(true);
    expect(isEstablished(crd([{ type: "Established", status: "False" }]))).toBe(false);
    expect(isEstablished(crd([{ type: "NamesAccepted", status: "True" }]))).toBe(false);
  });

  it("is false for a CRD without status or conditions yet", () => {
    expect(isEstablished({})).toBe(false);
    expect(isEstablished(crd())).toBe(false);
  });
});
