// The dashboard's write dialogs: create (from the kind's generated form or pasted YAML), edit (form
// or YAML, with a resourceVersion conflict resolved by reapplying the change on the latest version
// or overwriting), and delete (confirmed, showing finalizers and what garbage collection takes).
// Every request goes to the dashboard server's write routes (src/dashboard/object-writes.ts), which
// write through the API server as the dashboard's user; errors come back as the API server's
// Status, shown next to the fields its causes name.

import { h } from "./dom.js";
import { NOT_IN_FORM, schemaForm, validate, withDefaults } from "./schema-form.js";

/** A route's answer: the parsed body, or throws `{ code, reason, message, causes }`. */
async function api(method, url, body) {
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw { reason: "Unreachable", message: `the dashboard server does not answer (${err})` };
  }
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw json.error ?? { code: res.status, message: `HTTP ${res.status}` };
  return json;
}

const q = (kind, ref) =>
  `kind=${encodeURIComponent(kind.id)}&namespace=${encodeURIComponent(ref.namespace ?? "")}&name=${encodeURIComponent(ref.name)}`;

/** A modal dialog; Escape closes it (the browser's own <dialog> behaviour). */
function dialog(title, className) {
  const titleId = `dialog-title-${className}`;
  const el = h("dialog", { class: `editor ${className}`, "aria-labelledby": titleId });
  const errors = h("div", { class: "error dialog-error", role: "alert", hidden: true });
  el.append(h("h2", { id: titleId }, title), errors);
  el.addEventListener("close", () => el.remove());
  document.body.append(el);
  return {
    el,
    /** Shows `error` (a Status in short) at the top, with the causes no field took. */
    showError(error, unmatched = error?.causes ?? []) {
      errors.hidden = !error;
      errors.replaceChildren();
      if (!error) return;
      errors.append(h("div", {}, `${error.reason ? `${error.reason}: ` : ""}${error.message ?? ""}`));
      if (unmatched.length > 0) {
        errors.append(
          h(
            "ul",
            {},
            unmatched.map((c) => h("li", {}, `${c.field ? `${c.field}: ` : ""}${c.message ?? c.reason ?? ""}`)),
          ),
        );
      }
    },
  };
}

/**
 * The create or edit dialog of an object of `kind`. `base`: the object being edited (latest from
 * the cluster), undefined to create. `onDone(object)` after a successful write.
 */
