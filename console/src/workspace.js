// The SQL workspace: editor, Run / Cancel / Explain analyze, the results grid (copy, CSV,
// Parquet),
// the query history (kept in this browser's localStorage).

import { ApiError, cancel, query, queryFile } from "./api.js";
import { editor } from "./editor.js";
import { chart, chartable } from "./chart.js";
import { explainView } from "./explain.js";
import { csv, download, grid, tsv } from "./grid.js";
import { pathCompletions } from "./paths.js";
import { PENDING_KEY } from "./source.js";
import { clear, h } from "./dom.js";

const PARQUET = "application/vnd.apache.parquet";
const HISTORY_KEY = "kyma.history";
const HISTORY_SIZE = 100;

export function history() {
  try {
    return JSON.parse(localStorage.getItem(HISTORY_KEY)) || [];
  } catch {
    return [];
  }
}

function remember(entry) {
  const kept = history().filter((e) => e.sql !== entry.sql);
  localStorage.setItem(HISTORY_KEY, JSON.stringify([entry, ...kept].slice(0, HISTORY_SIZE)));
}

function errorText(e) {
  if (e instanceof ApiError && e.body) return `${e.body.error || e.status}: ${e.body.message || ""}`;
  return String(e.message || e);
}

export function workspace(root, { schema }) {
  const status = h("span", { class: "status", id: "sql-status" });
  const results = h("div", { class: "results", id: "sql-results" });
  const historyList = h("ul", { class: "history", id: "sql-history" });
  const runButton = h("button", { id: "sql-run", class: "primary", onclick: () => run(false) }, "Run");
  const cancelButton = h("button", { id: "sql-cancel", disabled: true, onclick: () => stop() }, "Cancel");
  const explainButton = h("button", { id: "sql-explain", onclick: () => run(true) }, "Explain analyze");
  const tools = h("span", { class: "tools" });
  const editorBox = h("div", { class: "editor", id: "sql-editor" });
  clear(root,
    h("div", { class: "workspace" },
      h("div", { class: "main" }, editorBox,
        h("div", { class: "toolbar" }, runButton, cancelButton, explainButton, status, tools), results),
      h("aside", {}, h("h3", {}, "History"), historyList)));
  const paths = [];  // dynamic paths: completed once SHOW PATHS has answered
  pathCompletions(schema).then((found) => paths.push(...found)).catch(() => {});
  const pending = sessionStorage.getItem(PENDING_KEY);  // sent by another page to run here
  sessionStorage.removeItem(PENDING_KEY);
  const view = editor(editorBox, { doc: pending || history()[0]?.sql || "SELECT 1", schema, paths, onRun: () => run(false) });
  let running = null;

  function drawHistory() {
    clear(historyList, history().map((e) => h("li", {
      title: e.sql, onclick: () => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: e.sql } }),
    }, h("code", {}, e.sql.length > 120 ? `${e.sql.slice(0, 120)}…` : e.sql),
    h("small", {}, ` ${e.ok ? `${e.rows} rows` : "error"}, ${e.ms} ms`))));
  }

  async function run(explain) {
    if (running) return;
    const text = view.state.doc.toString().trim();
    if (!text) return;
    const requestId = `console-${crypto.randomUUID()}`;
    running = requestId;
    runButton.disabled = explainButton.disabled = true;
    cancelButton.disabled = false;
    status.className = "status running";
    status.textContent = "running…";
    clear(tools);
    const started = performance.now();
    const sql = explain ? `EXPLAIN ANALYZE ${text}` : text;
    try {
      const answer = await query(sql, { requestId });
      const ms = Math.round(performance.now() - started);
      status.className = "status ok";
      status.textContent = `${answer.status} · ${answer.rows.length} rows · ${ms} ms`;
      remember({ sql: text, at: Date.now(), ms, rows: answer.rows.length, ok: true });
      if (explain) clear(results, explainView(answer));
      else show(answer, text);
    } catch (e) {
      const ms = Math.round(performance.now() - started);
      status.className = "status error";
      status.textContent = errorText(e);
      remember({ sql: text, at: Date.now(), ms, rows: 0, ok: false });
      clear(results);
    } finally {
      running = null;
      runButton.disabled = explainButton.disabled = false;
      cancelButton.disabled = true;
      drawHistory();
    }
  }

  async function parquet(sql) {
    // the server writes the file (types kept), running the statement again
    status.textContent = "writing Parquet…";
    try {
      download("result.parquet", await queryFile(sql, PARQUET), PARQUET);
      status.textContent = "result.parquet downloaded";
    } catch (e) {
      status.className = "status error";
      status.textContent = errorText(e);
    }
  }

  function show(answer, sql) {
    const gridBox = h("div");
    const chartBox = h("div");
    clear(results, chartBox, gridBox);
    const table = grid(gridBox, answer.columns, answer.rows);
    const kind = h("select", { id: "sql-chart-kind", onchange: () => draw() },
      ["line", "bar", "area"].map((k) => h("option", { value: k }, k)));
    const draw = () => clear(chartBox, chart(answer.columns, answer.rows, kind.value, Math.max(400, results.clientWidth - 20)));
    clear(tools,
      h("button", { id: "sql-copy", onclick: () => navigator.clipboard.writeText(tsv(answer.columns, table.rows())) }, "Copy"),
      h("button", { id: "sql-csv", onclick: () => download("result.csv", csv(answer.columns, table.rows()), "text/csv") }, "CSV"),
      h("button", { id: "sql-parquet", onclick: () => parquet(sql) }, "Parquet"),
      chartable(answer.columns) ? [h("button", { id: "sql-chart-button", onclick: () => draw() }, "Chart"), kind] : null);
  }

  async function stop() {
    if (!running) return;
    cancelButton.disabled = true;
    status.textContent = "cancelling…";
    try {
      await cancel(running);
    } catch (e) {
      status.textContent = errorText(e);
    }
  }

  drawHistory();
  if (pending) run(false);
  return view;
}
