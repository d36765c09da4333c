/**
 * bench/chaos.ts reports 0 duplicates, 1 reconcile per key at a time and 0 overlapping actors from
 * the operator's marks (bench/chaos-marks.ts): these prove the reader would see them if they happened.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readMarks } from "../../bench/chaos-marks.ts";

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "chaos-marks-"));
  path = join(dir, "marks");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const marks = (...lines: string[]) => writeFile(path, `${lines.join("\n")}\n`);

describe("readMarks", () => {
  it("counts reconciles and errors, and one reconcile per key at a time as 1", async () => {
    await marks(
      "S 1 100 ns/a 1",
      "E 1 110 ns/a ok",
      "S 1 120 ns/a 1",
      "E 1 130 ns/a error",
      "S 1 105 ns/b 1",
      "E 1 140 ns/b ok",
    );
    const m = readMarks(path);
    expect(m).toMatchObject({
      reconciles: 3,
      errors: 1,
      maxConcurrentPerKey: 1,
      duplicateChildren: 0,
      overlappingActors: 0,
    });
    expect(m.firstStart.get(1)).toBe(100);
  });

  it("sees a key reconciled twice at once in one process (the depth it reported)", async () => {
    await marks("S 1 100 ns/a 1", "S 1 101 ns/a 2", "E 1 110 ns/a ok", "E 1 111 ns/a ok");
    expect(readMarks(path).maxConcurrentPerKey).toBe(2);
  });

  it("sees a key reconciled by two processes at once, and two actors at once", async () => {
    await marks("S 1 100 ns/a 1", "S 2 105 ns/a 1", "E 2 108 ns/a ok", "E 1 110 ns/a ok");
    const m = readMarks(path);
    expect(m.maxConcurrentPerKey).toBe(2);
    expect(m.overlappingActors).toBe(1);
  });

  it("ends a killed process's open reconcile at its death: a successor starting later does not overlap", async () => {
    await marks("S 1 100 ns/a 1", "S 2 5000 ns/a 1", "E 2 5010 ns/a ok");
    expect(readMarks(path, new Map([[1, 200]])).overlappingActors).toBe(0);
    // Without the death time it would still be running when the other started.
    expect(readMarks(path, new Map(), 6000).overlappingActors).toBe(1);
  });

  it("counts a child created twice for the same parent uid as a duplicate", async () => {
    await marks("C 1 100 ns/a uid-a", "C 1 101 ns/b uid-b", "C 2 300 ns/a uid-a");
    expect(readMarks(path).duplicateChildren).toBe(1);
  });

  it("reads a missing file as no marks", () => {
    expect(readMarks(join(dir, "none")).reconciles).toBe(0);
  });
});
