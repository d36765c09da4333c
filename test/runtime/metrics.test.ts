import { describe, expect, it } from "vitest";
import { RuntimeMetrics } from "../../packages/capstan/src/runtime/metrics.ts";

describe("runtime metrics", () => {
  it("reports counts and gauges exactly at every scrape, counting only what happened since the last one once", async () => {
    const metrics = new RuntimeMetrics();
    const controller = metrics.controller("widget", 4);
    const queue = metrics.workQueue("widget");
    controller.activeWorkers(1);
    controller.activeWorkers(1);
    controller.reconciled("success", 0.01);
    controller.reconciled("error", 0.02);
    controller.failed(true);
    queue.added?.();
    queue.added?.();
    queue.depth?.(2);
    queue.retried?.();
    let text = await metrics.text();
    expect(text).toContain('controller_runtime_active_workers{controller="widget"} 2');
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="success"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="error"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="requeue"} 0');
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="widget"} 1');
    expect(text).toContain('controller_runtime_terminal_reconcile_errors_total{controller="widget"} 1');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="widget"} 2');
    expect(text).toContain('workqueue_adds_total{name="widget",controller="widget"} 2');
    expect(text).toContain('workqueue_depth{name="widget",controller="widget",priority=""} 2');
    expect(text).toContain('workqueue_retries_total{name="widget",controller="widget"} 1');

    // A second scrape with nothing new reports the same totals (not doubled).
    expect(await metrics.text()).toBe(text);

    controller.activeWorkers(-2);
    controller.reconciled("success", 0.01);
    queue.added?.();
    queue.depth?.(0);
    text = await metrics.text();
    expect(text).toContain('controller_runtime_active_workers{controller="widget"} 0');
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="success"} 2');
    expect(text).toContain('workqueue_adds_total{name="widget",controller="widget"} 3');
    expect(text).toContain('workqueue_depth{name="widget",controller="widget",priority=""} 0');
  });
});
