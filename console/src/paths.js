// The paths a dynamic column holds (SHOW PATHS, from the catalog's present_paths): for the
// editor's completion and the explorer's facets.

import { ident, literal, query } from "./api.js";

/** [{keys: ["http.method"], types: ["string"], rows}] of `table`.`column`, most rows first. */
export async function dynamicPaths(table, column) {
  const answer = await query(`SHOW PATHS FROM ${ident(table)}.${ident(column)}`);
  const found = [];
  for (const [path, types, , rows] of answer.rows) {
    if (!path || path.includes('"')) continue;  // quoted elements: not offered
    found.push({ keys: path.slice(1, -1).split(","), types: types || [], rows });
  }
  return found.sort((a, b) => b.rows - a.rows);
}

/** `column['a']['b']`: a path as kyma's SQL spells it. */
export function pathSql(column, keys) {
  return `${ident(column)}${keys.map((k) => `[${literal(k)}]`).join("")}`;
}

/** Every dynamic column's paths in `schema` ({table: [{name, type}]}), as completions. */
export async function pathCompletions(schema) {
  const wanted = Object.entries(schema).flatMap(([t, cols]) => cols.filter((c) => c.type === "dynamic").map((c) => [t, c.name]));
  const lists = await Promise.all(wanted.map(([t, c]) => dynamicPaths(t, c).catch(() => [])));
  const seen = new Set();
  const out = [];
  wanted.forEach(([table, column], i) => {
    for (const p of lists[i]) {
      const label = `${column}${p.keys.map((k) => `['${k.replaceAll("'", "''")}']`).join("")}`;
      if (seen.has(label)) continue;
      seen.add(label);
      out.push({ label, type: "variable", detail: `${(p.types || []).join("|")} (${table})` });
    }
  });
  return out;
}
