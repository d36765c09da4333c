/**
 * An in-memory Lease endpoint with the API server's optimistic concurrency: create fails with
 * 409 if the Lease exists, update fails with 409 unless it carries the current resourceVersion.
 * Each candidate gets its own view, which a test can cut off to simulate a partition.
 */
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import type { LeaseApi } from "../../../packages/capstan/src/runtime/leader-election.ts";
import { apiError } from "./fake-lister-watcher.ts";

export class FakeLeases {
  lease: Lease | undefined;
  private rv = 0;
  readonly writes: Lease[] = [];

  /** A candidate's connection; while `view.partitioned` is true every call fails with 503. */
  view(): LeaseApi & { partitioned: boolean } {
    const store = this;
    const guard = (v: { partitioned: boolean }) => {
      if (v.partitioned) throw apiError(503, "connection refused");
    };
    const v = {
      partitioned: false,
      async get(name: string): Promise<Lease> {
        guard(v);
        if (store.lease === undefined || store.lease.metadata?.name !== name) throw apiError(404, "not found");
        return structuredClone(store.lease);
      },
      async create(obj: Lease): Promise<Lease> {
        guard(v);
        if (store.lease !== undefined) throw apiError(409, "already exists");
        return store.write(obj);
      },
      async update(obj: Lease): Promise<Lease> {
        guard(v);
        if (store.lease === undefined) throw apiError(404, "not found");
        if (obj.metadata?.resourceVersion !== store.lease.metadata?.resourceVersion) throw apiError(409, "conflict");
        return store.write(obj);
      },
    };
    return v;
  }

  private write(obj: Lease): Lease {
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.rv) };
    this.lease = stored;
    this.writes.push(structuredClone(stored));
    return structuredClone(stored);
  }
}
