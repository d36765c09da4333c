/**
 * Discovery: what the API server serves, read from `/api`, `/apis` and the per-group-version resource
 * lists (`/api/v1`, `/apis/{group}/{version}`), the aggregated-discovery-free way every server supports.
 */

/** The one client method discovery needs (KubeClient has it). */
export interface DiscoveryTransport {
  request<R>(method: string, path: string, opts?: { signal?: AbortSignal }): Promise<R>;
}

/** One resource of a group-version, as `APIResourceList.resources[]` describes it. */
export interface ApiResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

interface ApiResourceList {
  groupVersion: string;
  resources: ApiResource[];
}

interface ApiGroupList {
  groups: {
    name: string;
    versions: { groupVersion: string; version: string }[];
    preferredVersion?: { groupVersion: string };
  }[];
}

/** Reads discovery documents. No caching here: the REST mapper decides what to keep. */
export class Discovery {
  readonly #client: DiscoveryTransport;
  constructor(client: DiscoveryTransport) {
    this.#client = client;
  }

  /** Every served group-version, core `v1` first, then each group's versions (preferred first). */
  async groupVersions(signal?: AbortSignal): Promise<string[]> {
    const core = await this.#client.request<{ versions: string[] }>("GET", "/api", { signal });
    const groups = await this.#client.request<ApiGroupList>("GET", "/apis", { signal });
    const out = [...(core.versions ?? [])];
    for (const g of groups.groups ?? []) {
      const preferred = g.preferredVersion?.groupVersion;
      if (preferred) out.push(preferred);
      for (const v of g.versions ?? []) if (v.groupVersion !== preferred) out.push(v.groupVersion);
    }
    return out;
  }

  /** The top-level resources (subresources such as `pods/status` left out) of one group-version. */
  async resources(groupVersion: string, signal?: AbortSignal): Promise<ApiResource[]> {
    const path = groupVersion.includes("/") ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
    const list = await this.#client.request<ApiResourceList>("GET", path, { signal });
    return (list.resources ?? []).filter((r) => !r.name.includes("/"));
  }
}
