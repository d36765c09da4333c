import { expect } from "vitest";
import type { Response } from "../../../support/http.ts";

/** One expected `details.causes[]` entry: reason, field, message. */
export type Cause = [reason: string, field: string, message: string];

/**
 * Asserts kube-apiserver's 422 for `kind` `name` of API group `group`: the aggregate message (causes
 * repeated by a strategy that validates twice appear once) and every cause in order.
 */
export function expectInvalid(res: Response, group: string, kind: string, name: string, causes: Cause[]): void {
  expect(res.status, res.text).toBe(422);
  const texts = [...new Set(causes.map(([, field, message]) => `${field}: ${message}`))];
  const aggregate = texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`;
  expect(res.body.message).toBe(`${kind}.${group} "${name}" is invalid: ${aggregate}`);
  expect(res.body.reason).toBe("Invalid");
  expect(res.body.details).toEqual({
    name,
    group,
    kind,
    causes: causes.map(([reason, field, message]) => ({ reason, message, field })),
  });
}
