/**
 * What every namespace of a real cluster holds without anyone asking: the `default` ServiceAccount
 * (service-accounts-controller.ts) and the `kube-root-ca.crt` ConfigMap (root-ca-publisher.ts). Both
 * controllers run as one server plugin, because the publisher needs the server's CA, which the
 * other built-in controllers do not get.
 */
import type { ControllerContext } from "./cluster-view.ts";
import { RootCaPublisher } from "./root-ca-publisher.ts";
import { ServiceAccountsController } from "./service-accounts-controller.ts";

/** A plugin starting both controllers; its stop function stops them and waits for work in flight. */
export function namespaceDefaultsPlugin(caPem: string): (ctx: ControllerContext) => () => Promise<void> {
  return (ctx) => {
    const controllers = [new ServiceAccountsController(ctx).start(), new RootCaPublisher(ctx, caPem).start()];
    return async () => {
      await Promise.all(controllers.map((c) => c.stop()));
    };
  };
}