async function openEditor(kind, base, onDone) {
  const editing = base !== undefined;
  const title = editing
    ? `Edit ${kind.kind} ${base.metadata.namespace ? `${base.metadata.namespace}/` : ""}${base.metadata.name}`
    : `Create ${kind.kind}`;
  const d = dialog(title, "object-editor");
  const { schema, error: schemaError } = await api("GET", `/api/schema?kind=${encodeURIComponent(kind.id)}`).catch(
    (error) => ({ schema: undefined, error }),
  );
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;

  let opened = base; // the version the edit started from (its resourceVersion is sent)
  let held = base ?? {}; // the object last shown: what the form does not edit is taken from it
  let form;
  let mode = "form";

  const nameInput = h("input", {
    id: "editor-name",
    name: "name",
    required: true,
    "aria-required": "true",
    spellcheck: "false",
    autocomplete: "off",
  });
  const namespaceInput = h("input", {
    id: "editor-namespace",
    name: "namespace",
    required: true,
    "aria-required": "true",
    spellcheck: "false",
  });
  const meta = h(
    "div",
    { class: "editor-meta" },
    h(
      "div",
      { class: "field scalar", "data-path": "metadata.name" },
      h("label", { for: "editor-name" }, "name", h("span", { class: "required", "aria-hidden": "true" }, " *")),
      nameInput,
      h("div", { class: "field-error", role: "alert" }),
    ),
    kind.namespaced
      ? h(
          "div",
          { class: "field scalar", "data-path": "metadata.namespace" },
          h(
            "label",
            { for: "editor-namespace" },
            "namespace",
            h("span", { class: "required", "aria-hidden": "true" }, " *"),
          ),
          namespaceInput,
          h("div", { class: "field-error", role: "alert" }),
        )
      : null,
  );
  const formPane = h("div", {
    class: "form-pane",
    role: "tabpanel",
    id: "editor-form-pane",
    "aria-labelledby": "editor-tab-form",
  });
  const yamlArea = h("textarea", {
    id: "editor-yaml",
    class: "yaml-input",
    "aria-label": "YAML of the object",
    spellcheck: "false",
    rows: 20,
  });
  const yamlPane = h(
    "div",
    {
      class: "yaml-pane",
      role: "tabpanel",
      id: "editor-yaml-pane",
      "aria-labelledby": "editor-tab-yaml",
      hidden: true,
    },
    h(
      "small",
      { class: "help" },
      editing
        ? "The whole object: keep metadata.resourceVersion, it says which version you changed."
        : "Paste or write one object of this kind.",
    ),
    yamlArea,
  );
  const tab = (id, label, pane) =>
    h(
      "button",
      {
        type: "button",
        role: "tab",
        id,
        "aria-controls": pane,
        "aria-selected": "false",
        onclick: () => switchTo(id === "editor-tab-form" ? "form" : "yaml"),
      },
      label,
    );
  const tabs = h(
    "div",
    { class: "tabs", role: "tablist", "aria-label": "Edit as" },
    tab("editor-tab-form", "Form", "editor-form-pane"),
    tab("editor-tab-yaml", "YAML", "editor-yaml-pane"),
  );
  const conflict = h("div", { class: "conflict", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, editing ? "Save" : "Create");
  const formEl = h(
    "form",
    { novalidate: true },
    tabs,
    formPane,
    yamlPane,
    conflict,
    h(
      "div",
      { class: "dialog-buttons" },
      h("button", { type: "button", onclick: () => d.el.close() }, "Cancel"),
      submit,
    ),
  );
  d.el.append(formEl);

  /** The object the editor holds now, from the form or the YAML. */
  async function current() {
    if (mode === "yaml") return (await api("POST", "/api/yaml/parse", { yaml: yamlArea.value })).object;
    // The form edits the fields of the schema; metadata (labels, resourceVersion) and status stay as
    // last loaded, from the cluster or from the YAML tab, with the name fields on top when creating.
    const metadata = editing
      ? { ...held.metadata }
      : {
          ...held.metadata,
          name: nameInput.value.trim(),
          ...(kind.namespaced ? { namespace: namespaceInput.value.trim() } : {}),
        };
    const kept = Object.fromEntries(Object.entries(held).filter(([k]) => NOT_IN_FORM.has(k)));
    return { ...kept, apiVersion, kind: kind.kind, metadata, ...(form ? form.value() : {}) };
  }

  /** Shows `object` in both panes' terms: form fields from it, and the name fields. */
  function load(object) {
    held = object ?? {};
    nameInput.value = object?.metadata?.name ?? "";
    namespaceInput.value = object?.metadata?.namespace ?? (kind.namespaced ? "default" : "");
    nameInput.readOnly = editing;
    namespaceInput.readOnly = editing;
    const fields = Object.fromEntries(Object.entries(object ?? {}).filter(([k]) => !NOT_IN_FORM.has(k)));
    if (schema) {
      form = schemaForm(schema, editing ? fields : withDefaults(schema, fields));
      formPane.replaceChildren(meta, form.element);
    } else {
      form = undefined;
      formPane.replaceChildren(
        meta,
        h(
          "p",
          { class: "none" },
          `No form: the kind's schema cannot be read (${schemaError?.message ?? "none"}). Use the YAML tab.`,
        ),
      );
    }
  }

  async function switchTo(next) {
    if (next === mode) return;
    d.showError(undefined);
    try {
      if (next === "yaml")
        yamlArea.value = (await api("POST", "/api/yaml/stringify", { object: await current() })).yaml;
      else load(await current());
    } catch (error) {
      d.showError(error);
      return;
    }
    mode = next;
    showMode();
  }
  function showMode() {
    formPane.hidden = mode !== "form";
    yamlPane.hidden = mode !== "yaml";
    for (const b of tabs.querySelectorAll("[role=tab]"))
      b.setAttribute("aria-selected", String(b.id === `editor-tab-${mode}`));
  }

  function showErrors(error) {
    const causes = error.causes ?? [];
    const unmatched = mode === "form" ? showFieldErrors(causes) : causes;
    d.showError(error, unmatched);
  }
  function showFieldErrors(causes) {
    for (const el of meta.querySelectorAll(".invalid")) el.classList.remove("invalid");
    for (const el of meta.querySelectorAll(".field-error")) el.textContent = "";
    const rest = [];
    for (const c of causes) {
      const slot = [...meta.querySelectorAll("[data-path]")].find((el) => el.dataset.path === c.field);
      if (slot) {
        slot.classList.add("invalid");
        slot.querySelector(".field-error").textContent = c.message ?? "";
      } else rest.push(c);
    }
    return form ? form.showErrors(rest) : rest;
  }

  async function send(object, body) {
    if (editing) {
      const path = `/api/object?${q(kind, { namespace: opened.metadata.namespace, name: opened.metadata.name })}`;
      return api("PUT", path, body ?? { object });
    }
    return api("POST", `/api/objects?kind=${encodeURIComponent(kind.id)}`, body ?? { object });
  }

  async function save() {
    d.showError(undefined);
    conflict.hidden = true;
    let object;
    try {
      object = await current();
    } catch (error) {
      return d.showError(error);
    }
    if (mode === "form") {
      const causes = [
        ...(object.metadata?.name ? [] : [{ field: "metadata.name", message: "Required value" }]),
        ...(kind.namespaced && !object.metadata?.namespace
          ? [{ field: "metadata.namespace", message: "Required value" }]
          : []),
        ...(schema ? validate(schema, object) : []),
      ];
      if (causes.length > 0) return showErrors({ reason: "Invalid", message: "Some fields need a value.", causes });
    }
    submit.disabled = true;
    try {
      const { object: written } = await send(object);
      d.el.close();
      onDone?.(written);
    } catch (error) {
      if (error.code === 409 && editing) showConflict(object, error);
      else showErrors(error);
    } finally {
      submit.disabled = false;
    }
  }

  /** A 409: someone wrote the object since it was opened. Reapply this edit on the latest, or overwrite. */
  function showConflict(mine, error) {
    conflict.hidden = false;
    conflict.replaceChildren(
      h("p", {}, `${error.message} `, "Someone changed it since you opened it."),
      h(
        "button",
        { type: "button", class: "reapply", onclick: () => resolve(mine, "reapply") },
        "Reload the latest and reapply my changes",
      ),
      h(
        "button",
        { type: "button", class: "overwrite danger", onclick: () => resolve(mine, "overwrite") },
        "Overwrite with mine",
      ),
    );
    conflict.querySelector("button")?.focus();
  }
  async function resolve(mine, how) {
    try {
      const { object: latest } = await api("GET", `/api/edit?${q(kind, opened.metadata)}`);
      conflict.hidden = true;
      if (how === "overwrite") {
        const object = { ...mine, metadata: { ...mine.metadata, resourceVersion: latest.metadata.resourceVersion } };
        const { object: written } = await send(object);
        d.el.close();
        onDone?.(written);
        return;
      }
      // Only what this edit changed (a merge patch from the opened version to mine) goes onto the latest.
      const change = mergeDiff(strip(opened), strip(mine));
      const merged = mergeApply(latest, change);
      opened = latest;
      if (mode === "yaml") yamlArea.value = (await api("POST", "/api/yaml/stringify", { object: merged })).yaml;
      else load(merged);
      d.showError(
        {
          reason: "Reapplied",
          message: `Your changes are now on the latest version (resourceVersion ${latest.metadata.resourceVersion}): check them and save.`,
        },
        [],
      );
    } catch (error) {
      showErrors(error);
    }
  }

  formEl.addEventListener("submit", (e) => {
    e.preventDefault();
    void save();
  });
  load(base);
  if (!schema) {
    mode = "yaml";
    yamlArea.value = (
      await api("POST", "/api/yaml/stringify", { object: await current() }).catch(() => ({ yaml: "" }))
    ).yaml;
  }
  showMode();
  d.el.showModal();
  (editing ? formPane.querySelector("input:not([readonly]), select, textarea") : nameInput)?.focus();
  return d.el;
}

/** The create dialog of `kind`. */
export function openCreate(kind, onDone) {
  return openEditor(kind, undefined, onDone);
}

/** The edit dialog of an object (fetched fresh: the edit starts from the latest version). */
export async function openEdit(kind, ref, onDone) {
  try {
    const { object } = await api("GET", `/api/edit?${q(kind, ref)}`);
    return await openEditor(kind, object, onDone);
  } catch (error) {
    const d = dialog(`Edit ${kind.kind} ${ref.name}`, "object-editor");
    d.showError(error);
    d.el.append(
      h("div", { class: "dialog-buttons" }, h("button", { type: "button", onclick: () => d.el.close() }, "Close")),
    );
    d.el.showModal();
    return d.el;
  }
}

/** The delete confirmation of an object: its finalizers and its dependents, then DELETE. */
export async function openDelete(kind, ref, onDone) {
  const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  const d = dialog(`Delete ${kind.kind} ${key}?`, "delete-confirm");
  const confirm = h("button", { type: "button", class: "danger primary" }, "Delete");
  const body = h("div", { class: "delete-body" }, h("p", { class: "none" }, "Looking for finalizers and dependents…"));
  d.el.append(
    body,
    h(
      "div",
      { class: "dialog-buttons" },
      h("button", { type: "button", onclick: () => d.el.close() }, "Cancel"),
      confirm,
    ),
  );
  d.el.showModal();
  confirm.focus();
  let uid = ref.uid;
  try {
    const preview = await api("GET", `/api/deletion?${q(kind, ref)}`);
    body.replaceChildren(
      h("h3", {}, "Finalizers"),
      preview.finalizers.length === 0
        ? h("p", { class: "none finalizers" }, "none: it goes at once")
        : h(
            "div",
            { class: "finalizers" },
            h("p", {}, "The deletion waits until their controllers remove them:"),
            h(
              "ul",
              {},
              preview.finalizers.map((f) => h("li", {}, f)),
            ),
          ),
      h("h3", {}, "Deleted with it (garbage collection)"),
      preview.dependents.length === 0
        ? h("p", { class: "none dependents" }, "nothing the dashboard watches")
        : h(
            "ul",
            { class: "dependents" },
            preview.dependents.map((o) =>
              h(
                "li",
                {},
                `${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}`,
                o.finalizers.length > 0
                  ? h("span", { class: "badge" }, `finalizers: ${o.finalizers.join(", ")}`)
                  : null,
              ),
            ),
          ),
    );
  } catch (error) {
    body.replaceChildren();
    d.showError(error);
    uid = undefined;
  }
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    try {
      await api("DELETE", `/api/object?${q(kind, ref)}${uid ? `&uid=${encodeURIComponent(uid)}` : ""}`);
      d.el.close();
      onDone?.();
    } catch (error) {
      d.showError(error);
      confirm.disabled = false;
    }
  });
  return d.el;
}

/** An object without what the server owns, for diffing an edit. */
function strip(object) {
  const { status: _s, ...rest } = object ?? {};
  const { resourceVersion: _r, managedFields: _m, generation: _g, ...metadata } = rest.metadata ?? {};
  return { ...rest, metadata };
}

const plain = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** The JSON merge patch (RFC 7386) that turns `from` into `to`. */
export function mergeDiff(from, to) {
  const patch = {};
  for (const key of new Set([...Object.keys(from ?? {}), ...Object.keys(to ?? {})])) {
    const a = from?.[key];
    const b = to?.[key];
    if (b === undefined) {
      if (a !== undefined) patch[key] = null;
    } else if (plain(a) && plain(b)) {
      const sub = mergeDiff(a, b);
      if (Object.keys(sub).length > 0) patch[key] = sub;
    } else if (JSON.stringify(a) !== JSON.stringify(b)) patch[key] = structuredClone(b);
  }
  return patch;
}

/** `target` with the JSON merge patch `patch` applied (RFC 7386). */
export function mergeApply(target, patch) {
  if (!plain(patch)) return structuredClone(patch);
  const out = plain(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergeApply(out[key], value);
  }
  return out;
}
