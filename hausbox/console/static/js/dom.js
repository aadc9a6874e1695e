// Building the page from data without innerHTML: every text goes in as a text node, so a device or
// zone name can never become markup (and the content security policy forbids inline code anyway).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// A labelled form field: the label names the input for screen readers and makes it clickable.
let fieldCount = 0;
export function field(label, input, hint) {
  const id = input.id || `f${++fieldCount}`;
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input, hint ? h("small", { class: "muted" }, hint) : null);
}

// The one place errors reach the user: an alert region (read out by screen readers) in the page.
export function errorBox() {
  const box = h("p", { class: "error", role: "alert", hidden: true });
  box.show = (error) => {
    box.textContent = error ? (error.message || String(error)) : "";
    box.hidden = !error;
  };
  return box;
}

export function formatValue(value, unit) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number") {
    const rounded = Math.abs(value) >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
    return unit ? `${rounded} ${unit}` : String(rounded);
  }
  return unit ? `${value} ${unit}` : String(value);
}
