/**
 * The kubeconfig backend's record of what a run created on a shared cluster, so that `stop()`
 * deletes exactly that: the namespaces, the cluster-scoped objects (CRDs, ClusterRoles and
 * bindings, webhook configurations, ...) and the objects in namespaces the run does not own
 * (`default`) that a POST through one of the run's clients, or a `cluster.kubectl` command
 * (`kubectl-creations.ts`), created.
 *
 * ## Guarantees
 * - An object is recorded only when this run created it (the POST's answer carries its uid, or
 *   kubectl's request got 201): one that already existed (409 AlreadyExists, `configured`) is never
 *   recorded, so never deleted.
 * - Namespaces and cluster-scoped objects the run's clients create are labelled with the run's
 *   labels on their way to the server (`run-labels.ts`), so a crashed run's leftovers can be found
 *   and swept by a later run; a CRD also gets the run's user label (`crd-users.ts`).
 * - Objects in the run's own namespace, or in one it created, are not recorded one by one: they go
 *   with their namespace.
 *
 * ## Caveats
 * - A server-side apply through a client that happens to create is not recorded; nor is what a
 *   child process other than kubectl creates (generatedRbac records its own manifests: see
 *   `recordIfAbsent`).
 * - Namespaced objects outside the run's namespaces are not labelled (the test may compare their
 *   labels): a crashed run leaves them, the sweep does not find them.
 */
import type { KubeObject } from "capstan";
import { isNotFound, KubeClient } from "capstan";
import type { ClientConfig } from "capstan/client";
import { crdUserLabels } from "./crd-users.ts";
import { parseApiPath } from "./kubectl-creations.ts";
import type { RunLabels } from "./run-labels.ts";

/** One created object: the path that reads or deletes it, and a name for messages. */
export interface CreatedObject {
  readonly path: string;
  readonly description: string;
  /** Whether it is a namespace. */
  readonly namespace: boolean;
  /** Whether it is a CustomResourceDefinition: released through `crd-users.ts`, not deleted outright. */
  readonly crd: boolean;
  /** When set, the object is gone once its path answers 404 or holds another uid. */
  readonly uid?: string;
}

/** Creates of these are requests, not objects (TokenReview, SubjectAccessReview, ...): nothing to delete. */
const NOT_PERSISTED = /reviews$/;

const NAMESPACES = "/api/v1/namespaces";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/**
 * The collection path of a cluster-scoped POST (`/api/v1/namespaces`,
 * `/apis/rbac.authorization.k8s.io/v1/clusterroles`), or `undefined` for a namespaced one.
 */
export function clusterScopedCollection(path: string): string | undefined {
  const parsed = parseApiPath(path.split("?")[0] ?? path);
  if (parsed === undefined || parsed.name !== undefined || parsed.namespace !== undefined) return undefined;
  return NOT_PERSISTED.test(parsed.plural) ? undefined : parsed.collection;
}

/** The collection path and namespace of a POST that creates a namespaced object, else `undefined`. */
function namespacedCollection(path: string): { collection: string; namespace: string } | undefined {
  const parsed = parseApiPath(path.split("?")[0] ?? path);
  if (parsed?.namespace === undefined || parsed.name !== undefined || NOT_PERSISTED.test(parsed.plural)) {
    return undefined;
  }
  return { collection: parsed.collection, namespace: parsed.namespace };
}

/** The objects one run created, in creation order. */
export class CreatedObjects {
  readonly #objects = new Map<string, CreatedObject>();
  /** The run's own namespace: what is in it goes with it. */
  readonly ownNamespace: string;

  constructor(ownNamespace: string) {
    this.ownNamespace = ownNamespace;
  }

  /** Records the object at `collection/name` (idempotent). */
  add(collection: string, name: string): void {
    const path = `${collection}/${name}`;
    const parsed = parseApiPath(path);
    const where = parsed?.namespace === undefined ? "" : `${parsed.namespace}/`;
    this.#objects.set(path, {
      path,
      description: `${parsed?.plural ?? collection}/${where}${name}`,
      namespace: collection === NAMESPACES,
      crd: collection === CRDS,
    });
  }

  /** Whether `collection/name` is recorded. */
  has(collection: string, name: string): boolean {
    return this.#objects.has(`${collection}/${name}`);
  }

  /** Whether objects in `namespace` go with a namespace the run deletes (its own, or one it created). */
  ownsNamespace(namespace: string): boolean {
    return namespace === this.ownNamespace || this.has(NAMESPACES, namespace);
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
    // A dry run creates nothing, though its answer carries a uid.
    if (method !== "POST" || opts.query?.dryRun !== undefined) return super.request<R>(method, path, opts);
    const collection = clusterScopedCollection(path);
    if (collection !== undefined) {
      const labels = collection === CRDS ? { ...this.#run.labels, ...crdUserLabels(this.#run) } : this.#run.labels;
      const created = await super.request<R>(method, path, { ...opts, body: labelled(opts.body, labels) });
      this.#record(collection, created);
      return created;
    }
    const namespaced = namespacedCollection(path);
    const created = await super.request<R>(method, path, opts);
    // In a namespace the run does not delete (`default`): recorded one by one, not labelled.
    if (namespaced !== undefined && !this.#created.ownsNamespace(namespaced.namespace)) {
      this.#record(namespaced.collection, created);
    }
    return created;
  }

  #record(collection: string, created: unknown): void {
    const metadata = (created as KubeObject | undefined)?.metadata;
    if (metadata?.name !== undefined && metadata.uid !== undefined) this.#created.add(collection, metadata.name);
  }
}

/** `body` with `labels` added to its metadata; a body that is not an object (a string) is sent as is. */
function labelled(body: unknown, labels: Readonly<Record<string, string>>): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const obj = body as KubeObject;
  return { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata?.labels, ...labels } } };
}
