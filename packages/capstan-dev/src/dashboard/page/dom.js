// Building DOM elements, for the page (app.js) and the write dialogs (schema-form.js, object-editor.js).
// Text is only ever set as text nodes, never parsed as HTML: values from the cluster cannot inject markup.

/** Builds an element: h("td", { class: "x", onclick }, "text", childElement). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}
