// The explorer's search box as SQL: words → has_token over the table's text columns,
// field:value → equality on a column, column.path:value → a dynamic column's path.
// Values go into SQL only as quoted literals, names only as quoted identifiers.

import { ident, literal } from "./api.js";

const TEXT_FIRST = ["body", "message", "msg", "text", "log", "name", "status_message"];
const NUMERIC = new Set(["int", "long", "real"]);

/** The search text as terms: [{word}] and [{field, value}]; "double quotes" keep spaces. */
export function terms(text) {
  const found = [];
  let i = 0;
  const s = text.trim();
  while (i < s.length) {
    while (s[i] === " ") i++;
    if (i >= s.length) break;
    let token = "";
    let field = null;
    while (i < s.length && s[i] !== " ") {
      if (s[i] === '"') {
        const end = s.indexOf('"', i + 1);
        token += s.slice(i + 1, end < 0 ? s.length : end);
        i = end < 0 ? s.length : end + 1;
      } else if (s[i] === ":" && field === null && token) {
        field = token;
        token = "";
        i++;
      } else token += s[i++];
    }
    if (field !== null) found.push({ field, value: token });
    else if (token) found.push({ word: token });
  }
  return found;
}

/** The columns plain words are looked up in. */
export function textColumns(columns) {
  const strings = columns.filter((c) => c.type === "string");
  const preferred = strings.filter((c) => TEXT_FIRST.includes(c.name));
  return preferred.length ? preferred : strings;
}

function fieldCondition(columns, field, value) {
  const column = columns.find((c) => c.name === field);
  if (column) {
    if (NUMERIC.has(column.type) && value !== "" && !Number.isNaN(Number(value))) {
      return `${ident(field)} = ${Number(value)}`;
    }
    if (column.type === "string") return `${ident(field)} = ${literal(value)}`;
    return `CAST(${ident(field)} AS TEXT) = ${literal(value)}`;
  }
  const dot = field.indexOf(".");
  const head = dot > 0 ? columns.find((c) => c.name === field.slice(0, dot) && c.type === "dynamic") : null;
  const dynamic = head || columns.find((c) => c.name === "attributes" && c.type === "dynamic");
  if (!dynamic) throw new Error(`no column ${JSON.stringify(field)}`);
  const path = head ? field.slice(dot + 1) : field;
  return `${ident(dynamic.name)}[${literal(path)}] = ${literal(value)}`;
}

/** The search as a SQL condition (null: no condition). */
export function condition(text, columns) {
  const parts = [];
  const words = textColumns(columns);
  for (const term of terms(text)) {
    if (term.field !== undefined) parts.push(fieldCondition(columns, term.field, term.value));
    else {
      if (!words.length) throw new Error("this table has no text column to search words in");
      const any = words.map((c) => `has_token(${ident(c.name)}, ${literal(term.word.toLowerCase())})`);
      parts.push(any.length > 1 ? `(${any.join(" OR ")})` : any[0]);
    }
  }
  return parts.length ? parts.join(" AND ") : null;
}

function tokens(value) {
  return String(value).toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

/** Whether a row (an object by column name) matches the search: for live tail's rows. */
export function matches(row, text, columns) {
  const words = textColumns(columns);
  return terms(text).every((term) => {
    if (term.word !== undefined) {
      const word = term.word.toLowerCase();
      return words.some((c) => row[c.name] != null && tokens(row[c.name]).includes(word));
    }
    if (term.field in row) return String(row[term.field]) === term.value;
    const dot = term.field.indexOf(".");
    const head = dot > 0 && row[term.field.slice(0, dot)];
    const bag = head && typeof head === "object" ? head : row.attributes;
    const path = head && typeof head === "object" ? term.field.slice(dot + 1) : term.field;
    return bag != null && typeof bag === "object" && String(bag[path]) === term.value;
  });
}
