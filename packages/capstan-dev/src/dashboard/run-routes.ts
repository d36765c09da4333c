/**
 * The reconcile timeline's routes (run-store.ts holds the runs):
 * - `GET /api/runs?kind=&namespace=&name=&uid=`: `{ available, runs }`, the object's kept runs,
 *   newest first (`available: false` when the dashboard was started without a run store: its
 *   operators' runs do not reach it).
 * - `GET /api/stream/runs?kind=&namespace=&name=&uid=`: the same live (text/event-stream): a
 *   `runs` event with that list, then a `run` event per new run of the object.
 * - The same two events on the object's detail stream (`/api/stream/object`, see
 *   {@link RunRoutes.attach}): the page's timeline reads them there, so that an open object costs
 *   the browser one connection, not two (it allows six per host, shared by every tab).
 *
 * `kind` is a kind id as elsewhere (`example.com/v1/widgets`); runs are matched by the kind's group
 * and name, whatever version the operator watched.
 */
import type { ServerResponse } from "node:http";
import type { ResourceKind } from "capstan";
import type { ClusterView } from "./cluster-view.ts";
import { matchesRunFilter, type RunFilter, type RunStore } from "./run-store.ts";
import type { EventSink, SseStream } from "./sse.ts";

/** What the routes need of the server. */
export interface RunRoutesOptions {
  view: ClusterView;
  /** Where the runs are; absent: the dashboard gets none. */
  runs: RunStore | undefined;
  sendJson(res: ServerResponse, code: number, body: unknown): void;
  open(res: ServerResponse): SseStream;
}

/** The timeline's routes and stream events. */
export interface RunRoutes {
  /** Answers `/api/runs` and `/api/stream/runs`; returns false for any other path. */
  handle(path: string, q: URLSearchParams, res: ServerResponse): boolean;
  /** Sends the object's runs on `stream` (`runs`, then `run` per new one) until it closes. */
  attach(stream: EventSink, kind: ResourceKind, namespace: string, name: string): void;
}

/** The timeline's routes; see the module documentation. */
export function runRoutes(options: RunRoutesOptions): RunRoutes {
  const listed = (filter: RunFilter) => ({
    available: options.runs !== undefined,
    runs: options.runs?.runs(filter) ?? [],
  });
  const follow = (stream: EventSink, filter: RunFilter) => {
    stream.send("runs", listed(filter));
    const store = options.runs;
    if (store === undefined) return;
    const unsubscribe = store.subscribe((run) => {
      if (matchesRunFilter(run, filter)) stream.send("run", run);
    });
    stream.onClose(unsubscribe);
  };
  return {
    handle(path, q, res) {
      if (path !== "/api/runs" && path !== "/api/stream/runs") return false;
      const id = q.get("kind") ?? "";
      const viewed = options.view.kind(id);
      if (viewed === undefined) {
        options.sendJson(res, 404, {
          error: { code: 404, reason: "NotFound", message: `the dashboard does not watch kind "${id}"` },
        });
        return true;
      }
      const uid = q.get("uid");
      const filter: RunFilter = {
        group: viewed.kind.group,
        kind: viewed.kind.kind,
        namespace: viewed.kind.namespaced ? (q.get("namespace") ?? "") : "",
        name: q.get("name") ?? "",
        ...(uid ? { uid } : {}),
      };
      if (path === "/api/runs") options.sendJson(res, 200, listed(filter));
      else follow(options.open(res), filter);
      return true;
    },
    attach(stream, kind, namespace, name) {
      follow(stream, { group: kind.group, kind: kind.kind, namespace: kind.namespaced ? namespace : "", name });
    },
  };
}
