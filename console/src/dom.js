// A few DOM helpers: h() builds an element, text is always set as text (never as HTML).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style") el.style.cssText = value;
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A value as one line of text: objects (dynamic values) as JSON, null as "null". */
export function cellText(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** An expandable JSON view: objects and arrays fold, leaves are text. */
export function jsonView(value, label) {
  if (value === null || typeof value !== "object") {
    return h("div", { class: "json-leaf" }, label ? h("span", { class: "json-key" }, `${label}: `) : null,
      h("span", { class: `json-${value === null ? "null" : typeof value}` }, cellText(value)));
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return h("details", { class: "json", open: entries.length <= 8 },
    h("summary", {}, label ? h("span", { class: "json-key" }, `${label}: `) : null, summary),
    entries.map(([k, v]) => jsonView(v, k)));
}

export function formatBytes(n) {
  if (n === null || n === undefined) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

/** An RFC 3339 timestamp (up to nanoseconds) as milliseconds since the epoch (a float). */
export function timestampMs(text) {
  if (typeof text !== "string") return NaN;
  const match = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(text);
  if (!match) return Date.parse(text);
  const whole = Date.parse(match[1] + (match[3] || "Z"));
  return whole + (match[2] ? Number(match[2]) * 1000 : 0);
}
