/**
 * RBAC from what an operator did: the requests an API server authorized (or denied) for the
 * operator's user, turned into the rules actually used, and compared with the rules generated
 * from what the operator declares. Plain JSON in and out, so the report a test run writes
 * (capstan-dev's embedded server records it) is read by `capstan generate rbac --observed`
 * without importing anything of the development package.
 *
 * ## Expected flow
 * A test runs the operator under its generated RBAC on a server that records (capstan-dev's
 * `cluster.observedAccess(user)`, or `cluster.writeRbacReport(path)`); {@link observedRules}
 * aggregates the requests as RBAC rules; {@link compareRbac} sorts the generated grants into used and
 * never used and lists the requests no generated rule allows; {@link leastPrivilegeNeeds} keeps only
 * the declared needs that were used (plus the missing ones), for `rbacManifests`.
 *
 * ## Guarantees
 * - Matching is RBAC's: a verb, group or resource `*` matches anything, `<resource>/<sub>` only that
 *   subresource, `*\/<sub>` that subresource of any resource, `resourceNames` only requests naming
 *   one of them, and a non-resource URL rule its exact path or a `prefix*`.
 * - A denied request that a generated rule allows counts as a use of that rule: the operator made the
 *   request, so it needs the grant (a test that took the grant away to see the 403 denied it).
 *
 * ## Caveats
 * What a run did not exercise is reported unused: a grant for a path the tests never took (an update
 * of a CRD that exists already, a repeated Event's patch) is needed all the same. Read "unused" as
 * "explain or remove", not "remove".
 */
import { deriveRules, type KindRef, type PermissionNeed, type PolicyRule, VERBS, type Verb } from "./rbac.ts";

/** One distinct request on a resource, as the authorizer saw it. */
export interface ObservedResourceRequest {
  verb: string;
  apiGroup: string;
  resource: string;
  /** `""` for the resource itself. */
  subresource: string;
  /** `""` for a cluster-scoped request (a cluster-scoped kind, or a list or watch across all namespaces). */
  namespace: string;
  /** `""` when the request names no object (create, list, watch, deletecollection). */
  name: string;
}

/** One distinct request on a non-resource URL (`/healthz`, `/metrics`, discovery). */
export interface ObservedUrlRequest {
  verb: string;
  nonResourceURL: string;
}

/** A distinct request: on a resource or on a non-resource URL. */
export type ObservedRequest = ObservedResourceRequest | ObservedUrlRequest;

/** Whether the request is on a non-resource URL. */
export function isUrlRequest(request: ObservedRequest): request is ObservedUrlRequest {
  return "nonResourceURL" in request;
}

/** What one user did: the distinct requests the server allowed, and those it denied. */
export interface ObservedAccess {
  user: string;
  allowed: ObservedRequest[];
  denied: ObservedRequest[];
}

/** The file a test run writes and `capstan generate rbac --observed` reads. */
export interface ObservedAccessReport {
  kind: typeof OBSERVED_ACCESS_REPORT_KIND;
  users: ObservedAccess[];
}

/** The `kind` of an {@link ObservedAccessReport}, which tells it apart from any other JSON. */
export const OBSERVED_ACCESS_REPORT_KIND = "CapstanObservedAccess";

/** The rules a set of requests used: cluster-scope requests, and per namespace those made in it. */
export interface ObservedRules {
  /** Requests without a namespace (cluster-scoped kinds, lists and watches across namespaces, URLs). */
  cluster: PolicyRule[];
  /** Requests in a namespace, one entry per namespace, sorted by namespace. */
  namespaced: { namespace: string; rules: PolicyRule[] }[];
}

/**
 * The requests as RBAC rules: one rule per API group and verb set, resources sorted, verbs in the
 * order of {@link VERBS}, no resourceNames (the names a test used are not the names production uses).
 */
export function observedRules(requests: readonly ObservedRequest[]): ObservedRules {
  const cluster: PermissionNeed[] = [];
  const urls = new Map<string, Set<string>>();
  const byNamespace = new Map<string, PermissionNeed[]>();
  for (const request of requests) {
    if (isUrlRequest(request)) {
      const verbs = urls.get(request.nonResourceURL) ?? new Set();
      verbs.add(request.verb);
      urls.set(request.nonResourceURL, verbs);
      continue;
    }
    const need = needOf(request);
    if (request.namespace === "") cluster.push(need);
    else byNamespace.set(request.namespace, [...(byNamespace.get(request.namespace) ?? []), need]);
  }
  const urlRules = new Map<string, string[]>();
  for (const [url, verbs] of urls) {
    const key = sortVerbs(verbs).join(",");
    urlRules.set(key, [...(urlRules.get(key) ?? []), url]);
  }
  return {
    cluster: [
      ...deriveRules(cluster),
      ...[...urlRules].map(([verbs, paths]) => ({ nonResourceURLs: paths.sort(), verbs: verbs.split(",") })),
    ],
    namespaced: [...byNamespace]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([namespace, needs]) => ({ namespace, rules: deriveRules(needs) })),
  };
}

