/**
 * What a `cluster.kubectl([...])` command created on a shared cluster, so the kubeconfig backend
 * can delete it at `stop()`: kubectl is another program, its requests do not go through the run's
 * recording client (`created-objects.ts`).
 *
 * ## Expected flow
 * 1. {@link trackingKubectl} runs the commands that create (`apply`, `create`, `run`, `expose`,
 *    `replace`) with `--v=6`: kubectl then logs each request it sends, with the answer's status, on
 *    stderr (`POST https://.../api/v1/namespaces/default/configmaps?... 201 Created in 4 milliseconds`).
 * 2. {@link kubectlCreations} reads that log: a POST answered 201 created an object in the
 *    collection it names; a server-side apply PATCH answered 201 created the object it names.
 *    A POST's object name is not in its URL: it is the name of the GET answered 404 just before (what
 *    `kubectl apply` does for each object), else of the next `<type>/<name> created|exposed` line,
 *    or `-o name` line, of the same type on stdout, in order.
 * 3. The log lines are removed from stderr before the test sees the result: it reads as without `--v`.
 *
 * ## Guarantees
 * - Only 201s are creations: an object that existed (`configured`, `unchanged`, a 409 of `create`)
 *   is never reported, nor a server dry run (`dryRun` in the query).
 * - Requests that are not objects (TokenReview, SubjectAccessReview, a ServiceAccount's token, an
 *   eviction: a `*reviews` resource or a subresource) are ignored.
 * - A command the test already gave `-v`/`--v` keeps its own verbosity and its whole stderr.
 *
 * ## Caveats
 * - A POST whose name cannot be found (`-o yaml` output of a `kubectl create` without a preceding
 *   GET) is not reported: `stop()` does not delete it.
 * - Commands other than those above (`kubectl auth reconcile`, plugins) are run as given, untracked.
 */
import type { CommandRunner, KubectlResult } from "../kubectl.ts";

/** One object a kubectl command created: its collection path and name. */
export interface KubectlCreation {
  /** `/api/v1/namespaces`, `/apis/apps/v1/namespaces/default/deployments`, ... */
  readonly collection: string;
  readonly name: string;
  /** Its namespace, for a namespaced object. */
  readonly namespace?: string;
}

/** What the backend learns from one tracked command. */
export interface KubectlOutcome {
  readonly creations: readonly KubectlCreation[];
  /** CRDs the command applied that existed already (`configured`, `unchanged`): the run uses them too. */
  readonly appliedCrds: readonly string[];
}

/** The kubectl subcommands that create objects, and are run with `--v=6`. */
const CREATING_COMMANDS: ReadonlySet<string> = new Set(["apply", "create", "run", "expose", "replace"]);

/**
 * The verbosity at which kubectl logs each request's method, URL and answer's status (and no
 * bodies, which `--v=8` would add).
 */
const REQUEST_LOG_VERBOSITY = "--v=6";

/** A klog line at info level (`I1127 13:48:03.100444   21606 loader.go:402] ...`): what `--v` adds. */
const INFO_LINE = /^I\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [^\]]+\] /;
/** kubectl up to 1.32: `round_trippers.go:560] POST https://... 201 Created in 4 milliseconds`. */
const REQUEST_LINE = /\] (GET|POST|PUT|PATCH|DELETE) (https?:\/\/\S+) (\d{3})\b/;
/** Later kubectl (structured logging): `"Response" verb="POST" url="https://..." status="201 Created"`. */
const STRUCTURED_REQUEST_LINE = /"Response" verb="(\w+)" url="([^"]+)" status="(\d{3})/;
/** `configmap/usd created`, `deployment.apps/web created`, `service/web exposed`, `-o name`'s `configmap/usd`. */
const CREATED_LINE = /^([a-z0-9.-]+)\/(\S+?)(?: (created|exposed))?$/;
const APPLIED_CRD_LINE =
  /^customresourcedefinition\.apiextensions\.k8s\.io\/(\S+) (configured|unchanged|serverside-applied)$/;

interface LoggedRequest {
  verb: string;
  path: string;
  query: URLSearchParams;
  status: number;
}

interface ParsedPath {
  /** API group, `""` for the core group. */
  group: string;
  plural: string;
  namespace?: string;
  /** Set for an object's path, absent for a collection's. */
  name?: string;
  collection: string;
}

