/**
 * What the cluster's API server serves, asked of its discovery documents (`/api/v1`,
 * `/apis/{group}/{version}`) as kubectl asks them: a test of a kind that only some Kubernetes versions
 * serve (ValidatingAdmissionPolicy in `admissionregistration.k8s.io/v1` from 1.30, SelfSubjectReview
 * in `authentication.k8s.io/v1` from 1.28, an alpha API behind a feature gate) asks before it uses
 * it, and skips with a reason naming the API, the backend and the server's version.
 *
 * ## Guarantees
 * - A group-version the server does not serve (404) serves nothing; any other failure of the
 *   discovery request rejects (a test must not skip because the server was briefly unreachable).
 * - A group-version's document that lists the resource asked for is kept for the cluster's life (a
 *   served API does not go away while a test runs); one that does not, or a 404, is asked again next
 *   time (a CRD registered meanwhile adds its resource).
 */
import { isNotFound, type KubeClient } from "capstan";
import type { TestBackendName } from "./backend-selection.ts";

interface ResourceList {
  resources?: { name: string }[];
}

/** Discovery of one cluster, cached per group-version. */
export class ServedApis {
  readonly #client: KubeClient;
  readonly #backend: TestBackendName;
  readonly #lists = new Map<string, Promise<readonly string[]>>();
  #version: Promise<string> | undefined;

  constructor(client: KubeClient, backend: TestBackendName) {
    this.#client = client;
    this.#backend = backend;
  }

  /** Whether the server serves `resource` (a plural, or `plural/subresource`) in `groupVersion` (`"v1"` for core). */
  async serves(groupVersion: string, resource: string): Promise<boolean> {
    const served = (await this.#resources(groupVersion)).includes(resource);
    // Asked again next time: a CRD registered meanwhile adds a resource to its group-version.
    if (!served) this.#lists.delete(groupVersion);
    return served;
  }

  /** Why a test that needs `resource` of `groupVersion` cannot run on this cluster; `undefined` when served. */
  async missing(groupVersion: string, resource: string): Promise<string | undefined> {
    if (await this.serves(groupVersion, resource)) return undefined;
    const version = await this.version();
    return (
      `needs the API ${resource} in ${groupVersion}, which the ${this.#backend} backend lacks: ` +
      `its API server (Kubernetes ${version}) does not serve it`
    );
  }

  /** The server's `gitVersion` from `/version` (`v1.26.9`). */
  version(): Promise<string> {
    this.#version ??= this.#client
      .request<{ gitVersion?: string }>("GET", "/version")
      .then((v) => v.gitVersion ?? "of an unknown version");
    return this.#version;
  }

  #resources(groupVersion: string): Promise<readonly string[]> {
    const cached = this.#lists.get(groupVersion);
    if (cached !== undefined) return cached;
    const path = groupVersion.includes("/") ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
    const read = this.#client.request<ResourceList>("GET", path).then(
      (list) => (list.resources ?? []).map((r) => r.name),
      (err: unknown) => {
        this.#lists.delete(groupVersion);
        if (isNotFound(err)) return [];
        throw err;
      },
    );
    this.#lists.set(groupVersion, read);
    return read;
  }
}
