// One trace as a waterfall: its spans nested under their parents, each bar placed at its
// start and as long as its duration, relative to the whole trace.

import { ident, literal, query } from "./api.js";
import { clear, h, jsonView, timestampMs } from "./dom.js";

function ms(ns) {
  return ns / 1e6 >= 1 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`;
}

export async function traceView(root, { table, traceId }) {
  clear(root, h("p", {}, "loading trace…"));
  const answer = await query(`SELECT * FROM ${ident(table)} WHERE trace_id = ${literal(traceId)} ORDER BY _timestamp`);
  const spans = answer.rows.map((r) => Object.fromEntries(answer.columns.map((c, i) => [c.name, r[i]])));
  if (!spans.length) {
    clear(root, h("p", { class: "empty" }, `no spans of trace ${traceId} in ${table}`));
    return;
  }
  for (const s of spans) {
    s.start = timestampMs(s._timestamp);
    s.end = s.start + (s.duration_ns || 0) / 1e6;
  }
  const begin = Math.min(...spans.map((s) => s.start));
  const total = Math.max(1e-6, Math.max(...spans.map((s) => s.end)) - begin);
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const children = new Map();
  const roots = [];
  for (const s of spans) {
    if (s.parent_span_id && byId.has(s.parent_span_id)) {
      if (!children.has(s.parent_span_id)) children.set(s.parent_span_id, []);
      children.get(s.parent_span_id).push(s);
    } else roots.push(s);
  }
  const ordered = [];
  const walk = (s, depth) => {
    ordered.push([s, depth]);
    for (const c of children.get(s.span_id) || []) walk(c, depth + 1);
  };
  roots.forEach((s) => walk(s, 0));
  const rows = ordered.map(([s, depth]) => {
    const left = (100 * (s.start - begin)) / total;
    const width = Math.max(0.3, (100 * (s.end - s.start)) / total);
    const error = s.status_code && String(s.status_code).toUpperCase().includes("ERROR");
    return h("details", { class: "span", dataset: { spanId: s.span_id } },
      h("summary", {},
        h("span", { class: "span-name", style: `padding-left:${depth * 16}px` }, `${s.service_name ? `${s.service_name} · ` : ""}${s.name}`),
        h("span", { class: "span-track" }, h("span", { class: `span-bar${error ? " error" : ""}`, style: `left:${left}%;width:${width}%` })),
        h("span", { class: "span-ms" }, ms(s.duration_ns || 0))),
      jsonView(s));
  });
  clear(root, h("div", { class: "trace", id: "trace" },
    h("h2", {}, `Trace ${traceId}`),
    h("p", {}, `${spans.length} spans · ${ms(total * 1e6)} · `, h("a", { href: `#/explore/${encodeURIComponent(table)}` }, `back to ${table}`)),
    h("div", { class: "waterfall" }, rows)));
}
