// EXPLAIN ANALYZE drawn as a tree: kyma's stages first (the pruning cascade per table, each
// federated scan's pushdown summary), then DataFusion's plan, nested by its indentation.

import { h } from "./dom.js";

function cascade(table, text) {
  // "stage 1 catalog: 3/10 extents; stage 2 block stats: 4/12 blocks; stage 3 scan: …"
  const stages = text.split(";").map((part) => {
    const [label, rest] = part.split(/:(.*)/s);
    const fraction = /(\d+)\/(\d+)/.exec(rest || "");
    const kept = fraction ? Number(fraction[1]) : null;
    const total = fraction ? Number(fraction[2]) : null;
    const bar = total ? h("span", { class: "bar" }, h("span", { style: `width:${(100 * kept) / total}%` })) : null;
    return h("li", { class: "stage" }, h("b", {}, label.trim()), " ", (rest || "").trim(), bar);
  });
  return h("li", { class: "node pruning" }, h("span", { class: "op" }, `pruning ${table}`), h("ul", {}, stages));
}

function planTree(text) {
  const root = { children: [], depth: -1 };
  const stack = [root];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const depth = line.length - line.trimStart().length;
    const node = { text: line.trim(), children: [], depth };
    while (stack.length > 1 && stack[stack.length - 1].depth >= depth) stack.pop();
    stack[stack.length - 1].children.push(node);
    stack.push(node);
  }
  const draw = (node) => {
    const cut = [node.text.indexOf(":"), node.text.indexOf(",")].filter((i) => i > 0);
    const at = cut.length ? Math.min(...cut) : node.text.length;
    return h("li", { class: "node" }, h("span", { class: "op" }, node.text.slice(0, at)),
      h("span", { class: "detail" }, node.text.slice(at)),
      node.children.length ? h("ul", {}, node.children.map(draw)) : null);
  };
  return h("ul", { class: "tree" }, root.children.map(draw));
}

/** `answer`: the JSON answer of an EXPLAIN [ANALYZE] (rows of plan_type, plan). */
export function explainView(answer) {
  const items = [];
  for (const [kind, plan] of answer.rows) {
    if (kind.startsWith("kyma pruning ")) items.push(cascade(kind.slice(13), plan));
    else if (kind.startsWith("kyma pushdown ")) {
      let summary = plan;
      try {
        summary = JSON.stringify(JSON.parse(plan), null, 2);
      } catch {}
      items.push(h("li", { class: "node pushdown" }, h("span", { class: "op" }, kind.slice(5)), h("pre", {}, summary)));
    } else if (kind === "kyma elapsed") items.push(h("li", { class: "node" }, h("span", { class: "op" }, "elapsed"), ` ${plan}`));
    else items.push(h("li", { class: "node plan" }, h("span", { class: "op plan-type" }, kind), planTree(plan)));
  }
  return h("div", { class: "explain" }, h("ul", { class: "tree" }, items));
}
