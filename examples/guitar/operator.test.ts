/**
 * The guitar reviewer end to end, through the typed client: the operator runs against the embedded
 * API server, watching every namespace, as `capstan run examples/guitar/operator.ts` would.
 */
import type { KubeClient, KubeObject } from "capstan";
import { Event, Namespace } from "capstan/core";
import { type RunningOperator, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import op, {
  BAD_COMMENT,
  commentFor,
  DEFAULT_BAD_BRANDS,
  DEFAULT_GOOD_BRANDS,
  GOOD_COMMENT,
  Guitar,
  type GuitarObject,
  guitarOperator,
  rulesFromEnv,
  UNKNOWN_COMMENT,
} from "./operator.ts";

let cluster: TestCluster;
let running: RunningOperator;
beforeAll(async () => {
  cluster = await startTestCluster();
  running = await cluster.run(op); // no `namespaces`: Guitars are watched cluster-wide
  for (const ns of ["rock", "jazz", "folk"])
    await cluster.client.resource(Namespace).create({ metadata: { name: ns } });
});
afterAll(() => cluster?.stop());

const guitars = (ns: string) => cluster.client.resource(Guitar, ns);

async function createGuitar(ns: string, name: string, spec: GuitarObject["spec"]): Promise<GuitarObject> {
  return guitars(ns).create(Guitar.make({ metadata: { name, namespace: ns }, spec }));
}

const reviewed = (g: GuitarObject) => g.spec.review === true && g.spec.comment !== undefined;

/**
 * Creates a new unreviewed guitar in `ns` and waits for its review. The operator sees the events
 * of one namespace in order, so once this guitar is reviewed it has also handled every change
 * made in `ns` before: a write it were going to make to an earlier guitar would have happened.
 */
let barriers = 0;
async function caughtUp(ns: string): Promise<void> {
  const name = `barrier-${++barriers}`;
  await createGuitar(ns, name, { brand: "fender", review: false });
  await cluster.waitFor(Guitar, `${ns}/${name}`, reviewed);
}

/** The Events the operator posted about one object (written in the background, so waited for). */
async function reviewedEvents(client: KubeClient, obj: KubeObject, count: number) {
  return vi.waitFor(
    async () => {
      const list = await client.resource(Event, obj.metadata?.namespace).list();
      const mine = list.items.filter((e) => e.involvedObject.uid === obj.metadata?.uid && e.reason === "Reviewed");
      if (mine.length < count) throw new Error(`${mine.length} Reviewed events so far, waiting for ${count}`);
      return mine;
    },
    { timeout: 5_000, interval: 50 },
  );
}

describe("the guitar reviewer", () => {
  it("reviews unreviewed guitars in every namespace, with a comment chosen by brand", async () => {
    await createGuitar("rock", "stratocaster", { brand: "fender", review: false });
    await createGuitar("jazz", "x003", { brand: "yamaha", review: false });
    // `review` left out: the CRD's default (false) makes it an unreviewed guitar.
    await createGuitar("folk", "homemade", { brand: "Acme" });

    const strat = await cluster.waitFor(Guitar, "rock/stratocaster", reviewed);
    const yamaha = await cluster.waitFor(Guitar, "jazz/x003", reviewed);
    const homemade = await cluster.waitFor(Guitar, "folk/homemade", reviewed);
    expect(strat.spec).toEqual({ brand: "fender", review: true, comment: GOOD_COMMENT });
    expect(yamaha.spec).toEqual({ brand: "yamaha", review: true, comment: BAD_COMMENT });
    expect(homemade.spec).toEqual({ brand: "Acme", review: true, comment: UNKNOWN_COMMENT });

    const [event] = await reviewedEvents(cluster.client, strat, 1);
    expect(event?.type).toBe("Normal");
    expect(event?.message).toBe(`fender: ${GOOD_COMMENT}`);
  });

  it("reviews a guitar once: its own write does not trigger another review", async () => {
    const strat = await createGuitar("rock", "telecaster", { brand: "squier", review: false });
    const done = await cluster.waitFor(Guitar, "rock/telecaster", reviewed);
    await caughtUp("rock");

    const now = await guitars("rock").get("telecaster");
    expect(now.metadata?.resourceVersion).toBe(done.metadata?.resourceVersion);
    // One write by the operator: creation is generation 1, the review generation 2.
    expect(strat.metadata?.generation).toBe(1);
    expect(now.metadata?.generation).toBe(2);
    expect(await reviewedEvents(cluster.client, now, 1)).toHaveLength(1);
  });

  it("leaves an already reviewed guitar alone: no write at all", async () => {
    const mine = await createGuitar("jazz", "martin-d15", { brand: "martin", review: true, comment: "my own words" });
    await caughtUp("jazz");

    const now = await guitars("jazz").get("martin-d15");
    expect(now.spec).toEqual({ brand: "martin", review: true, comment: "my own words" });
    expect(now.metadata?.resourceVersion).toBe(mine.metadata?.resourceVersion);
    expect(now.metadata?.generation).toBe(mine.metadata?.generation);
    expect(now.metadata?.managedFields).toEqual(mine.metadata?.managedFields);
    expect(now.metadata?.annotations).toBeUndefined();
  });

  it("reviews a guitar created as reviewed once a user sets review to false", async () => {
    await createGuitar("rock", "sg", { brand: "gibson", review: true, comment: "no need" });
    await guitars("rock").patch("sg", { spec: { review: false } }, { type: "merge" });
    const g = await cluster.waitFor(Guitar, "rock/sg", (g) => g.spec.review === true);
    expect(g.spec).toEqual({ brand: "gibson", review: true, comment: GOOD_COMMENT });
  });

  it("gives a fresh review when a user sets review back to false", async () => {
    await createGuitar("folk", "lespaul", { brand: "gibson", review: false });
    const first = await cluster.waitFor(Guitar, "folk/lespaul", reviewed);
    expect(first.spec.comment).toBe(GOOD_COMMENT);

    // The user swapped the guitar for another brand and asks for a new review.
    const reset = await guitars("folk").patch(
      "lespaul",
      { spec: { brand: "epiphone", review: false } },
      { type: "merge" },
    );
    expect(reset.spec.review).toBe(false);
    const second = await cluster.waitFor(Guitar, "folk/lespaul", (g) => g.spec.review === true);
    expect(second.spec).toEqual({ brand: "epiphone", review: true, comment: BAD_COMMENT });

    const events = await reviewedEvents(cluster.client, second, 2);
    expect(events.map((e) => e.message).sort()).toEqual([`epiphone: ${BAD_COMMENT}`, `gibson: ${GOOD_COMMENT}`]);
  });

  it("keeps running: nothing it did made the operator fail", async () => {
    expect(op.state).toBe("leading");
    expect(running.logs.filter((r) => Number(r.level) >= 50)).toEqual([]);
  });

  it("after a restart, reviews the guitars created while it was down and leaves reviewed ones alone", async () => {
    const reviewedBefore = await guitars("rock").get("stratocaster");
    await running.stop();
    await createGuitar("jazz", "while-down", { brand: "ibanez", review: false });

    running = await cluster.run(guitarOperator());
    const g = await cluster.waitFor(Guitar, "jazz/while-down", reviewed);
    expect(g.spec.comment).toBe(GOOD_COMMENT);
    await caughtUp("rock");
    const reviewedAfter = await guitars("rock").get("stratocaster");
    expect(reviewedAfter.metadata?.resourceVersion).toBe(reviewedBefore.metadata?.resourceVersion);
  });
});

describe("review rules", () => {
  it("matches brands case-insensitively and falls back to the unknown-brand comment", () => {
    const rules = { goodBrands: DEFAULT_GOOD_BRANDS, badBrands: DEFAULT_BAD_BRANDS };
    expect(commentFor(" Fender ", rules)).toBe(GOOD_COMMENT);
    expect(commentFor("PRS", rules)).toBe(BAD_COMMENT);
    expect(commentFor("harley benton", rules)).toBe(UNKNOWN_COMMENT);
  });

  it("reads the brand lists from GUITAR_GOOD_BRANDS and GUITAR_BAD_BRANDS", () => {
    const rules = rulesFromEnv({ GUITAR_GOOD_BRANDS: "Acme, yamaha", GUITAR_BAD_BRANDS: "fender" });
    expect(rules).toEqual({ goodBrands: ["acme", "yamaha"], badBrands: ["fender"] });
    expect(commentFor("yamaha", rules)).toBe(GOOD_COMMENT);
    expect(commentFor("fender", rules)).toBe(BAD_COMMENT);
    expect(rulesFromEnv({})).toEqual({ goodBrands: DEFAULT_GOOD_BRANDS, badBrands: DEFAULT_BAD_BRANDS });
  });
});
