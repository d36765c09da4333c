/**
 * Server-Sent Events over one HTTP response: the page's `EventSource` receives named events, each
 * carrying one JSON value. The stream ends when the page goes away or the dashboard stops.
 */
import type { ServerResponse } from "node:http";

/**
 * How long the browser waits before reconnecting a dropped stream: short, so a page left open
 * across a `capstan dev` restart (same dashboard port) is live again about a second after it.
 */
export const RECONNECT_MS = 1_000;

/** Where a stream's named events go: an {@link SseStream}, or one topic of a page's session (stream-sessions.ts). */
export interface EventSink {
  readonly closed: boolean;
  /** Sends `event` with `data` as JSON; does nothing once closed. */
  send(event: string, data: unknown): void;
  /** Runs `callback` once, when the sink closes. */
  onClose(callback: () => void): void;
  close(): void;
}

/** One open event stream. */
export class SseStream implements EventSink {
  #closed = false;
  readonly #onClose = new Set<() => void>();

  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-content-type-options": "nosniff",
    });
    res.write(`retry: ${RECONNECT_MS}\n\n`);
    res.on("close", () => this.#end());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends `event` with `data` as JSON; does nothing once closed. */
  send(event: string, data: unknown): void {
    if (this.#closed) return;
    this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /**
   * Sends an unnamed event (`message`) whose data is `lines` joined by newlines; does nothing once
   * closed. No line may hold a newline (JSON text never does).
   */
  sendMessage(lines: readonly string[]): void {
    if (this.#closed) return;
    this.res.write(`${lines.map((line) => `data: ${line}\n`).join("")}\n`);
  }

  /** Runs `callback` once, when the stream closes (the page left, or {@link close}). */
  onClose(callback: () => void): void {
    if (this.#closed) callback();
    else this.#onClose.add(callback);
  }

  /** Ends the response. */
  close(): void {
    if (!this.#closed) this.res.end();
    this.#end();
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const callback of this.#onClose) callback();
    this.#onClose.clear();
  }
}
