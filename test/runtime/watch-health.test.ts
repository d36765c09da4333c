import { describe, expect, it } from "vitest";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import type { ApiServerProbe } from "../../packages/capstan/src/runtime/apiserver-probe.ts";
import { checksHandler } from "../../packages/capstan/src/runtime/health.ts";
import type { Informer, InformerConnection, InformerPhase } from "../../packages/capstan/src/runtime/informer.ts";
import type { SharedInformerEntry } from "../../packages/capstan/src/runtime/shared-informers.ts";
import {
  informerCheckName,
  WATCH_HEALTH_DEFAULTS,
  WatchHealth,
  watchHealthTimings,
} from "../../packages/capstan/src/runtime/watch-health.ts";

const Deployment: ResourceKind = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};
const ConfigMap: ResourceKind = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true };

/** An informer as the checks see it: its phase, whether it synced, its connection. */
function informer(state: { phase?: InformerPhase["phase"]; synced?: boolean } & Partial<InformerConnection>) {
  const s = { phase: "watching", synced: true, watchOpen: true, lastContactAt: 0, ...state };
  return {
    get phase() {
      return { phase: s.phase } as InformerPhase;
    },
    hasSynced: () => s.synced,
    get connection() {
      return { watchOpen: s.watchOpen, lastContactAt: s.lastContactAt };
    },
    state: s,
  };
}

function health(entries: SharedInformerEntry[], now: { t: number }, probe?: { lastAnsweredAt: number }) {
  return new WatchHealth(
    () => entries,
    watchHealthTimings({ notReadyAfter: "10s", notLiveAfter: "5m" }),
    { now: () => now.t },
    probe as ApiServerProbe | undefined,
  );
}

describe("watch health checks", () => {
  it("names each informer by its API path, scope and selectors", () => {
    expect(informerCheckName(Deployment)).toBe("informer:apps/v1/deployments");
    expect(informerCheckName(ConfigMap, { namespace: "shop" })).toBe("informer:v1/namespaces/shop/configmaps");
    expect(
      informerCheckName(ConfigMap, { labelSelector: "app in (a, b)", fieldSelector: "type=x", metadataOnly: true }),
    ).toBe("informer:v1/configmaps;labelSelector=app in (a, b);fieldSelector=type=x;metadata");
  });

  it("counts an outage from the last contact, and an open watch as contact only while the probe answers", () => {
    const now = { t: 100_000 };
    const watching = informer({ lastContactAt: 10_000 });
    const broken = informer({ phase: "backingOff", watchOpen: false, lastContactAt: 95_000 });
    const notStarted = informer({ phase: "idle", synced: false, watchOpen: false });
    const entries = [watching, broken, notStarted].map((i) => ({
      kind: ConfigMap,
      scope: {},
      informer: i as unknown as Informer,
    }));
    // Without a probe, an open watch is contact.
    const plain = health(entries, now);
    expect(plain.outageMs(watching as unknown as Informer)).toBe(0);
    expect(plain.outageMs(broken as unknown as Informer)).toBe(5_000);
    expect(plain.outageMs(notStarted as unknown as Informer)).toBe(0);
    // With one, an open watch is vouched for by its last answer (or its own last event).
    const probe = { lastAnsweredAt: 97_000 };
    const probed = health(entries, now, probe);
    expect(probed.outageMs(watching as unknown as Informer)).toBe(3_000);
    probe.lastAnsweredAt = 80_000; // a frozen server: no answer for 20 s
    expect(probed.outageMs(watching as unknown as Informer)).toBe(20_000);
    watching.state.lastContactAt = 99_000; // but the watch itself delivered an event a second ago
    expect(probed.outageMs(watching as unknown as Informer)).toBe(1_000);
  });

  it("reconnects, when the probe gets no answer, only the open watches silent since it was sent", () => {
    const now = { t: 50_000 };
    const busy = informer({ lastContactAt: 49_000 });
    const silent = informer({ lastContactAt: 30_000 });
    const down = informer({ watchOpen: false, lastContactAt: 10_000 });
    const h = health(
      [busy, silent, down].map((i) => ({ kind: ConfigMap, scope: {}, informer: i as unknown as Informer })),
      now,
    );
    expect(h.silentWatches(45_000)).toEqual([silent]);
  });

  it("is ready only when synced and within the readiness bound, live within the liveness bound", async () => {
    const now = { t: 1_000_000 };
    const fresh = informer({ watchOpen: false, lastContactAt: now.t - 9_000 });
    const stale = informer({ watchOpen: false, lastContactAt: now.t - 11_000 });
    const lost = informer({ watchOpen: false, lastContactAt: now.t - 301_000 });
    const unsynced = informer({ synced: false, phase: "initialListing", watchOpen: false, lastContactAt: now.t });
    const entries = [
      { kind: ConfigMap, scope: { namespace: "a" }, informer: fresh },
      { kind: ConfigMap, scope: { namespace: "b" }, informer: stale },
      { kind: ConfigMap, scope: { namespace: "c" }, informer: lost },
      { kind: ConfigMap, scope: { namespace: "d" }, informer: unsynced },
    ] as unknown as SharedInformerEntry[];
    const h = health(entries, now);
    const run = async (checks: Map<string, () => boolean | Promise<boolean>>) =>
      Object.fromEntries(await Promise.all([...checks].map(async ([k, c]) => [k.split("/")[2], await c()])));
    expect(await run(h.readyChecks())).toEqual({ a: true, b: false, c: false, d: false });
    expect(await run(h.healthChecks())).toEqual({ a: true, b: true, c: false, d: true });
  });

  it("defaults to 10 s / 5 min with a probe every 3 s (5 s timeout), and refuses bounds that contradict", () => {
    expect(WATCH_HEALTH_DEFAULTS).toEqual({
      notReadyAfterMs: 10_000,
      notLiveAfterMs: 300_000,
      probePeriodMs: 3_000,
      probeTimeoutMs: 5_000,
    });
    expect(watchHealthTimings()).toEqual(WATCH_HEALTH_DEFAULTS);
    expect(watchHealthTimings({ notLiveAfter: false, probePeriod: false })).toMatchObject({
      notLiveAfterMs: Number.POSITIVE_INFINITY,
      probePeriodMs: 0,
    });
    expect(() => watchHealthTimings({ notReadyAfter: 0 })).toThrow("notReadyAfter must be greater than zero");
    expect(() => watchHealthTimings({ probeTimeout: "7s" })).toThrow(
      "probePeriod + probeTimeout (10000 ms) must be less than notReadyAfter (10000 ms)",
    );
    expect(() => watchHealthTimings({ notLiveAfter: "later" })).toThrow(/invalid duration "later"/);
  });

  it("serves a check whose name holds escaped characters at /readyz/<name>", async () => {
    const name = informerCheckName(ConfigMap, { labelSelector: "app in (a, b)" });
    const handler = checksHandler(() => new Map([[name, () => false]]));
    let status = 0;
    const res = {
      writeHead(code: number) {
        status = code;
        return this;
      },
      end() {},
    };
    const path = `/${encodeURIComponent(name).replaceAll("%2F", "/")}`;
    await handler({ url: `/readyz${path}` } as never, res as never, path);
    expect(status).toBe(500); // found and failing, not 404
  });
});