/** The group, resource, namespace and name an API path names; `undefined` for a subresource or a non-resource path. */
export function parseApiPath(path: string): ParsedPath | undefined {
  const segments = path.split("/").filter((s) => s !== "");
  let prefix: string[];
  let group: string;
  if (segments[0] === "api" && segments.length >= 3) {
    prefix = segments.slice(0, 2);
    group = "";
  } else if (segments[0] === "apis" && segments.length >= 4) {
    prefix = segments.slice(0, 3);
    group = segments[1] ?? "";
  } else {
    return undefined;
  }
  const rest = segments.slice(prefix.length);
  const base = `/${prefix.join("/")}`;
  if (rest[0] === "namespaces" && (rest.length === 3 || rest.length === 4)) {
    const [, namespace, plural, name] = rest as [string, string, string, string | undefined];
    const collection = `${base}/namespaces/${namespace}/${plural}`;
    return { group, plural, namespace, collection, ...(name === undefined ? {} : { name }) };
  }
  if (rest.length === 1 || rest.length === 2) {
    const [plural, name] = rest as [string, string | undefined];
    return { group, plural, collection: `${base}/${plural}`, ...(name === undefined ? {} : { name }) };
  }
  return undefined;
}

/** The requests kubectl logged at `--v=6`, in order. */
function loggedRequests(stderr: string): LoggedRequest[] {
  const out: LoggedRequest[] = [];
  for (const line of stderr.split("\n")) {
    const m = REQUEST_LINE.exec(line) ?? STRUCTURED_REQUEST_LINE.exec(line);
    if (m === null) continue;
    const url = new URL(m[2] ?? "");
    out.push({ verb: m[1] ?? "", path: url.pathname, query: url.searchParams, status: Number(m[3]) });
  }
  return out;
}

/** Whether `type` (`configmap`, `deployment.apps`) names the resource `plural` of `group`. */
function sameResource(type: string, group: string, plural: string): boolean {
  const dot = type.indexOf(".");
  const singular = dot < 0 ? type : type.slice(0, dot);
  if ((dot < 0 ? "" : type.slice(dot + 1)) !== group) return false;
  return (
    plural === singular ||
    plural === `${singular}s` ||
    plural === `${singular}es` ||
    (singular.endsWith("y") && plural === `${singular.slice(0, -1)}ies`)
  );
}

/** What a command's request log and stdout say it created; see the module documentation. */
export function kubectlCreations(stdout: string, stderr: string): KubectlOutcome {
  const requests = loggedRequests(stderr);
  const printed = stdout
    .split("\n")
    .map((l) => CREATED_LINE.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ type: m[1] ?? "", name: m[2] ?? "", used: false }));
  const creations: KubectlCreation[] = [];
  requests.forEach((req, i) => {
    if (req.status !== 201 || req.query.has("dryRun")) return;
    const parsed = parseApiPath(req.path);
    if (parsed === undefined || parsed.plural.endsWith("reviews")) return;
    const ns = parsed.namespace === undefined ? {} : { namespace: parsed.namespace };
    if (req.verb === "PATCH" && parsed.name !== undefined) {
      creations.push({ collection: parsed.collection, name: parsed.name, ...ns });
      return;
    }
    if (req.verb !== "POST" || parsed.name !== undefined) return;
    const before = i > 0 ? requests[i - 1] : undefined;
    const looked = before?.verb === "GET" && before.status === 404 ? parseApiPath(before.path) : undefined;
    let name = looked?.collection === parsed.collection ? looked.name : undefined;
    const line = printed.find((p) => !p.used && sameResource(p.type, parsed.group, parsed.plural));
    if (line !== undefined && (name === undefined || line.name === name)) {
      line.used = true;
      name ??= line.name;
    }
    if (name !== undefined) creations.push({ collection: parsed.collection, name, ...ns });
  });
  const appliedCrds = stdout
    .split("\n")
    .map((l) => APPLIED_CRD_LINE.exec(l.trim())?.[1])
    .filter((n): n is string => n !== undefined);
  return { creations, appliedCrds };
}

/** The first argument that is not a flag: kubectl's subcommand. */
function subcommand(args: readonly string[]): string | undefined {
  return args.find((a) => !a.startsWith("-"));
}

/**
 * `runner` with the creating commands tracked: each is run with `--v=6` (unless the test gave a
 * verbosity), `onCreated` gets what it created before the result is returned, with the request log
 * removed from its stderr.
 */
export function trackingKubectl(
  runner: CommandRunner,
  onCreated: (outcome: KubectlOutcome) => Promise<void>,
): CommandRunner {
  return {
    stopAll: () => runner.stopAll(),
    async run(args, options) {
      const verbose = args.some((a) => a === "-v" || a.startsWith("-v=") || a === "--v" || a.startsWith("--v="));
      if (verbose || !CREATING_COMMANDS.has(subcommand(args) ?? "")) return runner.run(args, options);
      const result = await runner.run([REQUEST_LOG_VERBOSITY, ...args], options);
      await onCreated(kubectlCreations(result.stdout, result.stderr));
      return { ...result, stderr: withoutInfoLines(result.stderr) } satisfies KubectlResult;
    },
  };
}

/** `stderr` without the info-level lines `--v=6` added (warnings and errors stay). */
function withoutInfoLines(stderr: string): string {
  return stderr
    .split(/(?<=\n)/)
    .filter((line) => !INFO_LINE.test(line))
    .join("");
}
