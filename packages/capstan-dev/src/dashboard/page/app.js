// The dashboard page: plain DOM, no framework, no build step. Everything it shows comes from the
// dashboard server's JSON routes and its one Server-Sent Event stream per page, whose topics each
// panel follows (stream-hub.js; see src/dashboard/server.ts and stream-sessions.ts).
// Text from the cluster is only ever set as textContent, never parsed as HTML.

import { h } from "./dom.js";
import { shardCell, shardHeader, shardRings } from "./shard-columns.js";
import { subscribe, TopicState } from "./stream-hub.js";
import { openTimeline } from "./timeline.js";

/** The write dialogs, loaded on first use: a page that only looks never waits for them. */
const editor = () => import("./object-editor.js");

/** Age cells are refreshed this often: "5s" turning into "10s" is enough precision for a glance. */
const AGE_REFRESH_MS = 5_000;
/** Log lines kept in the panel: the newest, so a chatty operator cannot make the page slow. */
const MAX_LOG_LINES = 1_000;

const $ = (id) => document.getElementById(id);

function showError(id, error) {
  const el = $(id);
  el.hidden = !error;
  el.textContent = error ? `${error.reason ? `${error.reason}: ` : ""}${error.message}` : "";
}

/** "3s", "4m", "2h", "5d": kubectl's short ages. */
function age(timestamp) {
  if (!timestamp) return "";
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(timestamp)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** The JSON error body of a route, to say why a stream could not open. */
async function errorOf(url) {
  try {
    const res = await fetch(url);
    const body = await res.json();
    return body.error ?? (res.ok ? undefined : { message: `HTTP ${res.status}` });
  } catch (err) {
    return { reason: "Unreachable", message: `the dashboard server does not answer (${err})` };
  }
}

const state = {
  kinds: [],
  /** The selected kind's id, its info and rows (key -> row). */
  kindId: new URLSearchParams(location.hash.slice(1)).get("kind") ?? "",
  kind: undefined,
  rows: new Map(),
  showConditions: false,
  /** The shard rings the rows' labels name, sorted: a Member column each (shard-columns.js). */
  shardRings: [],
  /** The object shown in the detail panel: { kindId, namespace, name }. */
  selected: undefined,
  objectsStream: undefined,
  detailStream: undefined,
  /** The selected object's reconcile timeline (timeline.js): { element, close }. */
  timeline: undefined,
  logsStream: undefined,
  /** The dashboard takes writes (not started --read-only): the create, edit and delete controls show. */
  writable: false,
};

// ---- kinds ---------------------------------------------------------------------------------------

function renderKinds() {
  const list = $("kinds");
  keepingFocus(list, "data-kind", () =>
    list.replaceChildren(
      ...state.kinds.map((k) =>
        h(
          "li",
          {
            "data-kind": k.id,
            class: [k.id === state.kindId ? "selected" : "", k.error ? "failing" : "", k.builtin ? "builtin" : "custom"]
              .filter(Boolean)
              .join(" "),
            title: `${k.group ? `${k.group}/` : ""}${k.version} ${k.plural}${k.namespaced ? "" : " (cluster-scoped)"}${k.error ? `\n${k.error.message}` : ""}`,
            tabindex: "0",
            "aria-current": k.id === state.kindId ? "true" : undefined,
            onclick: () => selectKind(k.id),
            onkeydown: (e) => listKeys(e, () => selectKind(k.id)),
          },
          h("span", { class: "kind-name" }, k.kind),
          h("span", { class: "kind-group" }, k.group || "core"),
          h("span", { class: "count" }, k.error && k.count === null ? "!" : (k.count ?? "…")),
        ),
      ),
    ),
  );
}

function watchKinds() {
  const stream = subscribe("kinds");
  stream.addEventListener("open", () => {
    $("connection").textContent = "live";
    $("connection").className = "connection live";
  });
  stream.addEventListener("error", () => {
    $("connection").textContent = "reconnecting…";
    $("connection").className = "connection down";
  });
  stream.addEventListener("kinds", (e) => {
    const { kinds, crdError } = JSON.parse(e.data);
    state.kinds = kinds;
    showError("kinds-error", crdError && { ...crdError, message: `custom kinds: ${crdError.message}` });
    renderKinds();
    // The selected kind (from the address, or one whose CRD went away and came back) is served now.
    const idle = !state.objectsStream || state.objectsStream.readyState === TopicState.CLOSED;
    if (state.kindId && idle && kinds.some((k) => k.id === state.kindId)) selectKind(state.kindId);
  });
}

// ---- objects of one kind -------------------------------------------------------------------------

function selectKind(id) {
  state.objectsStream?.close();
  state.objectsStream = undefined;
  state.kindId = id;
  state.rows = new Map();
  state.kind = state.kinds.find((k) => k.id === id);
  // The detail of another kind's object does not belong beside this kind's table.
  if (state.selected && state.selected.kindId !== id) clearSelection();
  history.replaceState(null, "", `#kind=${encodeURIComponent(id)}`);
  renderKinds();
  renderTable();
  const stream = subscribe("objects", { kind: id });
  state.objectsStream = stream;
  stream.addEventListener("snapshot", (e) => {
    const { kind, rows, error } = JSON.parse(e.data);
    state.kind = kind;
    state.rows = new Map(rows.map((r) => [r.key, r]));
    showError("objects-error", error);
    renderTable();
  });
  stream.addEventListener("upsert", (e) => {
    const row = JSON.parse(e.data);
    state.rows.set(row.key, row);
    // The first row with conditions (or of a new shard ring) brings its column: redraw the whole table then.
    const newRing = (row.shards ?? []).some((s) => !state.shardRings.includes(s.ring));
    if ((row.conditions.length > 0 && !state.showConditions) || newRing) renderTable();
    else renderRow(row);
  });
  stream.addEventListener("remove", (e) => {
    const { key } = JSON.parse(e.data);
    state.rows.delete(key);
    rowElement(key)?.remove();
  });
  stream.addEventListener("status", (e) => showError("objects-error", JSON.parse(e.data).error));
  stream.addEventListener("gone", (e) => {
    stream.close();
    showError("objects-error", { message: JSON.parse(e.data).message });
  });
  stream.addEventListener("error", async (e) => {
    // A topic refused (unknown kind) says why; one whose stream was refused asks the JSON route.
    if (stream.readyState === TopicState.CLOSED && state.objectsStream === stream) {
      showError("objects-error", e.error ?? (await errorOf(`/api/objects?kind=${encodeURIComponent(id)}`)));
    }
  });
}

/** Keys (namespace/name) in the API server's own list order: code units, not the locale's collation (which also costs tens of ms for 1,000 rows). */
function compareKeys(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function rowElement(key) {
  return [...$("objects").tBodies[0].rows].find((tr) => tr.dataset.key === key);
}

function renderTable() {
  const kind = state.kind;
  // Shown only for kinds whose objects have conditions: most custom kinds have none.
  state.showConditions = [...state.rows.values()].some((r) => r.conditions.length > 0);
  // A Member column per shard ring the objects' labels name (sharded operators only).
  state.shardRings = shardRings(state.rows.values());
  $("objects-title").textContent = kind ? `${kind.kind} (${kind.group || "core"}/${kind.version})` : "Pick a kind";
  $("create-object").hidden = !state.writable || !kind || kind.metadataOnly;
  if (kind) $("create-object").textContent = `Create ${kind.kind}`;
  const columns = kind?.columns ?? [];
  $("objects").tHead.replaceChildren(
    h(
      "tr",
      {},
      kind?.namespaced ? h("th", {}, "Namespace") : null,
      h("th", {}, "Name"),
      h("th", {}, "Age"),
      columns.map((c) =>
        h("th", { title: c.error ?? c.description ?? c.jsonPath, class: c.error ? "failing" : "" }, c.name),
      ),
      state.shardRings.map((ring) =>
        h("th", { title: `label shard.capstan.dev/${ring}` }, shardHeader(ring, state.shardRings)),
      ),
      state.showConditions ? h("th", {}, "Conditions") : null,
      h("th", { "aria-label": "Deletion and finalizers" }, ""),
    ),
  );
  // All rows at once, already sorted: inserting them one by one would cost a scan of the table each.
  const sorted = [...state.rows.values()].sort((a, b) => compareKeys(a.key, b.key));
  const body = $("objects").tBodies[0];
  keepingFocus(body, "data-key", () => body.replaceChildren(...sorted.map(rowOf)));
}

/**
 * Runs `draw`, which replaces the items of `container`, and puts the focus back on the new item with
 * the same `attr` if it was on one: counts and rows update live, and a keyboard user keeps their place.
 */
function keepingFocus(container, attr, draw) {
  const focused = document.activeElement;
  const key = focused && container.contains(focused) ? focused.getAttribute(attr) : null;
  draw();
  if (key !== null) [...container.children].find((el) => el.getAttribute(attr) === key)?.focus();
}

function cellText(value, column) {
  if (value === null || value === undefined) return "";
  if (column?.type === "date" && typeof value === "string") return age(value);
  return String(value);
}

/** The table row of `row`. */
function rowOf(row) {
  const kind = state.kind;
  const columns = kind?.columns ?? [];
  const selected = state.selected && state.selected.kindId === state.kindId && keyOf(state.selected) === row.key;
  const tr = h(
    "tr",
    {
      "data-key": row.key,
      class: [selected ? "selected" : "", row.deleting ? "deleting" : ""].join(" ").trim(),
      tabindex: "0",
      "aria-current": selected ? "true" : undefined,
    },
    kind?.namespaced ? h("td", {}, row.namespace ?? "") : null,
    h("td", { class: "name" }, row.name),
    h("td", { class: "age", "data-created": row.created ?? "" }, age(row.created)),
    columns.map((c, i) => h("td", { class: "cell" }, cellText(row.cells[i], c))),
    state.shardRings.map((ring) => h("td", { class: "member" }, shardCell(row, ring))),
    state.showConditions ? h("td", {}, row.conditions.map(conditionBadge)) : null,
    h(
      "td",
      { class: "markers" },
      row.deleting
        ? h("span", { class: "badge deleting", title: `deletion requested ${row.deleting}` }, "deleting")
        : null,
      row.finalizers.length > 0
        ? h("span", { class: "badge", title: row.finalizers.join("\n") }, `finalizers: ${row.finalizers.length}`)
        : null,
    ),
  );
  return tr;
}

/** Opens the object of a row (one listener on the table body, not two per row of 1,000). */
function openRow(tr) {
  const row = state.rows.get(tr.dataset.key);
  if (row) selectObject({ kindId: state.kindId, namespace: row.namespace ?? "", name: row.name });
}

/** Inserts or replaces the row of `row.key`, keeping the table sorted by key. */
function renderRow(row) {
  const tr = rowOf(row);
  const body = $("objects").tBodies[0];
  const old = rowElement(row.key);
  if (old) {
    const focused = old === document.activeElement;
    old.replaceWith(tr);
    if (focused) tr.focus();
    return;
  }
  const after = [...body.rows].find((r) => compareKeys(r.dataset.key, row.key) > 0);
  body.insertBefore(tr, after ?? null);
}

function conditionBadge(c) {
  const good = c.status === "True";
  return h(
    "span",
    {
      class: `badge condition ${good ? "ok" : c.status === "False" ? "bad" : "unknown"}`,
      title: [c.reason, c.message].filter(Boolean).join(": "),
    },
    `${c.type}${good ? "" : `=${c.status}`}`,
  );
}

function keyOf(ref) {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

// ---- one object ----------------------------------------------------------------------------------

function selectObject(ref) {
  state.detailStream?.close();
  state.selected = ref;
  if (ref.kindId !== state.kindId) selectKind(ref.kindId);
  for (const tr of $("objects").tBodies[0].rows) {
    tr.classList.toggle("selected", tr.dataset.key === keyOf(ref));
    if (tr.dataset.key === keyOf(ref)) tr.setAttribute("aria-current", "true");
    else tr.removeAttribute("aria-current");
  }
  $("detail-title").textContent = keyOf(ref);
  showError("detail-error", undefined);
  $("detail").replaceChildren();
  const query = `kind=${encodeURIComponent(ref.kindId)}&namespace=${encodeURIComponent(ref.namespace)}&name=${encodeURIComponent(ref.name)}`;
  const stream = subscribe("object", { kind: ref.kindId, namespace: ref.namespace, name: ref.name });
  state.detailStream = stream;
  state.timeline?.close();
  state.timeline = openTimeline(stream);
  stream.addEventListener("detail", (e) => renderDetail(JSON.parse(e.data)));
  stream.addEventListener("gone", (e) => {
    stream.close();
    showError("detail-error", { message: JSON.parse(e.data).message });
  });
  stream.addEventListener("error", async (e) => {
    if (stream.readyState === TopicState.CLOSED && state.detailStream === stream) {
      showError("detail-error", e.error ?? (await errorOf(`/api/object?${query}`)));
    }
  });
}

function link(ref, text) {
  if (!ref.kindId) return h("span", {}, text);
  return h(
    "a",
    {
      href: "#",
      onclick: (e) => {
        e.preventDefault();
        selectObject({ kindId: ref.kindId, namespace: ref.namespace ?? "", name: ref.name });
      },
    },
    text,
  );
}

function section(title, className, ...content) {
  return h("section", { class: className }, h("h3", {}, title), ...content);
}

/** A section with a list, or one line saying there is nothing, to keep the YAML in view. */
function listSection(title, className, items, render) {
  if (items.length === 0)
    return h("section", { class: `${className} empty` }, h("h3", {}, title), h("span", { class: "none" }, "none"));
  return section(title, className, render(items));
}

function renderDetail(d) {
  $("detail-title").textContent = `${d.kind} ${d.row.key}`;
  const conditions = d.row.conditions;
  $("detail").replaceChildren(
    h(
      "div",
      { class: "detail-actions" },
      h("button", { type: "button", onclick: () => filterLogs(d.row.namespace ?? "", d.row.name) }, "logs about it"),
      writeButtons(d),
      d.row.deleting ? h("span", { class: "badge deleting" }, `deleting since ${d.row.deleting}`) : null,
    ),
    listSection("Conditions", "conditions", conditions, (items) =>
      h(
        "table",
        {},
        items.map((c) =>
          h(
            "tr",
            {},
            h("td", {}, conditionBadge(c)),
            h("td", {}, c.reason ?? ""),
            h("td", {}, c.message ?? ""),
            h("td", {}, age(c.lastTransitionTime)),
          ),
        ),
      ),
    ),
    listSection("Finalizers", "finalizers", d.row.finalizers, (items) =>
      h(
        "ul",
        {},
        items.map((f) => h("li", {}, f)),
      ),
    ),
    listSection("Owners", "owners", d.ownerReferences, (items) =>
      h(
        "ul",
        {},
        items.map((o) =>
          h(
            "li",
            { class: o.present ? "" : "missing" },
            `${o.kind} `,
            link(o, o.name),
            o.controller ? " (controller)" : "",
            o.present ? "" : " (not found)",
          ),
        ),
      ),
    ),
    listSection("Children", "children", d.children, (items) =>
      h(
        "ul",
        {},
        items.map((c) => h("li", {}, `${c.kind} `, link(c, c.name))),
      ),
    ),
    listSection("Events", "events", d.events, (items) =>
      h(
        "table",
        {},
        items.map((e) =>
          h(
            "tr",
            { class: e.type === "Warning" ? "warning" : "" },
            h("td", { class: "age" }, age(e.last)),
            h("td", {}, e.type),
            h("td", {}, e.reason),
            h("td", {}, e.message),
            h("td", {}, e.count > 1 ? `×${e.count}` : ""),
          ),
        ),
      ),
    ),
    state.timeline?.element,
    section("YAML", "yaml", h("pre", {}, d.yaml)),
  );
}

/** Clears the detail panel: no object selected. */
function clearSelection() {
  state.detailStream?.close();
  state.detailStream = undefined;
  state.timeline?.close();
  state.timeline = undefined;
  state.selected = undefined;
  $("detail-title").textContent = "Pick an object";
  showError("detail-error", undefined);
  $("detail").replaceChildren();
}

/** Arrow keys move between the items of a list or table (rows, kinds); Enter or Space opens one. */
function listKeys(e, open, item = e.currentTarget) {
  if (e.key === "Enter" || e.key === " ") {
    e.preventDefault();
    open();
  } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    e.preventDefault();
    const next = e.key === "ArrowDown" ? item.nextElementSibling : item.previousElementSibling;
    next?.focus();
  }
}

// ---- writes (object-editor.js) -------------------------------------------------------------------

/** The edit and delete buttons of the detail panel, when the dashboard takes writes. */
function writeButtons(d) {
  const kind = state.kinds.find((k) => k.id === d.kindId);
  if (!state.writable || !kind) return null;
  const ref = { namespace: d.row.namespace, name: d.row.name, uid: d.row.uid };
  return [
    kind.metadataOnly
      ? null
      : h(
          "button",
          { type: "button", class: "edit", onclick: async () => (await editor()).openEdit(kind, ref) },
          "edit",
        ),
    h(
      "button",
      {
        type: "button",
        class: "delete danger",
        onclick: async () => (await editor()).openDelete(kind, ref, clearSelection),
      },
      "delete",
    ),
  ];
}

async function setUpWrites() {
  try {
    const res = await fetch("/api/writes");
    state.writable = res.ok && !(await res.json()).readOnly;
  } catch {
    state.writable = false; // no write controls when the dashboard cannot say it takes writes
  }
  document.body.classList.toggle("read-only", !state.writable);
  $("mode").textContent = state.writable ? "development cluster" : "development cluster, read-only";
  $("create-object").addEventListener("click", async () => {
    const kind = state.kind;
    if (kind)
      (await editor()).openCreate(kind, (obj) =>
        selectObject({ kindId: kind.id, namespace: obj.metadata.namespace ?? "", name: obj.metadata.name }),
      );
  });
  renderTable();
}

// ---- logs ----------------------------------------------------------------------------------------

function logFilterQuery() {
  const params = new URLSearchParams();
  const source = $("log-source").value;
  if (source) params.set("source", source);
  const object = $("log-object").value.trim();
  if (object) {
    const slash = object.indexOf("/");
    if (slash >= 0) {
      params.set("namespace", object.slice(0, slash));
      params.set("name", object.slice(slash + 1));
    } else {
      params.set("name", object);
    }
  }
  return params.toString();
}

function renderSources(sources) {
  const select = $("log-source");
  const current = select.value;
  select.replaceChildren(h("option", { value: "" }, "all"), ...sources.map((s) => h("option", { value: s }, s)));
  select.value = sources.includes(current) ? current : "";
}

function logLine(line) {
  const time = new Date(line.time).toISOString().slice(11, 23);
  const fields = line.fields
    ? Object.entries(line.fields).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    : [];
  const object = line.name ? (line.namespace ? `${line.namespace}/${line.name}` : line.name) : "";
  return h(
    "div",
    { class: `line ${line.level ?? "text"}` },
    h("span", { class: "time" }, time),
    h("span", { class: "source" }, line.source),
    line.level ? h("span", { class: "level" }, line.level.toUpperCase()) : null,
    object ? h("span", { class: "object" }, object) : null,
    h("span", { class: "msg" }, line.level ? (line.msg ?? "") : line.text),
    fields.length > 0 ? h("span", { class: "fields" }, fields.join(" ")) : null,
  );
}

function appendLogLines(lines) {
  const panel = $("logs");
  const atBottom = panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 8;
  panel.append(...lines.map(logLine));
  while (panel.childElementCount > MAX_LOG_LINES) panel.firstElementChild.remove();
  if (atBottom) panel.scrollTop = panel.scrollHeight;
}

function watchLogs() {
  state.logsStream?.close();
  $("logs").replaceChildren();
  const stream = subscribe("logs", Object.fromEntries(new URLSearchParams(logFilterQuery())));
  state.logsStream = stream;
  stream.addEventListener("lines", (e) => {
    const { sources, lines } = JSON.parse(e.data);
    renderSources(sources);
    $("logs").replaceChildren();
    appendLogLines(lines);
  });
  stream.addEventListener("sources", (e) => renderSources(JSON.parse(e.data).sources));
  stream.addEventListener("line", (e) => appendLogLines([JSON.parse(e.data)]));
}

function filterLogs(namespace, name) {
  $("log-object").value = namespace ? `${namespace}/${name}` : name;
  watchLogs();
}

// ---- start ---------------------------------------------------------------------------------------

const objectRows = $("objects").tBodies[0];
objectRows.addEventListener("click", (e) => {
  const tr = e.target.closest("tr[data-key]");
  if (tr) openRow(tr);
});
objectRows.addEventListener("keydown", (e) => {
  const tr = e.target.closest("tr[data-key]");
  if (tr) listKeys(e, () => openRow(tr), tr);
});
$("log-source").addEventListener("change", watchLogs);
$("log-object").addEventListener("change", watchLogs);
$("log-clear-filter").addEventListener("click", () => filterLogs("", ""));
setInterval(() => {
  for (const td of document.querySelectorAll("td.age[data-created]")) td.textContent = age(td.dataset.created);
}, AGE_REFRESH_MS);
watchKinds();
// The kind in the address is opened at once, beside the kinds stream rather than after its first
// event: the table is what the user waits for.
if (state.kindId) selectKind(state.kindId);
watchLogs();
void setUpWrites();
