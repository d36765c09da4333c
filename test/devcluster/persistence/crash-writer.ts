/**
 * Child process of snapshot-crash.test.ts (not a test): writes into a FileStorage whose snapshot
 * threshold is tiny, so segments rotate and snapshots are written and old files deleted all the time,
 * and prints one line `<key> <rev> <value>` per acknowledged write, until it is killed.
 * Usage: node --import tsx crash-writer.ts <dir>
 */
import { FileStorage } from "../../../packages/capstan-dev/src/devcluster/storage/file-storage.ts";

/** A few KiB: a snapshot every couple of batches. */
const SNAPSHOT_THRESHOLD_BYTES = 8 * 1024;
const WRITERS = 16;
const KEYS = 200;

const store = await FileStorage.open(process.argv[2]!, { snapshotThresholdBytes: SNAPSHOT_THRESHOLD_BYTES });
let counter = 0;
await Promise.all(
  Array.from({ length: WRITERS }, async (_, writer) => {
    for (;;) {
      const key = `default/k-${(counter++ * 7 + writer) % KEYS}`;
      const value = String(counter);
      const build = (rev: number) => JSON.stringify({ key, rev, value });
      try {
        const current = store.get("/configmaps", key);
        const stored = current
          ? await store.update("/configmaps", key, current.rev, build)
          : await store.create("/configmaps", key, build);
        process.stdout.write(`${key} ${stored.rev} ${value}\n`);
      } catch {
        // A lost race (Conflict / KeyExists) is not acknowledged: try another key.
      }
    }
  }),
);
