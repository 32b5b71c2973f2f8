// The results grid: only the rows in view are in the DOM (fixed row height), a click on a
// header sorts, Copy puts the rows on the clipboard as TSV, CSV downloads them.

import { cellText, clear, h } from "./dom.js";

const ROW_HEIGHT = 24;
const OVERSCAN = 20;

export function csv(columns, rows) {
  const quote = (v) => {
    if (v === null || v === undefined) return "";
    const text = cellText(v);
    return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const lines = [columns.map((c) => quote(c.name)).join(",")];
  for (const row of rows) lines.push(row.map(quote).join(","));
  return lines.join("\r\n") + "\r\n";
}

export function tsv(columns, rows) {
  const clean = (v) => cellText(v).replace(/[\t\n\r]/g, " ");
  return [columns.map((c) => c.name).join("\t"), ...rows.map((r) => r.map(clean).join("\t"))].join("\n");
}

export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return cellText(a) < cellText(b) ? -1 : 1;
}

/** A grid of `columns` ({name, type}) and `rows` (arrays) in `parent`. */
export function grid(parent, columns, rows) {
  let view = rows;
  let sort = null;
  const width = 180;
  const total = columns.length * width;
  const head = h("div", { class: "grid-head", style: `width:${total}px` },
    columns.map((c, i) => h("div", {
      class: "grid-cell grid-th", title: `${c.name} ${c.type}`, style: `width:${width}px`,
      onclick: () => sortBy(i),
    }, c.name, h("span", { class: "grid-type" }, ` ${c.type}`))));
  const body = h("div", { class: "grid-body", style: `width:${total}px` });
  const spacer = h("div", { class: "grid-spacer", style: `width:${total}px` }, body);
  const scroller = h("div", { class: "grid-scroll" }, head, spacer);

  function sortBy(i) {
    const descending = sort && sort.i === i && !sort.descending;
    sort = { i, descending };
    view = [...rows].sort((a, b) => (descending ? -1 : 1) * compare(a[i], b[i]));
    render(true);
  }

  let rendered = "";
  function render(force) {
    spacer.style.height = `${view.length * ROW_HEIGHT}px`;
    const top = Math.max(0, scroller.scrollTop - ROW_HEIGHT);
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(view.length, first + Math.ceil((scroller.clientHeight || 600) / ROW_HEIGHT) + 2 * OVERSCAN);
    const key = `${first}:${last}`;
    if (!force && key === rendered) return;
    rendered = key;
    body.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    clear(body, view.slice(first, last).map((row) => h("div", { class: "grid-row" },
      row.map((v) => h("div", {
        class: `grid-cell${v === null ? " null" : ""}`, style: `width:${width}px`, title: cellText(v),
      }, cellText(v))))));
  }
  scroller.addEventListener("scroll", () => render(false));
  clear(parent, scroller);
  render(true);
  return { rows: () => view };
}
