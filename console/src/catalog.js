// The catalog (tables: columns, types, rows, bytes, extents, options, rows per second over
// the last minute; on demand a table's schema history and recent commits) and operations
// (connectors and sources with state, lag and last error; running statements, with Stop).

import { api } from "./api.js";
import { cellText, clear, formatBytes, h } from "./dom.js";

export async function catalogPage(root) {
  const { tables } = await api("/v1/tables");
  const path = (t) => `/v1/tables/${encodeURIComponent(t.name)}`;
  const [described, histories] = await Promise.all([
    Promise.all(tables.map((t) => api(path(t)))), Promise.all(tables.map((t) => api(`${path(t)}/history`)))]);
  clear(root, h("div", { class: "catalog" }, h("h2", {}, "Tables"),
    h("table", { class: "list", id: "catalog-tables" },
      h("thead", {}, h("tr", {}, ["table", "rows", "bytes", "extents", "snapshot", "rows/s", "options", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, described.map((t, i) => {
        const details = h("tr", { class: "history", hidden: true, dataset: { history: t.name } });
        return [
          h("tr", { dataset: { table: t.name } },
            h("td", {}, h("b", {}, t.name)), h("td", { class: "num" }, String(t.rows)),
            h("td", { class: "num" }, formatBytes(t.bytes)), h("td", { class: "num" }, String(t.extents)),
            h("td", { class: "num" }, String(t.snapshot_id ?? "")),
            h("td", { class: "num rate", title: `rows committed per second over the last ${histories[i].rate_window_seconds} s` },
              String(histories[i].rows_per_second)),
            h("td", {}, cellText(t.options)),
            h("td", {}, h("a", { href: `#/explore/${encodeURIComponent(t.name)}` }, "explore"), " ",
              h("button", { class: "show-history", onclick: () => { details.hidden = !details.hidden; } }, "history"))),
          h("tr", { class: "columns" }, h("td", { colspan: "8" },
            t.columns.map((c) => h("span", { class: "column" }, h("b", {}, c.name), ` ${c.type}`,
              c.evolved_from ? h("small", {}, ` (was ${c.evolved_from})`) : null)))),
          clear(details, h("td", { colspan: "8" }, historyView(histories[i]))),
        ];
      })))));
}

/** A table's schema as it grew (each column with when it was added) and its newest commits. */
function historyView(history) {
  return [
    h("h3", {}, "Schema history"),
    h("table", { class: "list schema-history" },
      h("thead", {}, h("tr", {}, ["added", "column", "type", "evolution"].map((c) => h("th", {}, c)))),
      h("tbody", {}, history.columns.map((c) => h("tr", { dataset: { column: c.name } },
        h("td", {}, c.added_at), h("td", {}, h("b", {}, c.name)), h("td", {}, c.type),
        h("td", {}, c.evolved_from ? `evolved from ${c.evolved_from}` : ""))))),
    h("h3", {}, "Recent commits"),
    h("table", { class: "list commits" },
      h("thead", {}, h("tr", {}, ["snapshot", "at", "source", "rows added", "extents +/−"].map((c) => h("th", {}, c)))),
      h("tbody", {}, history.commits.map((s) => h("tr", { dataset: { snapshot: String(s.snapshot_id) } },
        h("td", { class: "num" }, String(s.snapshot_id)), h("td", {}, s.created_at), h("td", {}, s.source || ""),
        h("td", { class: "num" }, String(s.added_rows ?? "")),
        h("td", { class: "num" }, `${s.added_extents ?? 0} / ${s.removed_extents ?? 0}`))))),
  ];
}

function statusCell(status) {
  if (!status) return h("td", {}, "");
  return h("td", { class: `state state-${status.state}` }, status.state);
}

function lag(status) {
  if (!status) return "";
  if (status.sync) return `${status.sync.lag_bytes ?? "?"} bytes, ${status.sync.lag_seconds ?? "?"} s`;
  if (status.lag !== undefined && status.lag !== null) return `${status.lag} ${status.lag_unit || ""}`;
  return "";
}

async function withStatus(items, path) {
  return Promise.all(items.map(async (item) => {
    try {
      return [item, await api(`${path}/${encodeURIComponent(item.name)}/status`)];
    } catch (e) {
      return [item, { state: "unknown", last_error: e.message }];
    }
  }));
}

export async function operationsPage(root) {
  const [{ connectors }, { sources }] = await Promise.all([api("/v1/connectors"), api("/v1/sources")]);
  const [connected, sourced] = await Promise.all([withStatus(connectors, "/v1/connectors"), withStatus(sources, "/v1/sources")]);
  const running = h("tbody", { id: "ops-running" });
  clear(root, h("div", { class: "operations" },
    h("h2", {}, "Connectors"),
    h("table", { class: "list", id: "ops-connectors" },
      h("thead", {}, h("tr", {}, ["name", "type", "mode", "state", "lag", "last error"].map((c) => h("th", {}, c)))),
      h("tbody", {}, connected.map(([c, s]) => h("tr", { dataset: { connector: c.name } },
        h("td", {}, h("b", {}, c.name)), h("td", {}, c.type || ""), h("td", {}, c.mode || ""), statusCell(s),
        h("td", {}, lag(s)), h("td", { class: "error" }, s.last_error || s.disabled_reason || ""))))),
    h("h2", {}, "Sources"),
    h("table", { class: "list", id: "ops-sources" },
      h("thead", {}, h("tr", {}, ["name", "type", "table", "state", "rows/s", "lag", "last error"].map((c) => h("th", {}, c)))),
      h("tbody", {}, sourced.map(([src, s]) => h("tr", { dataset: { source: src.name } },
        h("td", {}, h("b", {}, src.name)), h("td", {}, src.type || ""), h("td", {}, src.table || ""), statusCell(s),
        h("td", { class: "num" }, s.rows_per_second ?? ""), h("td", {}, lag(s)), h("td", { class: "error" }, s.last_error || ""))))),
    h("h2", {}, "Running statements"),
    h("table", { class: "list" },
      h("thead", {}, h("tr", {}, ["id", "who", "client", "elapsed", "sql", ""].map((c) => h("th", {}, c)))), running)));

  async function refresh() {
    if (!running.isConnected) return;
    const { queries } = await api("/v1/queries");
    clear(running, queries.map((q) => h("tr", { dataset: { statement: q.id } },
      h("td", {}, q.id), h("td", {}, q.principal), h("td", {}, q.client), h("td", { class: "num" }, `${q.elapsed_ms} ms`),
      h("td", {}, h("code", {}, q.sql)),
      h("td", {}, h("button", { disabled: q.stopping, onclick: () => api(`/v1/queries/${encodeURIComponent(q.id)}`, { method: "DELETE" }).then(refresh) },
        q.stopping ? "stopping" : "Stop")))));
    setTimeout(() => refresh().catch(() => {}), 2000);
  }
  await refresh();
}
