/**
 * Every namespace has a ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA that signed the API
 * server's certificate, as kube-controller-manager's root CA publisher
 * (pkg/controller/certificates/rootcacertpublisher/publisher.go) keeps it. Pods and clients inside
 * the cluster read it to trust the API server.
 *
 * Expected flow: a namespace's creation, an update of an Active namespace (and, at start, every
 * existing namespace), and an update or deletion of a `kube-root-ca.crt` ConfigMap queue the
 * namespace. Handling it creates the ConfigMap when absent, or rewrites its data and description
 * annotation when someone changed them.
 *
 * Guarantees:
 * - the ConfigMap holds exactly `{ "ca.crt": <the devcluster's CA PEM> }` and the
 *   `kubernetes.io/description` annotation, other annotations and labels kept;
 * - a deleted one comes back; nothing is created in a Terminating or missing namespace.
 *
 * Caveats: creation is asynchronous, as in a real cluster.
 */
import { jsonEqual } from "../machinery/semantic-equal.ts";
import type { Change } from "../storage/storage.ts";
import { type Controller, type ControllerContext, isStatus, readObject, splitKey, watchAll } from "./cluster-view.ts";
import { LoopController } from "./reconcile-loop.ts";
import { isNamespaceTerminating } from "./service-accounts-controller.ts";

const NAMESPACES_BUCKET = "/namespaces";
const CONFIGMAPS_BUCKET = "/configmaps";
/** RootCACertConfigMapName. */
export const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";
const DESCRIPTION_ANNOTATION = "kubernetes.io/description";
/** The publisher's own description of the ConfigMap, word for word. */
const DESCRIPTION =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
  "No other usage is guaranteed across distributions of Kubernetes clusters.";
const CONFIGMAPS = { group: "", version: "v1", plural: "configmaps" };

interface ConfigMap {
  metadata: { annotations?: Record<string, string> } & Record<string, unknown>;
  data?: Record<string, string>;
  [key: string]: unknown;
}

export class RootCaPublisher extends LoopController implements Controller {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly caPem: string,
  ) {
    super("root-ca-cert-publisher");
  }

  start(): this {
    for (const stored of this.ctx.store.storage.list(NAMESPACES_BUCKET, "")) this.loop.add(stored.key);
    this.unsubscribe = watchAll(this.ctx.store, (change) => this.onChange(change));
    return this;
  }

  private onChange(change: Change): void {
    if (change.bucket === NAMESPACES_BUCKET) {
      // Additions always; updates only of Active namespaces (namespaceUpdated).
      if (change.type === "ADDED" || (change.type === "MODIFIED" && change.data.includes('"phase":"Active"'))) {
        this.loop.add(change.key);
      }
      return;
    }
    if (change.bucket === CONFIGMAPS_BUCKET && change.type !== "ADDED") {
      const { namespace, name } = splitKey(change.key);
      if (name === ROOT_CA_CONFIGMAP) this.loop.add(namespace);
    }
  }

  protected async handle(namespace: string): Promise<undefined> {
    const served = this.ctx.registry.get(CONFIGMAPS.group, CONFIGMAPS.version, CONFIGMAPS.plural);
    if (!served) return undefined;
    const data = { "ca.crt": this.caPem };
    const current = readObject(this.ctx.store, CONFIGMAPS_BUCKET, `${namespace}/${ROOT_CA_CONFIGMAP}`) as
      | ConfigMap
      | undefined;
    if (!current) {
      try {
        await this.ctx.store.create(served, namespace, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
          data,
        });
      } catch (err) {
        // Namespace missing or terminating: nothing to publish into (the real publisher does not retry).
        if (isStatus(err, 404) || isNamespaceTerminating(err)) return undefined;
        throw err;
      }
      return undefined;
    }
    if (jsonEqual(current.data ?? {}, data) && (current.metadata.annotations?.[DESCRIPTION_ANNOTATION] ?? "") !== "") {
      return undefined;
    }
    const next: ConfigMap = {
      ...current,
      metadata: {
        ...current.metadata,
        annotations: { ...current.metadata.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION },
      },
      data,
    };
    // The resourceVersion read is a precondition: a conflict is retried with backoff by the loop.
    await this.ctx.store.update(served, namespace, ROOT_CA_CONFIGMAP, next);
    return undefined;
  }
}
