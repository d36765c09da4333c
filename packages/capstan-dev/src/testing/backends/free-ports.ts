/**
 * Free TCP ports on the loopback interface for the control plane's listeners, found as
 * controller-runtime's envtest finds them (pkg/internal/testing/addr): the system hands out a free
 * port to a listener on port 0, which is closed again before the process that will use the port
 * starts.
 *
 * ## Caveats
 * - Between the close and the child's own listen another process may take the port; the child then
 *   fails to listen and exits early, which the control plane reports with its last log lines.
 */
import { createServer, type Server } from "node:net";

/** The address every control-plane process listens on: the tests reach it, nothing else does. */
export const LOOPBACK = "127.0.0.1";

/**
 * `count` distinct free ports. All the listeners are open at once, so the system cannot hand out the
 * same port twice within one call.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, LOOPBACK, () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === "string") throw new Error("a TCP listener has no port");
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(
      servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))),
    );
  }
}
