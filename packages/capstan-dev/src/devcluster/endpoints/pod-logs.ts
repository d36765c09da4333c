/**
 * `GET /api/v1/namespaces/{ns}/pods/{name}/log` (`kubectl logs`), answered as kube-apiserver and the
 * kubelet answer it, for containers that the devcluster only simulates.
 *
 * Expected flow: the pod must exist (404 otherwise); the container is the `container` parameter, or the
 * pod's only container; the apiserver checks it (pkg/registry/core/pod/strategy.go LogLocation), then
 * the kubelet checks the container's state (kubelet validateContainerLogStatus) and streams its log.
 *
 * Guarantees: the apiserver's and the kubelet's refusals, with their messages, as 400 BadRequest:
 * a container name required (several containers), an unknown container, a container waiting to start
 * (`container "app" in pod "web" is waiting to start: ContainerCreating`), no previous terminated
 * container for `previous=true`. A pod not yet scheduled has no log location: 200 with an empty body,
 * as the apiserver's location streamer answers.
 *
 * Caveats: the simulated containers run nothing and print nothing, so a log is always empty (200,
 * `text/plain`). `follow=true` keeps the stream open, as following a silent container does, until the
 * client goes away or the server stops; it does not end when the container stops.
 */
import type { ServerResponse } from "node:http";
import { badRequest } from "../machinery/status.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import { queryBool } from "../request/query-params.ts";

interface Container {
  name?: string;
}

interface ContainerStatus {
  name?: string;
  state?: { waiting?: { reason?: string }; running?: unknown; terminated?: unknown };
  lastState?: { terminated?: unknown };
}

/** Writes the log response of `pod`'s container, or throws the ApiError kubectl would get. */
export function servePodLog(
  res: ServerResponse,
  pod: JsonObject,
  query: URLSearchParams,
  openStreams: Set<ServerResponse>,
): Promise<void> {
  const name = String((pod.metadata as { name?: string } | undefined)?.name ?? "");
  const spec = (pod["spec"] ?? {}) as { containers?: Container[]; initContainers?: Container[]; nodeName?: string };
  const status = (pod["status"] ?? {}) as {
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
  const containers = spec.containers ?? [];
  const initContainers = spec.initContainers ?? [];
  let container = query.get("container") ?? "";
  if (container === "") {
    if (containers.length === 1) container = containers[0]?.name ?? "";
    else if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
    else {
      let message = `a container name must be specified for pod ${name}, choose one of: [${names(containers)}]`;
      if (initContainers.length > 0) message += ` or one of the init containers: [${names(initContainers)}]`;
      throw badRequest(message);
    }
  } else if (![...containers, ...initContainers].some((c) => c.name === container)) {
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  }
  if (spec.nodeName) checkContainerState(name, container, status, queryBool(query, "previous") === true);

  res.writeHead(200, { "Content-Type": "text/plain", "Cache-Control": "no-cache, private" });
  if (queryBool(query, "follow") !== true) {
    res.end();
    return Promise.resolve();
  }
  res.flushHeaders();
  openStreams.add(res);
  return new Promise<void>((resolve) => {
    res.once("close", () => {
      openStreams.delete(res);
      resolve();
    });
  });
}

/** The kubelet's refusals for a container it cannot show a log of. */
function checkContainerState(
  pod: string,
  container: string,
  status: { containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] },
  previous: boolean,
): void {
  const found = [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])].find(
    (s) => s.name === container,
  );
  if (!found) throw badRequest(`container "${container}" in pod "${pod}" is not available`);
  if (previous) {
    if (!found.lastState?.terminated) {
      throw badRequest(`previous terminated container "${container}" in pod "${pod}" not found`);
    }
    return;
  }
  const waiting = found.state?.waiting;
  if (waiting && !found.state?.running && !found.state?.terminated) {
    const why = WAITING_REASONS[waiting.reason ?? ""] ?? waiting.reason ?? "";
    throw badRequest(`container "${container}" in pod "${pod}" is waiting to start: ${why}`);
  }
}

/** The kubelet words the two image-pull failures; any other reason is printed as it is. */
const WAITING_REASONS: Record<string, string> = {
  ErrImagePull: "image can't be pulled",
  ImagePullBackOff: "trying and failing to pull image",
};

function names(containers: Container[]): string {
  return containers.map((c) => c.name ?? "").join(" ");
}
