/**
 * A Server-Sent Events reader for tests: opens a stream over node:http and hands out its events in
 * order, each awaited with a deadline so a missing event fails the test with what did arrive.
 */
import { get, type IncomingMessage } from "node:http";

/** One received event. */
export interface SseEvent {
  event: string;
  data: unknown;
  /** The topic of an event of a page's session stream (`/api/stream?session=`, stream-sessions.ts). */
  topic?: string;
}

/** An open stream. */
export interface SseReader {
  /** The response's status code. */
  readonly status: number;
  /** The next event (of type `event` when given, skipping others), or a rejection after `timeoutMs`. */
  next(event?: string, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

/** Opens `url` and resolves once the response headers arrived. */
export function openSse(url: string): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { accept: "text/event-stream" } }, (res: IncomingMessage) => {
      const queue: SseEvent[] = [];
      const seen: string[] = [];
      let wake: (() => void) | undefined;
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = "message";
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (data.length === 0) continue;
          if (event === "message" && data.length === 2) {
            // A session's topic event: `{ topic, event }`, then the event's JSON.
            const head = JSON.parse(data[0] as string) as { topic: string; event: string };
            queue.push({ event: head.event, topic: head.topic, data: JSON.parse(data[1] as string) });
          } else {
            queue.push({ event, data: JSON.parse(data.join("\n")) });
          }
          seen.push((queue.at(-1) as SseEvent).event);
          wake?.();
        }
      });
      res.on("error", () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        async next(event, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const i = queue.findIndex((e) => event === undefined || e.event === event);
            if (i >= 0) return queue.splice(0, i + 1)[i] as SseEvent;
            queue.length = 0;
            const left = deadline - Date.now();
            if (left <= 0)
              throw new Error(`no "${event ?? "any"}" event within ${timeoutMs} ms; got: ${seen.join(", ")}`);
            await new Promise<void>((r) => {
              const timer = setTimeout(r, left);
              wake = () => {
                clearTimeout(timer);
                r();
              };
            });
          }
        },
        close() {
          req.destroy();
        },
      });
    });
    req.on("error", reject);
  });
}
