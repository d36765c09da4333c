// A form generated from an OpenAPI v3 schema (a CRD's openAPIV3Schema, or a built-in kind's from
// the server's /openapi/v3, $refs already inlined by the dashboard server).
//
// What it renders: strings, integers, numbers and booleans as inputs; enums as selects; objects as
// groups (optional ones folded until opened); lists with add/remove; maps (additionalProperties) as
// key/value rows; x-kubernetes-int-or-string as text read back as a number when it is one. Required
// fields are marked (and checked by validate()); defaults are pre-filled (withDefaults); descriptions
// are help text. What it cannot express (free-form objects, oneOf) it says to edit in the YAML tab.
//
// Every field's element carries data-path in the API server's own notation (`spec.ports[0].name`,
// `metadata.labels[app]`), so an error cause naming a field lands next to it (showErrors).

import { h } from "./dom.js";

/** Top-level fields the form leaves alone: the editor handles metadata; status is the operator's. */
export const NOT_IN_FORM = new Set(["apiVersion", "kind", "metadata", "status"]);

let nextId = 0;

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const typeOf = (schema) => schema?.type ?? (schema?.properties ? "object" : schema?.items ? "array" : undefined);
const intOrString = (schema) => schema?.["x-kubernetes-int-or-string"] === true;
const isMap = (schema) => isObject(schema?.additionalProperties) && !schema.properties;
const freeForm = (schema) =>
  !intOrString(schema) &&
  (schema?.["x-kubernetes-preserve-unknown-fields"] === true ||
    schema?.oneOf ||
    schema?.anyOf ||
    typeOf(schema) === undefined ||
    (typeOf(schema) === "object" && !schema.properties && !isMap(schema)));

function childPath(path, key, inMap) {
  return inMap ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

/** `value` with the schema's defaults filled in where absent, in objects that are present or required. */
export function withDefaults(schema, value) {
  if (typeOf(schema) !== "object" || !schema.properties) return value;
  const out = isObject(value) ? { ...value } : {};
  const required = new Set(schema.required ?? []);
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (out[key] === undefined && prop.default !== undefined) out[key] = structuredClone(prop.default);
    else if (out[key] === undefined && required.has(key) && typeOf(prop) === "object" && prop.properties) out[key] = {};
    if (isObject(out[key])) out[key] = withDefaults(prop, out[key]);
  }
  return out;
}

/**
 * Required fields missing and numbers that are not numbers, as causes `{ field, message }` like the
 * API server's: the server checks the rest (patterns, ranges, its CEL rules).
 */
export function validate(schema, value, path = "") {
  const causes = [];
  const type = typeOf(schema);
  if (value === undefined || value === null || freeForm(schema)) return causes;
  if ((type === "integer" && !Number.isInteger(value)) || (type === "number" && typeof value !== "number")) {
    causes.push({ field: path, message: `must be ${type === "integer" ? "an integer" : "a number"}` });
  }
  if (type === "object" && isObject(value)) {
    for (const key of schema.required ?? []) {
      if (value[key] === undefined) {
        causes.push({ field: childPath(path, key), message: "Required value" });
      }
    }
    if (schema.properties) {
      for (const [key, prop] of Object.entries(schema.properties)) {
        if (!path && NOT_IN_FORM.has(key)) continue;
        causes.push(...validate(prop, value[key], childPath(path, key)));
      }
    } else if (isMap(schema)) {
      for (const [key, v] of Object.entries(value))
        causes.push(...validate(schema.additionalProperties, v, childPath(path, key, true)));
    }
  }
  if (type === "array" && Array.isArray(value)) {
    for (const [i, item] of value.entries()) causes.push(...validate(schema.items, item, `${path}[${i}]`));
  }
  return causes;
}

/**
 * The form of `schema` (an object's schema) editing a copy of `value` (the object's top-level fields
 * but metadata and status). `form.element` is the DOM, `form.value()` the edited fields.
 */
