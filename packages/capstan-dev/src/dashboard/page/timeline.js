// The reconcile timeline of the object detail: every reconcile, handler and timer run the operators
// reported for the selected object (src/dashboard/run-routes.ts, sent on the object's detail
// stream), newest first, live. Plain DOM, no build step; text from the operators is only ever set
// as textContent.

/** Runs shown at most: the server keeps 200 per object (run-store.ts), so this is all of them. */
const MAX_SHOWN_RUNS = 200;

/** Builds an element: el("li", { class: "x" }, "text", child). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** A delay as people say it: 300 ms, 1.5 s, 2 min, 1 h. */
export function delayText(ms) {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 6_000) / 10} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/** HH:MM:SS.mmm of a start time, in the browser's time zone. */
function clockText(epochMs) {
  const d = new Date(epochMs);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

/** The outcome's badge and, for an error, its message and what happens next. */
function outcomeParts(outcome) {
  switch (outcome.result) {
    case "ok":
      return [el("span", { class: "outcome" }, "ok")];
    case "requeue":
      return [el("span", { class: "outcome" }, `requeue after ${delayText(outcome.afterMs)}`)];
    default:
      return [
        el("span", { class: "outcome" }, "error"),
        el(
          "span",
          { class: "retry" },
          outcome.retryInMs === undefined ? "not retried" : `retry in ${delayText(outcome.retryInMs)}`,
        ),
        el("div", { class: "message" }, outcome.message),
      ];
  }
}

function writeText(w) {
  const group = w.group ? `.${w.group}` : "";
  const subresource = w.subresource ? `/${w.subresource}` : "";
  const target = [w.namespace, w.name].filter(Boolean).join("/");
  return `${w.verb} ${w.resource}${group}${subresource} ${target}`;
}

function runElement(run) {
  const who =
    run.type === "reconcile"
      ? [el("span", { class: "who" }, run.controller), el("span", { class: "type" }, "reconcile")]
      : [
          el("span", { class: "who" }, run.handler ?? ""),
          el("span", { class: "type" }, run.type === "timer" ? "timer" : `${run.cause ?? ""} handler`),
          el("span", { class: "controller" }, run.controller),
        ];
  const writes =
    run.writes.length === 0
      ? null
      : el(
          "ul",
          { class: "writes" },
          run.writes.map((w) =>
            el(
              "li",
              { class: w.code === 0 || w.code >= 400 ? "failed" : "" },
              writeText(w),
              " ",
              el("span", { class: "code" }, w.code === 0 ? "no answer" : String(w.code)),
            ),
          ),
          run.writesDropped ? el("li", { class: "dropped" }, `and ${run.writesDropped} more`) : null,
        );
  return el(
    "li",
    {
      class: `run outcome-${run.outcome.result}${run.parent === undefined ? "" : " nested"}`,
      "data-run": run.id,
      "data-source": run.source,
    },
    el(
      "div",
      { class: "run-head" },
      el("time", { datetime: new Date(run.start).toISOString() }, clockText(run.start)),
      who,
      el("span", { class: "duration" }, delayText(run.durationMs)),
      outcomeParts(run.outcome),
    ),
    writes,
  );
}

/**
 * The timeline of the object whose detail stream is `stream` (the page's `object` topic, see
 * stream-hub.js, which carries `runs` and `run` events beside `detail`): returns { element,
 * close }. The element may be moved around the detail panel; it follows the stream until close()
 * or until the stream closes (another object, or none, selected).
 */
export function openTimeline(stream) {
  const list = el("ol", { class: "runs", "aria-live": "polite" });
  const note = el("span", { class: "none" }, "loading…");
  const element = el("section", { class: "timeline" }, el("h3", {}, "Reconcile timeline"), note, list);
  let open = true;
  let available = true;
  const showNote = () => {
    note.hidden = list.childElementCount > 0;
    note.textContent = available
      ? "no runs yet (runs are recorded for the operators capstan dev runs)"
      : "no runs: this dashboard receives no operator runs";
  };
  stream.addEventListener("runs", (e) => {
    if (!open) return;
    const body = JSON.parse(e.data);
    available = body.available;
    list.replaceChildren(...body.runs.slice(0, MAX_SHOWN_RUNS).map(runElement));
    showNote();
  });
  stream.addEventListener("run", (e) => {
    if (!open) return;
    list.prepend(runElement(JSON.parse(e.data)));
    while (list.childElementCount > MAX_SHOWN_RUNS) list.lastElementChild.remove();
    showNote();
  });
  return {
    element,
    close: () => {
      open = false;
    },
  };
}
