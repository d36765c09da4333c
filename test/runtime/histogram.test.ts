import { exponentialBuckets, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FastHistogram } from "../../packages/capstan/src/runtime/histogram.ts";

const buckets = exponentialBuckets(10e-9, 10, 12);
const samples = [0, 1e-9, 1e-8, 3e-6, 0.0042, 0.5, 1, 7.5, 2000, 1e-3];

describe("FastHistogram", () => {
  it("writes the same Prometheus text and JSON as prom-client's Histogram for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const config = { name: "work_seconds", help: "How long work takes.", labelNames: ["name", "controller"] };
    const fast = new FastHistogram({ ...config, buckets, registers: [ours] });
    const reference = new Histogram({ ...config, buckets, registers: [theirs] });
    const fastA = fast.labels({ name: "a", controller: "a" });
    // Given in another order than labelNames: written in labelNames order all the same.
    const fastB = fast.labels({ controller: 'b"x', name: 'b"x' });
    for (const v of samples) {
      fastA.observe(v);
      reference.labels({ name: "a", controller: "a" }).observe(v);
    }
    fastB.observe(0.25);
    reference.labels({ name: 'b"x', controller: 'b"x' }).observe(0.25);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it("keeps one series per label set, zeroes series on reset, and refuses labels it does not declare", async () => {
    const registry = new Registry();
    const h = new FastHistogram({
      name: "t",
      help: "t",
      labelNames: ["controller"],
      buckets: [1, 2],
      registers: [registry],
    });
    const first = h.labels({ controller: "x" });
    expect(h.labels({ controller: "x" })).toBe(first);
    first.observe(1.5);
    expect(await registry.metrics()).toContain('t_bucket{le="2",controller="x"} 1');
    registry.resetMetrics();
    first.observe(0.5);
    const text = await registry.metrics();
    expect(text).toContain('t_bucket{le="1",controller="x"} 1');
    expect(text).toContain('t_count{controller="x"} 1');
    expect(() => h.labels({ name: "x" })).toThrow(/do not match/);
    expect(() => first.observe(Number.NaN)).toThrow(TypeError);
    expect(() => new FastHistogram({ name: "u", help: "u", labelNames: [], buckets: [2, 1], registers: [] })).toThrow(
      /ascending/,
    );
  });
});