/** One verb on one resource (or URL) that a rule grants. */
export type Grant =
  | { verb: string; apiGroup: string; resource: string; resourceNames?: string[] }
  | { verb: string; nonResourceURL: string };

/** What {@link compareRbac} found. */
export interface RbacComparison {
  /** Generated grants some request used (or needed: requests denied though a generated rule allows them). */
  used: Grant[];
  /** Generated grants no request used. */
  unused: Grant[];
  /** Requests no generated rule allows: grants the generator is missing. */
  missing: ObservedRequest[];
  /**
   * Requests no generated rule allows that every authenticated user may make on any cluster
   * ({@link EVERYONE_RULES}: discovery, health checks, self-reviews): not missing.
   */
  everyone: ObservedRequest[];
}

/**
 * What the bootstrap policy of every Kubernetes cluster grants each authenticated user:
 * `system:discovery` and `system:public-info-viewer` (discovery, OpenAPI, health, version) and
 * `system:basic-user` (the self-reviews of `kubectl auth can-i` and `whoami`).
 */
export const EVERYONE_RULES: readonly PolicyRule[] = [
  {
    verbs: ["get"],
    nonResourceURLs: [
      "/api",
      "/api/*",
      "/apis",
      "/apis/*",
      "/healthz",
      "/livez",
      "/openapi",
      "/openapi/*",
      "/readyz",
      "/version",
      "/version/",
    ],
  },
  {
    verbs: ["create"],
    apiGroups: ["authorization.k8s.io"],
    resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
  },
  { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] },
];

/** Sorts the grants of `generated` into used and unused by `access`, and lists the requests none allows. */
export function compareRbac(
  generated: readonly PolicyRule[],
  access: Pick<ObservedAccess, "allowed" | "denied">,
): RbacComparison {
  const grants = dedupe(generated.flatMap(grantsOf));
  const requests = [...access.allowed, ...access.denied];
  const used = grants.filter((g) => requests.some((r) => grantAllows(g, r)));
  const everyone = EVERYONE_RULES.flatMap(grantsOf);
  const uncovered = dedupe(requests.filter((r) => !grants.some((g) => grantAllows(g, r))));
  const isPublic = (r: ObservedRequest) => everyone.some((g) => grantAllows(g, r));
  return {
    used,
    unused: grants.filter((g) => !used.includes(g)),
    missing: uncovered.filter((r) => !isPublic(r)),
    everyone: uncovered.filter(isPublic),
  };
}

/**
 * The declared needs cut down to what `access` used, plus one need per request none of them allows:
 * for `rbacManifests`, which then gives the operator exactly the observed privileges in the shape of
 * its generated RBAC (ClusterRole, or Roles with `--watch-namespace`). Non-resource requests are left
 * out: an operator's RBAC grants none.
 */
export function leastPrivilegeNeeds(
  declared: readonly PermissionNeed[],
  access: Pick<ObservedAccess, "allowed" | "denied">,
): PermissionNeed[] {
  const requests = [...access.allowed, ...access.denied].filter((r) => !isUrlRequest(r));
  const out: PermissionNeed[] = [];
  for (const need of declared) {
    const resources =
      need.subresources === undefined || need.subresources.length === 0
        ? [need.kind.plural]
        : need.subresources.map((s) => `${need.kind.plural}/${s}`);
    for (const resource of resources) {
      const verbs = need.verbs.filter((verb) =>
        requests.some((r) =>
          grantAllows(
            {
              verb,
              apiGroup: need.kind.group,
              resource,
              ...(need.resourceNames?.length ? { resourceNames: [...need.resourceNames] } : {}),
            },
            r,
          ),
        ),
      );
      if (verbs.length === 0) continue;
      const sub = resource.split("/")[1];
      out.push({ ...need, verbs, ...(sub === undefined ? {} : { subresources: [sub] }) });
    }
  }
  const grants = [...out.flatMap((n) => deriveRules([n])), ...EVERYONE_RULES].flatMap(grantsOf);
  for (const request of requests) {
    if (isUrlRequest(request) || grants.some((g) => grantAllows(g, request))) continue;
    out.push(needOf(request));
  }
  return out;
}

