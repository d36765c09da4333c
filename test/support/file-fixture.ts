/**
 * One started thing (a test cluster, a cluster with a raw HTTP client) for every test of a file,
 * as controller-runtime's suites start envtest in `BeforeSuite`: started in `beforeAll`, stopped in
 * `afterAll`, so a file states its fixture in one line instead of repeating the hooks.
 *
 * ```ts
 * const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));
 * it("...", async () => { await cluster.client.resource(Machine, "default").create(...); });
 * ```
 *
 * Caveats: the returned value stands for the started one (property reads go through to it), so it
 * can be read only inside tests and hooks that run after the file's `beforeAll`; reading it earlier
 * (at module level, in a `describe` body) throws saying so.
 */
import { afterAll, beforeAll } from "vitest";

export function fileFixture<T extends { stop(): Promise<void> }>(start: () => Promise<T>): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    await started?.stop();
  });
  return new Proxy({} as T, {
    get(_, key) {
      if (started === undefined) throw new Error("the file's fixture is started in beforeAll: read it inside tests");
      return Reflect.get(started, key);
    },
  });
}
