import pino from "pino";
import { describe, expect, it } from "vitest";
import { LogFeed } from "../../packages/capstan-dev/src/dashboard/log-feed.ts";

describe("log feed", () => {
  it("parses pino records (level, message, the object) and keeps plain text lines as text", () => {
    const feed = new LogFeed();
    pino({ level: "debug" }, feed.destination("op"))
      .child({ namespace: "ns", name: "obj", controller: "c" })
      .debug("hello");
    feed.write("op", "not json {\n");
    const [record, text] = feed.lines();
    expect(record).toMatchObject({
      seq: 1,
      source: "op",
      level: "debug",
      msg: "hello",
      namespace: "ns",
      name: "obj",
      fields: { controller: "c" },
    });
    expect(text).toMatchObject({ seq: 2, source: "op", text: "not json {" });
    expect(text?.level).toBeUndefined();
  });

  it("keeps only the newest lines of its size, numbering every line written", () => {
    const feed = new LogFeed(3);
    for (let i = 1; i <= 5; i++) feed.write("op", `line ${i}`);
    expect(feed.lines().map((l) => [l.seq, l.text])).toEqual([
      [3, "line 3"],
      [4, "line 4"],
      [5, "line 5"],
    ]);
    expect(feed.lines({}, 1).map((l) => l.text)).toEqual(["line 5"]);
  });

  it("filters by source and object, tells subscribers each line, and survives a subscriber that throws", () => {
    const feed = new LogFeed();
    const heard: string[] = [];
    feed.subscribe(() => {
      throw new Error("broken page");
    });
    const unsubscribe = feed.subscribe((l) => heard.push(l.text));
    feed.write("a", JSON.stringify({ level: 30, msg: "x", namespace: "n", name: "one" }));
    feed.write("b", JSON.stringify({ level: 30, msg: "y", namespace: "n", name: "two" }));
    unsubscribe();
    feed.write("b", "after");
    expect(heard).toHaveLength(2);
    expect(feed.lines({ source: "b" }).map((l) => l.msg ?? l.text)).toEqual(["y", "after"]);
    expect(feed.lines({ namespace: "n", name: "one" }).map((l) => l.source)).toEqual(["a"]);
    expect(feed.sources()).toEqual(["a", "b"]);
  });
});
