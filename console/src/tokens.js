// The tokens page (admin tokens only): every API token with its scopes, tables and state,
// a form that creates one (shown once) and Revoke, over /v1/tokens.

import { ApiError, api } from "./api.js";
import { clear, h } from "./dom.js";

let known = null;  // [token, may administer tokens?] of the last check

/** Whether the signed-in token may manage tokens: GET /v1/tokens answers it, 403 does not. */
export async function mayManageTokens(token) {
  if (known && known[0] === token) return known[1];
  let allowed;
  try {
    await api("/v1/tokens");
    allowed = true;
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 403) throw e;
    allowed = false;
  }
  known = [token, allowed];
  return allowed;
}

export async function tokensPage(root) {
  const list = h("tbody", { id: "tokens-list" });
  const created = h("div", { id: "token-created" });
  const error = h("p", { class: "error", id: "token-error" });
  const name = h("input", { id: "token-name", placeholder: "name (optional)" });
  const scope = h("select", { id: "token-scope" }, ["read", "ingest", "admin"].map((s) => h("option", { value: s }, s)));
  const tables = h("input", { id: "token-tables", placeholder: "tables, comma separated (all if empty)" });

  async function refresh() {
    const { tokens } = await api("/v1/tokens");
    clear(list, tokens.map((t) => h("tr", { dataset: { token: String(t.id) }, class: t.revoked_at ? "revoked" : "" },
      h("td", { class: "num" }, String(t.id)), h("td", {}, t.name || ""), h("td", {}, t.scopes.join(", ")),
      h("td", {}, t.tables ? t.tables.join(", ") : "all"), h("td", {}, t.created_at),
      h("td", { class: "state" }, t.revoked_at ? `revoked ${t.revoked_at}` : "active"),
      h("td", {}, t.revoked_at ? "" : h("button", { class: "revoke", onclick: () => revoke(t) }, "Revoke")))));
  }

  async function revoke(t) {
    if (!confirm(`Revoke token ${t.id}${t.name ? ` (${t.name})` : ""}? Clients using it are refused from their next request.`)) return;
    try {
      await api(`/v1/tokens/${t.id}`, { method: "DELETE" });
      await refresh();
    } catch (e) {
      error.textContent = String(e.message || e);
    }
  }

  async function create(e) {
    e.preventDefault();
    error.textContent = "";
    const names = tables.value.split(",").map((t) => t.trim()).filter(Boolean);
    const body = { scopes: [scope.value], name: name.value.trim() || undefined, tables: names.length ? names : undefined };
    try {
      const answer = await api("/v1/tokens", { method: "POST", body });
      clear(created, h("p", {}, `Token ${answer.id} (shown once, copy it now): `, h("code", { id: "token-secret" }, answer.token)));
      name.value = tables.value = "";
      await refresh();
    } catch (err) {
      error.textContent = err instanceof ApiError && err.body ? `${err.body.error}: ${err.body.message}` : String(err.message || err);
    }
  }

  clear(root, h("div", { class: "tokens" },
    h("h2", {}, "New token"),
    h("form", { id: "token-form", onsubmit: create }, name, scope, tables, h("button", { class: "primary", id: "token-create" }, "Create")),
    created, error,
    h("h2", {}, "Tokens"),
    h("table", { class: "list" },
      h("thead", {}, h("tr", {}, ["id", "name", "scopes", "tables", "created", "state", ""].map((c) => h("th", {}, c)))), list)));
  await refresh();
}
