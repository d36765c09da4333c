/**
 * The kubeconfig backend's record of what a run created on a shared cluster, so that `stop()`
 * deletes exactly that: the namespaces and the cluster-scoped objects (CRDs, ClusterRoles and
 * bindings, webhook configurations, ...) that a POST through one of the run's clients created.
 *
 * ## Guarantees
 * - An object is recorded only when this run's POST created it (the answer carries its uid): one
 *   that already existed (the POST got 409 AlreadyExists) is never recorded, so never deleted.
 * - What is recorded is labelled with the run's labels on its way to the server (`run-labels.ts`),
 *   so a crashed run's leftovers can be found and swept by a later run.
 *
 * ## Caveats
 * - Only POSTs through the run's clients are seen. What `kubectl` or a child process creates, or a
 *   server-side apply that happens to create, is not recorded (generatedRbac records its own
 *   manifests: see `recordIfAbsent`). Namespaced objects are not recorded: they go with their
 *   namespace, or stay when the test wrote them into a namespace it did not create (`default`).
 */
import type { KubeObject } from "capstan";
import { isNotFound, KubeClient } from "capstan";
import type { ClientConfig } from "capstan/client";
import type { RunLabels } from "./run-labels.ts";

/** One created object: the path that reads or deletes it, and a name for messages. */
export interface CreatedObject {
  readonly path: string;
  readonly description: string;
  readonly namespace: boolean;
}

/** Creates of these are requests, not objects (TokenReview, SubjectAccessReview, ...): nothing to delete. */
const NOT_PERSISTED = /reviews$/;

/**
 * The collection path of a cluster-scoped POST (`/api/v1/namespaces`,
 * `/apis/rbac.authorization.k8s.io/v1/clusterroles`), or `undefined` for a namespaced one.
 */
export function clusterScopedCollection(path: string): string | undefined {
  const bare = path.split("?")[0] ?? path;
  const match = /^\/api\/v1\/([a-z0-9]+)$/.exec(bare) ?? /^\/apis\/[^/]+\/[^/]+\/([a-z0-9.-]+)$/.exec(bare);
  if (match === null || NOT_PERSISTED.test(match[1] ?? "")) return undefined;
  return bare;
}

/** The objects one run created, in creation order. */
export class CreatedObjects {
  readonly #objects = new Map<string, CreatedObject>();

  /** Records the object at `collection/name` (idempotent). */
  add(collection: string, name: string): void {
    const path = `${collection}/${name}`;
    const plural = collection.slice(collection.lastIndexOf("/") + 1);
    this.#objects.set(path, {
      path,
      description: `${plural}/${name}`,
      namespace: collection === "/api/v1/namespaces",
    });
  }

  /** Whether `collection/name` is recorded. */
  has(collection: string, name: string): boolean {
    return this.#objects.has(`${collection}/${name}`);
  }

  /** What is recorded now. */
  list(): CreatedObject[] {
    return [...this.#objects.values()];
  }

  /**
   * Records `collection/name` when it does not exist yet: for objects another program (kubectl) is
   * about to create on this run's behalf. Resolves whether it recorded it.
   */
  async recordIfAbsent(client: KubeClient, collection: string, name: string): Promise<boolean> {
    try {
      await client.request("GET", `${collection}/${name}`);
      return false;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.add(collection, name);
      return true;
    }
  }
}

/**
 * A client that labels the cluster-scoped objects it creates with the run's labels and records
 * them in `created`. Everything else passes through unchanged.
 */
export class RecordingClient extends KubeClient {
  readonly #run: RunLabels;
  readonly #created: CreatedObjects;

  constructor(config: ClientConfig, run: RunLabels, created: CreatedObjects) {
    super(config);
    this.#run = run;
    this.#created = created;
  }

  override async request<R>(method: string, path: string, opts: Parameters<KubeClient["request"]>[2] = {}): Promise<R> {
    const collection = method === "POST" ? clusterScopedCollection(path) : undefined;
    if (collection === undefined) return super.request<R>(method, path, opts);
    const created = await super.request<R>(method, path, { ...opts, body: labelled(opts.body, this.#run.labels) });
    const metadata = (created as KubeObject | undefined)?.metadata;
    if (metadata?.name !== undefined && metadata.uid !== undefined) this.#created.add(collection, metadata.name);
    return created;
  }
}

/** `body` with `labels` added to its metadata; a body that is not an object (a string) is sent as is. */
function labelled(body: unknown, labels: Readonly<Record<string, string>>): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const obj = body as KubeObject;
  return { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata?.labels, ...labels } } };
}
