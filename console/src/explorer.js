// The explorer of one table: a time range, a search box, a histogram of matching rows over
// time (drag to zoom), the newest rows (expandable, each with a link to its source-of-truth
// row when one is picked), facets, and live tail.

import uPlot from "uplot";
import { ApiError, ident, query, tail } from "./api.js";
import { cellText, clear, h, jsonView, timestampMs } from "./dom.js";
import { dynamicPaths, pathSql } from "./paths.js";
import { condition, matches } from "./search.js";
import { openInWorkspace, sourceLink, sourcePicker, sourceSql } from "./source.js";

const RANGES = { "15m": 900, "1h": 3600, "6h": 21600, "24h": 86400, "7d": 604800, "30d": 2592000, all: null };
const STEPS = [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 10800, 21600, 43200, 86400, 604800];
const NEWEST = 50;
const LIVE_KEEP = 200;
const FACETS = 6;
const PATH_FACETS = 3;
const LEAF = new Set(["string", "long", "bool", "int", "real"]);
const NOT_FACETS = new Set(["_timestamp", "trace_id", "span_id", "parent_span_id", "body", "message", "msg"]);

function sqlTime(ms) {
  return `TIMESTAMP '${new Date(ms).toISOString().replace("T", " ").replace("Z", "")}'`;
}

export function isSpanTable(columns) {
  const names = new Set(columns.map((c) => c.name));
  return ["trace_id", "span_id", "parent_span_id", "duration_ns"].every((n) => names.has(n));
}

