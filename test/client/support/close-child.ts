/**
 * Child process for the close() test: uses a client (a GET and a watch left open), closes it, and then
 * must exit by itself. Any socket or timer left behind keeps it alive and the parent test fails.
 */
import { StaticCredentials } from "../../../packages/capstan/src/client/credentials.ts";
import { KubeClient } from "../../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind } from "./client.ts";

const client = new KubeClient(
  {
    server: process.env.TEST_SERVER_URL ?? "",
    tls: { ca: process.env.TEST_SERVER_CA ?? "", insecureSkipTLSVerify: false },
    credentials: new StaticCredentials({}),
    namespace: "ns1",
    source: "test",
  },
  { qps: 100, burst: 10 },
);
const cms = client.resource(ConfigMapKind, "ns1");
await cms.get("a");
const watch = await cms.watch({});
const it = watch[Symbol.asyncIterator]();
await it.next(); // the watch is live, its socket open
await client.close();
process.stdout.write("closed\n");
