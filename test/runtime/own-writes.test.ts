import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { AppliedChildren, reachedVersion, WriteExpectations } from "../../packages/capstan/src/runtime/own-writes.ts";

const at = (rv: string): KubeObject => ({ metadata: { name: "a", namespace: "ns", resourceVersion: rv } });

describe("reachedVersion", () => {
  it("accepts the same version, and a later one only when both are integers", () => {
    expect(reachedVersion("17", "17")).toBe(true);
    expect(reachedVersion("18", "17")).toBe(true);
    expect(reachedVersion("100", "99")).toBe(true);
    expect(reachedVersion("99", "100")).toBe(false);
    expect(reachedVersion("16", "17")).toBe(false);
    expect(reachedVersion("b", "a")).toBe(false);
    expect(reachedVersion(undefined, "1")).toBe(false);
  });
});

describe("WriteExpectations", () => {
  const never = new AbortController().signal;

  /** `whenCaughtUp` as a promise of how the wait ended (`true`: the write was seen); undefined: no wait. */
  function caughtUp(
    e: WriteExpectations,
    key: string,
    cached: () => KubeObject | undefined,
    signal: AbortSignal,
  ): Promise<boolean> | undefined {
    let wake!: (seen: boolean) => void;
    const ended = new Promise<boolean>((resolve) => {
      wake = resolve;
    });
    return e.whenCaughtUp(key, cached, signal, wake) ? ended : undefined;
  }

  it("does not wait when the cache already shows the write, or when nothing was written", () => {
    const e = new WriteExpectations();
    expect(caughtUp(e, "ns/a", () => at("5"), never)).toBeUndefined();
    e.wrote("ns/a", at("5"));
    expect(caughtUp(e, "ns/a", () => at("6"), never)).toBeUndefined();
    expect(e.size).toBe(0);
  });

  it("waits until the informer delivers our version, not an older one", async () => {
    const e = new WriteExpectations();
    e.wrote("ns/a", at("7"));
    let cache = at("6");
    let done = false;
    const wait = caughtUp(e, "ns/a", () => cache, never);
    expect(wait).toBeInstanceOf(Promise);
    const waiting = wait?.then(() => {
      done = true;
    });
    e.saw("ns/a", at("6"));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    cache = at("7");
    e.saw("ns/a", cache);
    await waiting;
    expect(done).toBe(true);
    expect(e.size).toBe(0);
  });

  it("stops waiting on deletion, on abort, and after the timeout since the write", async () => {
    const e = new WriteExpectations(30);
    e.wrote("ns/a", at("7"));
    const deleted = caughtUp(e, "ns/a", () => at("6"), never);
    expect(e.saw("ns/a", undefined)).toBe(true);
    expect(await deleted).toBe(true);

    e.wrote("ns/b", at("9"));
    const abort = new AbortController();
    const aborted = caughtUp(e, "ns/b", () => at("8"), abort.signal);
    abort.abort();
    expect(await aborted).toBe(false);

    const started = performance.now();
    expect(await caughtUp(e, "ns/b", () => at("8"), never)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000); // the 30 ms given, not the default 5 s
    expect(e.size).toBe(0);
  });
});

describe("AppliedChildren", () => {
  it("calls an apply unchanged only for the same configuration on the very version it produced", () => {
    const applied = new AppliedChildren();
    const key = AppliedChildren.key("ConfigMap.", "ns", "c");
    const desired: KubeObject & { data: Record<string, string> } = { metadata: { name: "c" }, data: { k: "v" } };
    const digest = AppliedChildren.digest(desired);
    expect(applied.unchanged(key, digest, at("3"))).toBe(false);
    applied.applied(key, digest, at("3"));
    expect(applied.unchanged(key, digest, at("3"))).toBe(true);
    // Someone else changed the child, it is gone from the cache, or the configuration differs.
    expect(applied.unchanged(key, digest, at("4"))).toBe(false);
    expect(applied.unchanged(key, digest, undefined)).toBe(false);
    expect(
      applied.unchanged(key, AppliedChildren.digest({ ...desired, data: { k: "w" } } as KubeObject), at("3")),
    ).toBe(false);
  });
});