/** Whether `grant` allows `request`, as RBAC's rule matching decides. */
export function grantAllows(grant: Grant, request: ObservedRequest): boolean {
  if (grant.verb !== "*" && grant.verb !== request.verb) return false;
  if ("nonResourceURL" in grant || isUrlRequest(request)) {
    if (!("nonResourceURL" in grant) || !isUrlRequest(request)) return false;
    const url = grant.nonResourceURL;
    return url === request.nonResourceURL || (url.endsWith("*") && request.nonResourceURL.startsWith(url.slice(0, -1)));
  }
  if (grant.apiGroup !== "*" && grant.apiGroup !== request.apiGroup) return false;
  const combined = request.subresource === "" ? request.resource : `${request.resource}/${request.subresource}`;
  const resourceMatches =
    grant.resource === "*" ||
    grant.resource === combined ||
    (request.subresource !== "" && grant.resource === `*/${request.subresource}`);
  if (!resourceMatches) return false;
  return grant.resourceNames === undefined || grant.resourceNames.includes(request.name);
}

/** Each verb on each resource (or URL) of a rule. */
export function grantsOf(rule: PolicyRule): Grant[] {
  const out: Grant[] = [];
  for (const verb of rule.verbs) {
    for (const url of rule.nonResourceURLs ?? []) out.push({ verb, nonResourceURL: url });
    for (const apiGroup of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        out.push({
          verb,
          apiGroup,
          resource,
          ...(rule.resourceNames?.length ? { resourceNames: [...rule.resourceNames] } : {}),
        });
      }
    }
  }
  return out;
}

/** `list,watch exchangerates.example.com`, `get,update customresourcedefinitions.apiextensions.k8s.io [a.example.com]`. */
export function describeGrants(grants: readonly Grant[]): string[] {
  const byTarget = new Map<string, Set<string>>();
  for (const g of grants) {
    const target =
      "nonResourceURL" in g
        ? g.nonResourceURL
        : `${g.apiGroup === "" ? g.resource : `${g.resource}.${g.apiGroup}`}${g.resourceNames ? ` [${g.resourceNames.join(", ")}]` : ""}`;
    byTarget.set(target, (byTarget.get(target) ?? new Set()).add(g.verb));
  }
  return [...byTarget].map(([target, verbs]) => `${sortVerbs(verbs).join(",")} ${target}`);
}

/** `create configmaps in ns`, `list exchangerates.example.com at the cluster scope`, `get /metrics`. */
export function describeRequest(request: ObservedRequest): string {
  if (isUrlRequest(request)) return `${request.verb} ${request.nonResourceURL}`;
  const resource = request.subresource === "" ? request.resource : `${request.resource}/${request.subresource}`;
  const qualified = request.apiGroup === "" ? resource : `${resource}.${request.apiGroup}`;
  const named = request.name === "" ? qualified : `${qualified} "${request.name}"`;
  return `${request.verb} ${named} ${request.namespace === "" ? "at the cluster scope" : `in ${request.namespace}`}`;
}

function needOf(request: ObservedResourceRequest): PermissionNeed {
  // The request's own scope is all it tells: a cluster-scope list of a namespaced kind needs a ClusterRole too.
  const kind: KindRef = { group: request.apiGroup, plural: request.resource, namespaced: request.namespace !== "" };
  return {
    kind,
    verbs: [knownVerb(request.verb)],
    ...(request.subresource === "" ? {} : { subresources: [request.subresource] }),
  };
}

function knownVerb(verb: string): Verb {
  if ((VERBS as readonly string[]).includes(verb)) return verb as Verb;
  throw new Error(`observed request with verb "${verb}", which RBAC does not know`);
}

function sortVerbs(verbs: Iterable<string>): string[] {
  const rank = (v: string) => {
    const i = (VERBS as readonly string[]).indexOf(v);
    return i < 0 ? VERBS.length : i;
  };
  return [...verbs].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function dedupe<T>(items: readonly T[]): T[] {
  const seen = new Map<string, T>();
  for (const item of items) {
    const key = JSON.stringify(item);
    if (!seen.has(key)) seen.set(key, item);
  }
  return [...seen.values()];
}
