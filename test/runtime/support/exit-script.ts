/**
 * Starts every runtime primitive with long timers pending (1 h resync, 1 h delayed key, 1 h watch
 * deadline, leader renewals), stops them all, and returns without process.exit: the process must
 * then exit by itself. Run by exit.test.ts in a child process.
 */
import { Informer } from "../../../packages/capstan/src/runtime/informer.ts";
import { LeaderElector } from "../../../packages/capstan/src/runtime/leader-election.ts";
import { SharedInformerFactory } from "../../../packages/capstan/src/runtime/shared-informers.ts";
import { WorkQueue } from "../../../packages/capstan/src/runtime/workqueue.ts";
import { FakeLeases } from "./fake-leases.ts";
import { FakeListerWatcher } from "./fake-lister-watcher.ts";

const stop = new AbortController();
const api = new FakeListerWatcher();
api.upsert("a");

const informer = new Informer({ listerWatcher: api, resyncPeriod: "1h" });
const queue = new WorkQueue<string>();
informer.addEventHandler({ onAdd: (o) => queue.add(o.metadata?.name ?? "") });
const factory = new SharedInformerFactory({ listerWatcherFor: () => new FakeListerWatcher() as never });
factory.informerFor({ group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true });
const leases = new FakeLeases();
let leading = false;
const elector = new LeaderElector({
  leases: leases.view(),
  namespace: "ns",
  name: "lock",
  identity: "me",
  leaseDuration: "1s",
  renewDeadline: 500,
  retryPeriod: 100,
  onStartedLeading: () => {
    leading = true;
  },
});

const runs = [informer.run(stop.signal), factory.start(stop.signal), elector.run(stop.signal)];
await informer.waitForSync();
await factory.waitForCacheSync();
queue.addAfter("later", "1h");
const key = await queue.get();
while (!leading) await new Promise((r) => setTimeout(r, 10));

stop.abort();
queue.done(key as string);
await queue.shutDownWithDrain();
await Promise.all(runs);
process.stdout.write("stopped\n");