export function explorer(root, { table, columns, tables }) {
  const state = { range: "1h", search: "", zoom: null, live: false };
  const rangeSelect = h("select", { id: "ex-range", onchange: () => { state.range = rangeSelect.value; state.zoom = null; load(); } },
    Object.keys(RANGES).map((r) => h("option", { value: r, selected: r === state.range }, r === "all" ? "all time" : `last ${r}`)));
  const searchBox = h("input", { id: "ex-search", type: "search", placeholder: "words, field:value, attributes.path:value" });
  const form = h("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); state.search = searchBox.value; load(); } },
    h("select", { id: "ex-table", onchange: (e) => { location.hash = `#/explore/${encodeURIComponent(e.target.value)}`; } },
      tables.map((t) => h("option", { value: t, selected: t === table }, t))),
    rangeSelect, searchBox, h("button", { class: "primary", id: "ex-go" }, "Search"),
    h("label", { class: "live" }, h("input", { type: "checkbox", id: "ex-live", onchange: (e) => toggleLive(e.target.checked) }), " Live tail"));
  const status = h("div", { class: "status", id: "ex-status" });
  const chart = h("div", { class: "histogram", id: "ex-histogram" });
  const facets = h("aside", { class: "facets", id: "ex-facets" });
  const rowsList = h("div", { class: "rows", id: "ex-rows" });
  const picker = sourcePicker(table, columns, () => load());
  clear(root, h("div", { class: "explorer" }, form, picker, status, chart,
    h("div", { class: "split" }, facets, h("div", { class: "newest" }, h("h3", {}, "Newest rows"), rowsList))));

  let plot = null;
  let liveAbort = null;
  let generation = 0;

  function timeWindow() {
    if (state.zoom) return state.zoom;
    const seconds = RANGES[state.range];
    return seconds ? { from: Date.now() - seconds * 1000, to: null } : { from: null, to: null };
  }

  function where() {
    const parts = [];
    const w = timeWindow();
    if (w.from !== null) parts.push(`_timestamp >= ${sqlTime(w.from)}`);
    if (w.to !== null) parts.push(`_timestamp < ${sqlTime(w.to)}`);
    const search = condition(state.search, columns);
    if (search) parts.push(search);
    return parts.length ? ` WHERE ${parts.join(" AND ")}` : "";
  }

  async function load() {
    let filter;
    try {
      filter = where();
    } catch (e) {
      status.textContent = e.message;
      status.className = "status error";
      return;
    }
    status.className = "status running";
    status.textContent = "loading…";
    delete status.dataset.loaded;
    delete status.dataset.range;
    const started = performance.now();
    const from = ident(table);
    const mine = ++generation;
    const fresh = () => mine === generation;  // a later load supersedes this one's answers
    try {
      await Promise.all([newest(from, filter, fresh), histogram(from, filter, fresh), facetsFor(from, filter, fresh)]);
      if (!fresh()) return;
      status.className = "status ok";
      status.textContent = `${Math.round(performance.now() - started)} ms`;
      status.dataset.loaded = state.search;
      status.dataset.range = state.zoom ? "zoom" : state.range;
    } catch (e) {
      if (!fresh()) return;
      status.className = "status error";
      status.textContent = e instanceof ApiError ? `${e.body?.error}: ${e.body?.message}` : String(e);
    }
  }

  function asObject(cols, row) {
    return Object.fromEntries(cols.map((c, i) => [c.name, row[i]]));
  }

  function rowView(row, live) {
    const summary = Object.entries(row).filter(([k, v]) => k !== "_timestamp" && v !== null)
      .map(([k, v]) => `${k}=${cellText(v).slice(0, 200)}`).join("  ");
    const traceLink = isSpanTable(columns) && row.trace_id
      ? h("a", { class: "trace-link", href: `#/trace/${encodeURIComponent(table)}/${encodeURIComponent(row.trace_id)}` }, "trace")
      : null;
    const link = sourceLink(table);
    const sql = link && sourceSql(link, row);
    const sourceAction = sql
      ? h("a", { class: "source-link", href: "#/sql", title: sql, onclick: (e) => { e.preventDefault(); openInWorkspace(sql); } }, "source")
      : null;
    const item = h("details", { class: `row${live ? " live-row" : ""}` },
      h("summary", {}, h("time", {}, row._timestamp), " ", traceLink, sourceAction, sourceAction ? " " : null, summary));
    item.addEventListener("toggle", () => {  // the expanded view is built when first opened
      if (item.open && item.children.length === 1) item.append(...Object.entries(row).map(([k, v]) => jsonView(v, k)));
    });
    return item;
  }

  async function newest(from, filter, fresh) {
    const answer = await query(`SELECT * FROM ${from}${filter} ORDER BY _timestamp DESC LIMIT ${NEWEST}`);
    if (!fresh()) return;
    clear(rowsList, answer.rows.map((r) => rowView(asObject(answer.columns, r), false)));
    if (!answer.rows.length) rowsList.append(h("p", { class: "empty" }, "no rows in this range"));
  }

  async function bounds(from, filter) {
    const w = timeWindow();
    if (w.from !== null) return { from: w.from, to: w.to ?? Date.now() };
    const answer = await query(`SELECT min(_timestamp), max(_timestamp) FROM ${from}${filter}`);
    const [lo, hi] = answer.rows[0] || [];
    if (!lo) return null;
    return { from: timestampMs(lo), to: timestampMs(hi) + 1000 };
  }

  async function histogram(from, filter, fresh) {
    const span = await bounds(from, filter);
    if (!span) {
      if (fresh()) clear(chart, h("p", { class: "empty" }, "no rows"));
      return;
    }
    const seconds = Math.max(1, (span.to - span.from) / 1000);
    const step = STEPS.find((s) => seconds / s <= 120) || STEPS[STEPS.length - 1];
    const answer = await query(
      `SELECT date_bin(INTERVAL '${step} seconds', _timestamp, TIMESTAMP '1970-01-01 00:00:00') AS bucket,` +
        ` count(*) AS n FROM ${from}${filter} GROUP BY 1 ORDER BY 1`,
    );
    if (!fresh()) return;
    const counts = new Map(answer.rows.map(([b, n]) => [Math.round(timestampMs(b) / 1000), n]));
    const first = Math.floor(span.from / 1000 / step) * step;
    const xs = [];
    const ys = [];
    for (let t = first; t <= span.to / 1000; t += step) {
      xs.push(t);
      ys.push(counts.get(t) || 0);
    }
    draw(xs, ys, step);
    chart.dataset.buckets = String(answer.rows.length);
    chart.dataset.rows = String(ys.reduce((a, b) => a + b, 0));
  }

  function draw(xs, ys, step) {
    if (plot) plot.destroy();
    clear(chart);
    const width = Math.max(300, chart.clientWidth || 900);
    plot = new uPlot({
      width, height: 160,
      legend: { show: false },
      cursor: { drag: { x: true, y: false } },
      scales: { x: { time: true } },
      axes: [{}, { size: 50 }],
      series: [{}, { label: "rows", fill: "rgba(60,120,216,0.5)", stroke: "rgb(60,120,216)", paths: uPlot.paths.bars({ size: [0.9] }) }],
      hooks: {
        setSelect: [(u) => {
          if (u.select.width < 4) return;
          const lo = u.posToVal(u.select.left, "x");
          const hi = u.posToVal(u.select.left + u.select.width, "x");
          state.zoom = { from: lo * 1000, to: (hi + step) * 1000 };
          load();
        }],
      },
    }, [xs, ys], chart);
  }

  let attributePaths = null;  // [{name, sql}]: the dynamic column's frequent flat paths
  async function pathFacets() {
    if (attributePaths) return attributePaths;
    const dynamic = columns.find((c) => c.name === "attributes" && c.type === "dynamic") || columns.find((c) => c.type === "dynamic" && c.name !== "props");
    const paths = dynamic ? await dynamicPaths(table, dynamic.name).catch(() => []) : [];
    attributePaths = paths.filter((p) => p.keys.length === 1 && p.types.some((t) => LEAF.has(t))).slice(0, PATH_FACETS)
      .map((p) => ({ name: `${dynamic.name}.${p.keys[0]}`, sql: pathSql(dynamic.name, p.keys) }));
    return attributePaths;
  }

  async function facetsFor(from, filter, fresh) {
    const candidates = columns.filter((c) => ["string", "bool", "int"].includes(c.type) && !NOT_FACETS.has(c.name)
      && !c.name.endsWith("_id")).slice(0, FACETS).map((c) => ({ name: c.name, sql: ident(c.name) }));
    candidates.push(...(await pathFacets()));
    const answers = await Promise.all(candidates.map((c) => query(
      `SELECT ${c.sql} AS value, count(*) AS n FROM ${from}${filter} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5`)));
    if (!fresh()) return;
    clear(facets, h("h3", {}, "Top values"), candidates.map((c, i) => h("div", { class: "facet", dataset: { column: c.name } },
      h("h4", {}, c.name),
      h("ul", {}, answers[i].rows.map(([value, n]) => h("li", {
        onclick: () => {
          if (value === null) return;
          const term = `${c.name}:${/\s/.test(String(value)) ? `"${value}"` : value}`;
          searchBox.value = `${searchBox.value} ${term}`.trim();
          state.search = searchBox.value;
          load();
        },
      }, h("span", { class: "facet-value" }, cellText(value)), h("span", { class: "facet-count" }, String(n))))))));
  }

  function toggleLive(on) {
    if (liveAbort) liveAbort.abort();
    liveAbort = null;
    rowsList.dataset.tail = on ? "opening" : "closed";
    if (!on) return;
    liveAbort = new AbortController();
    const signal = liveAbort.signal;
    let pending = [];  // rows arrived since the last frame: drawn together, the newest first
    const drawPending = () => {
      const rows = pending.slice(-LIVE_KEEP).reverse();
      pending = [];
      rowsList.prepend(...rows.map((row) => rowView(row, true)));
      while (rowsList.children.length > LIVE_KEEP) rowsList.lastChild.remove();
    };
    tail(table, (event) => {
      const rows = event.rows.map((r) => asObject(event.columns, r)).filter((r) => matches(r, state.search, columns));
      rows.sort((a, b) => timestampMs(a._timestamp) - timestampMs(b._timestamp));
      if (!pending.length) requestAnimationFrame(drawPending);
      pending.push(...rows);
      if (pending.length > LIVE_KEEP) pending = pending.slice(-LIVE_KEEP);
      rowsList.dataset.snapshot = String(event.snapshot_id);
    }, signal, () => { rowsList.dataset.tail = "open"; }).catch((e) => {
      if (!signal.aborted) {
        status.className = "status error";
        status.textContent = `live tail stopped: ${e.message || e}`;
      }
    });
  }

  load();
  return { close: () => liveAbort && liveAbort.abort() };
}
