// The SQL editor: CodeMirror 6 with Postgres highlighting, completion of the catalog's
// tables and columns and of functions, Ctrl/Cmd-Enter to run.

import { basicSetup, EditorView } from "codemirror";
import { keymap } from "@codemirror/view";
import { Prec } from "@codemirror/state";
import { PostgreSQL, sql } from "@codemirror/lang-sql";

const FUNCTIONS = [
  "has_token", "cosine_distance", "live", "date_bin", "date_trunc", "now", "count", "sum",
  "avg", "min", "max", "coalesce", "lower", "upper", "length", "substring", "extract",
  "to_char", "to_timestamp", "round", "abs", "string_agg", "array_agg", "percentile_cont",
  "approx_percentile_cont", "json_extract_path_text", "jsonb_typeof", "regexp_replace",
  "split_part", "concat", "nullif", "greatest", "least", "generate_series",
];

/** `schema`: {table: [{name, type}]}; `paths`: completions of dynamic paths, filled later. */
export function editor(parent, { doc = "", schema = {}, paths = [], onRun }) {
  const tables = Object.fromEntries(Object.entries(schema).map(([t, cols]) => [t, cols.map((c) => c.name)]));
  const columns = new Map();
  for (const [table, cols] of Object.entries(schema)) {
    for (const c of cols) if (!columns.has(c.name)) columns.set(c.name, `${c.type} (${table})`);
  }
  const extra = (context) => {
    const word = context.matchBefore(/\w+/);  // the word typed so far
    if (!word || (word.from === word.to && !context.explicit)) return null;
    return {
      from: word.from,
      options: [
        ...[...columns].map(([label, detail]) => ({ label, type: "property", detail })),
        ...paths,
        ...FUNCTIONS.map((label) => ({ label, type: "function", apply: `${label}(` })),
      ],
      validFor: /^\w*$/,
    };
  };
  const run = Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (onRun(), true) }]));
  const language = sql({ dialect: PostgreSQL, schema: tables, upperCaseKeywords: true });
  return new EditorView({
    doc,
    parent,
    extensions: [run, basicSetup, language, PostgreSQL.language.data.of({ autocomplete: extra })],
  });
}
