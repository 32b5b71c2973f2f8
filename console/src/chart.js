// A chart from a result: the first timestamp column on x, every numeric column a series,
// drawn as lines, bars or areas (uPlot).

import uPlot from "uplot";
import { h, timestampMs } from "./dom.js";

const NUMERIC = new Set(["int", "long", "real", "decimal"]);
const COLORS = ["#3c78d8", "#e69138", "#6aa84f", "#cc0000", "#674ea7", "#45818e"];

/** Whether `columns` can be charted: a timestamp column and a numeric one. */
export function chartable(columns) {
  return columns.some((c) => c.type === "timestamp") && columns.some((c) => NUMERIC.has(c.type));
}

export function chart(columns, rows, kind, width) {
  const x = columns.findIndex((c) => c.type === "timestamp");
  const ys = columns.map((c, i) => [c, i]).filter(([c]) => NUMERIC.has(c.type));
  const ordered = [...rows].filter((r) => r[x] !== null).sort((a, b) => timestampMs(a[x]) - timestampMs(b[x]));
  const data = [ordered.map((r) => timestampMs(r[x]) / 1000), ...ys.map(([, i]) => ordered.map((r) => (r[i] === null ? null : Number(r[i]))))];
  const series = ys.map(([c], n) => ({
    label: c.name,
    stroke: COLORS[n % COLORS.length],
    fill: kind === "line" ? undefined : `${COLORS[n % COLORS.length]}66`,
    paths: kind === "bar" ? uPlot.paths.bars({ size: [0.8] }) : undefined,
  }));
  const box = h("div", { class: "chart", id: "sql-chart", dataset: { points: String(ordered.length), series: String(ys.length) } });
  new uPlot({ width, height: 260, scales: { x: { time: true } }, series: [{}, ...series] }, data, box);
  return box;
}