export function schemaForm(schema, value) {
  const root = structuredClone(isObject(value) ? value : {});
  const element = h("div", { class: "schema-form" });

  const get = (keys) => keys.reduce((v, k) => (v === undefined || v === null ? undefined : v[k]), root);
  const set = (keys, v) => {
    let node = root;
    for (const [i, k] of keys.slice(0, -1).entries()) {
      if (node[k] === undefined || node[k] === null) node[k] = typeof keys[i + 1] === "number" ? [] : {};
      node = node[k];
    }
    const last = keys[keys.length - 1];
    if (v === undefined && !Array.isArray(node)) delete node[last];
    else node[last] = v;
  };

  function field(schema, keys, path, label, required, depth) {
    if (freeForm(schema)) return opaqueField(schema, keys, path, label);
    const type = typeOf(schema);
    if (type === "object" && isMap(schema)) return mapField(schema, keys, path, label, required, depth);
    if (type === "object") return objectField(schema, keys, path, label, required, depth);
    if (type === "array") return arrayField(schema, keys, path, label, required, depth);
    return scalarField(schema, keys, path, label, required);
  }

  function labelOf(text, required, forId) {
    return h(
      "label",
      forId ? { for: forId } : {},
      text,
      required ? h("span", { class: "required", "aria-hidden": "true", title: "required" }, " *") : null,
    );
  }

  function help(schema, id) {
    return schema.description ? h("small", { class: "help", id }, schema.description) : null;
  }

  function scalarField(schema, keys, path, label, required) {
    const id = `f${++nextId}`;
    const helpId = schema.description ? `${id}-help` : undefined;
    const type = typeOf(schema);
    const current = get(keys);
    const common = { id, "aria-describedby": helpId, required, "aria-required": required ? "true" : undefined };
    let input;
    const parse = (raw) => {
      // A required string emptied stays "": the server says what an empty value breaks (minLength).
      if (raw === "") return required && type === "string" && !Array.isArray(schema.enum) ? "" : undefined;
      if (intOrString(schema)) return /^-?\d+$/.test(raw) ? Number(raw) : raw;
      if (type === "integer" || type === "number") return raw.trim() === "" ? undefined : Number(raw);
      if (type === "boolean") return raw === "true";
      return raw;
    };
    if (Array.isArray(schema.enum)) {
      input = h(
        "select",
        common,
        required && current !== undefined ? null : h("option", { value: "" }, "(none)"),
        schema.enum.map((v) => h("option", { value: String(v) }, String(v))),
      );
      input.value = current === undefined ? "" : String(current);
      input.addEventListener("change", () => set(keys, parse(input.value)));
    } else if (type === "boolean" && (required || schema.default !== undefined)) {
      input = h("input", { ...common, type: "checkbox", required: false });
      input.checked = current === true;
      if (current === undefined) set(keys, false);
      input.addEventListener("change", () => set(keys, input.checked));
    } else if (type === "boolean") {
      input = h(
        "select",
        common,
        h("option", { value: "" }, "(unset)"),
        h("option", { value: "true" }, "true"),
        h("option", { value: "false" }, "false"),
      );
      input.value = current === undefined ? "" : String(current);
      input.addEventListener("change", () => set(keys, parse(input.value)));
    } else {
      const numeric = !intOrString(schema) && (type === "integer" || type === "number");
      input = h("input", {
        ...common,
        type: numeric ? "number" : "text",
        step: type === "integer" ? "1" : numeric ? "any" : undefined,
        min: schema.minimum,
        max: schema.maximum,
        placeholder: schema.format ?? (intOrString(schema) ? "number or string" : undefined),
        spellcheck: "false",
      });
      input.value = current === undefined || current === null ? "" : String(current);
      input.addEventListener("input", () => set(keys, parse(input.value)));
    }
    return h(
      "div",
      { class: `field scalar${type === "boolean" ? " boolean" : ""}`, "data-path": path },
      labelOf(label, required, id),
      input,
      help(schema, helpId),
      h("div", { class: "field-error", role: "alert" }),
    );
  }

  function opaqueField(schema, keys, path, label) {
    const current = get(keys);
    return h(
      "div",
      { class: "field opaque", "data-path": path },
      labelOf(label, false),
      h("small", { class: "help" }, schema.description ?? "", " This field takes any value: edit it in the YAML tab."),
      current === undefined ? null : h("pre", {}, JSON.stringify(current, null, 2)),
      h("div", { class: "field-error", role: "alert" }),
    );
  }

  /** A group; folded (and built when first opened) when optional and absent. */
  function group(path, label, required, schema, present, depth, build) {
    const body = h("div", { class: "group-body" });
    let built = false;
    const fill = () => {
      if (built) return;
      built = true;
      body.append(...build());
    };
    if (depth === 0) {
      fill();
      return h("div", { class: "group top", "data-path": path }, body);
    }
    const details = h(
      "details",
      { class: "group", "data-path": path },
      h("summary", {}, label, required ? h("span", { class: "required", title: "required" }, " *") : null),
      help(schema),
      h("div", { class: "field-error", role: "alert" }),
      body,
    );
    details.addEventListener("toggle", () => details.open && fill());
    if (required || present) {
      details.open = true;
      fill();
    }
    return details;
  }

  function objectField(schema, keys, path, label, required, depth) {
    return group(path, label, required, schema, get(keys) !== undefined, depth, () => {
      const req = new Set(schema.required ?? []);
      const entries = Object.entries(schema.properties ?? {}).filter(([k]) => depth > 0 || !NOT_IN_FORM.has(k));
      // Required fields first: what must be filled in is at the top.
      entries.sort(([a], [b]) => Number(req.has(b)) - Number(req.has(a)));
      return entries.map(([key, prop]) =>
        field(prop, [...keys, key], childPath(path, key), key, req.has(key), depth + 1),
      );
    });
  }

  function arrayField(schema, keys, path, label, required, depth) {
    const items = h("ol", { class: "items" });
    const render = () => {
      const list = get(keys) ?? [];
      items.replaceChildren(
        ...list.map((_, i) =>
          h(
            "li",
            {},
            field(schema.items ?? {}, [...keys, i], `${path}[${i}]`, `${label}[${i}]`, true, depth + 1),
            h(
              "button",
              { type: "button", class: "remove", "aria-label": `remove ${label}[${i}]`, onclick: () => remove(i) },
              "remove",
            ),
          ),
        ),
      );
    };
    const remove = (i) => {
      const list = get(keys) ?? [];
      list.splice(i, 1);
      if (list.length === 0 && !required) set(keys, undefined);
      render();
    };
    const add = () => {
      const list = get(keys) ?? [];
      const itemType = typeOf(schema.items);
      list.push(
        structuredClone(
          schema.items?.default ??
            (itemType === "object" ? withDefaults(schema.items, {}) : itemType === "array" ? [] : undefined),
        ),
      );
      set(keys, list);
      render();
      items.lastElementChild?.querySelector("input, select, textarea, summary")?.focus();
    };
    return group(path, label, required, schema, get(keys) !== undefined, depth, () => {
      render();
      return [items, h("button", { type: "button", class: "add", onclick: add }, `add ${label} item`)];
    });
  }

  function mapField(schema, keys, path, label, required, depth) {
    const rows = h("div", { class: "map-rows" });
    const render = () => {
      const map = get(keys) ?? {};
      rows.replaceChildren(
        ...Object.keys(map).map((key) => {
          const keyId = `f${++nextId}`;
          const keyInput = h("input", {
            id: keyId,
            class: "map-key",
            value: key,
            "aria-label": `${label} key`,
            spellcheck: "false",
          });
          keyInput.addEventListener("change", () => {
            const now = get(keys) ?? {};
            const renamed = keyInput.value;
            if (renamed === key || renamed === "" || renamed in now) {
              keyInput.value = key;
              return;
            }
            // Keep the order: rebuild with the key renamed in place.
            set(keys, Object.fromEntries(Object.entries(now).map(([k, v]) => [k === key ? renamed : k, v])));
            render();
          });
          return h(
            "div",
            { class: "map-row" },
            keyInput,
            field(
              schema.additionalProperties,
              [...keys, key],
              childPath(path, key, true),
              `${label}[${key}]`,
              false,
              depth + 1,
            ),
            h(
              "button",
              {
                type: "button",
                class: "remove",
                "aria-label": `remove ${label}[${key}]`,
                onclick: () => removeKey(key),
              },
              "remove",
            ),
          );
        }),
      );
    };
    const removeKey = (key) => {
      const map = get(keys) ?? {};
      delete map[key];
      if (Object.keys(map).length === 0 && !required) set(keys, undefined);
      render();
    };
    const add = () => {
      const map = get(keys) ?? {};
      let key = "key";
      for (let i = 2; key in map; i++) key = `key${i}`;
      const t = typeOf(schema.additionalProperties);
      map[key] = t === "string" ? "" : t === "object" ? {} : t === "array" ? [] : undefined;
      set(keys, map);
      render();
      rows.lastElementChild?.querySelector("input.map-key")?.select();
    };
    return group(path, label, required, schema, get(keys) !== undefined, depth, () => {
      render();
      return [rows, h("button", { type: "button", class: "add", onclick: add }, `add ${label} entry`)];
    });
  }

  element.append(field(schema, [], "", "", true, 0));

  return {
    element,
    /** The edited top-level fields. */
    // Not metadata or status, even when a default put them in (kube's schemas default metadata to {}).
    value: () => structuredClone(Object.fromEntries(Object.entries(root).filter(([k]) => !NOT_IN_FORM.has(k)))),
    /** Marks the fields `causes` name; returns the causes no field of the form shows. */
    showErrors(causes) {
      this.clearErrors();
      const unmatched = [];
      for (const cause of causes) {
        const target = cause.field ? closestField(element, cause.field) : undefined;
        if (target === undefined) {
          unmatched.push(cause);
          continue;
        }
        target.classList.add("invalid");
        const slot = target.querySelector(":scope > .field-error");
        if (slot) slot.textContent = [slot.textContent, cause.message].filter(Boolean).join("; ");
        for (let d = target; d && d !== element; d = d.parentElement) if (d.tagName === "DETAILS") d.open = true;
        target.querySelector("input, select, textarea")?.setAttribute("aria-invalid", "true");
      }
      element.querySelector(".invalid input, .invalid select, .invalid summary")?.focus();
      return unmatched;
    },
    clearErrors() {
      for (const el of element.querySelectorAll(".invalid")) el.classList.remove("invalid");
      for (const el of element.querySelectorAll(".field-error")) el.textContent = "";
      for (const el of element.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
    },
  };
}

/** The element of `field`, or of the nearest enclosing field the form shows (`spec.a[0].b` -> `spec.a[0]` -> `spec.a`). */
function closestField(element, field) {
  let path = field.replace(/^\./, "");
  while (path) {
    const found = [...element.querySelectorAll("[data-path]")].find((el) => el.dataset.path === path);
    if (found) return found;
    const cut = Math.max(path.lastIndexOf("."), path.lastIndexOf("["));
    if (cut <= 0) return undefined;
    path = path.slice(0, cut);
  }
  return undefined;
}
