// From an event to its source-of-truth row: the user picks, per explored table, a federated
// connector table, its key column and the event field holding the key; each row then gets a
// "source" action that opens the SQL workspace on
// SELECT * FROM live(<connector>.<schema>.<table>) WHERE <key> = <the row's value>, and runs it.

import { api, ident, literal } from "./api.js";
import { clear, h } from "./dom.js";

const LINKS_KEY = "kyma.sourceLinks";  // {explored table: {connector, schema, table, key, field}}
export const PENDING_KEY = "kyma.pendingSql";  // SQL the workspace runs when it next opens

function links() {
  try {
    return JSON.parse(localStorage.getItem(LINKS_KEY)) || {};
  } catch {
    return {};
  }
}

export function sourceLink(table) {
  return links()[table] || null;
}

function saveLink(table, link) {
  const all = links();
  if (link) all[table] = link;
  else delete all[table];
  localStorage.setItem(LINKS_KEY, JSON.stringify(all));
}

// live() takes a dotted name; a part that is not a plain lower-case identifier is quoted.
const name = (part) => (/^[a-z_][a-z0-9_]*$/.test(part) ? part : ident(part));

/** The statement reading the source row of `row` through `link`, or null without a key. */
export function sourceSql(link, row) {
  const value = row[link.field];
  if (value === null || value === undefined || typeof value === "object") return null;
  const key = typeof value === "number" || typeof value === "boolean" ? String(value) : literal(value);
  const relation = [link.connector, link.schema, link.table].map(name).join(".");
  return `SELECT * FROM live(${relation}) WHERE ${name(link.key)} = ${key}`;
}

/** Open the SQL workspace and run `sql` there. */
export function openInWorkspace(sql) {
  sessionStorage.setItem(PENDING_KEY, sql);
  location.hash = "#/sql";
}

/** The picker: connector table, key column, event field; `onChange` after each choice. */
export function sourcePicker(table, columns, onChange) {
  const box = h("details", { class: "source-picker", id: "ex-source" }, h("summary", {}, "Source of truth…"));
  const tableSelect = h("select", { id: "ex-source-table" });
  const keySelect = h("select", { id: "ex-source-key" });
  const fieldSelect = h("select", { id: "ex-source-field" },
    columns.filter((c) => c.type !== "dynamic").map((c) => h("option", { value: c.name }, c.name)));
  let found = [];  // [{connector, schema, name, columns}]
  const current = sourceLink(table);

  function keys() {
    const chosen = found[Number(tableSelect.value)];
    clear(keySelect, (chosen?.columns || []).map((c) => h("option", { value: c.name }, c.name)));
    const previous = current && chosen && current.table === chosen.name ? current.key : null;
    if (previous) keySelect.value = previous;
    if (!previous && columns.some((c) => c.name === keySelect.value)) fieldSelect.value = keySelect.value;
  }

  function save() {
    const chosen = found[Number(tableSelect.value)];
    const link = chosen && keySelect.value
      ? { connector: chosen.connector, schema: chosen.schema, table: chosen.name, key: keySelect.value, field: fieldSelect.value }
      : null;
    saveLink(table, link);
    onChange();
  }

  box.addEventListener("toggle", async () => {
    if (!box.open || box.dataset.loaded) return;
    box.dataset.loaded = "loading";
    const { connectors } = await api("/v1/connectors");
    const listed = await Promise.all(connectors.map((c) =>
      api(`/v1/connectors/${encodeURIComponent(c.name)}/tables`).then((t) => t.tables.map((x) => ({ ...x, connector: c.name })), () => [])));
    found = listed.flat();
    clear(tableSelect, h("option", { value: "" }, "(none)"),
      found.map((t, i) => h("option", { value: String(i) }, `${t.connector}.${t.schema}.${t.name}`)));
    const at = current ? found.findIndex((t) => t.connector === current.connector && t.schema === current.schema && t.name === current.table) : -1;
    if (at >= 0) tableSelect.value = String(at);
    keys();
    if (current) fieldSelect.value = current.field;
    box.dataset.loaded = "yes";
  });
  tableSelect.addEventListener("change", () => { keys(); save(); });
  keySelect.addEventListener("change", save);
  fieldSelect.addEventListener("change", save);
  box.append(h("label", {}, "table ", tableSelect), h("label", {}, " key ", keySelect), h("label", {}, " = event field ", fieldSelect));
  return box;
}
