// The console's shell: sign-in when the server wants a token, then a page per route
// (#/sql, #/explore/<table>, #/trace/<table>/<trace id>, #/catalog, #/operations, and
// #/tokens for a token that may manage tokens).

import "uplot/dist/uPlot.min.css";
import "./style.css";
import { api, ApiError, getToken, onUnauthenticated, setToken } from "./api.js";
import { catalogPage, operationsPage } from "./catalog.js";
import { clear, h } from "./dom.js";
import { explorer } from "./explorer.js";
import { mayManageTokens, tokensPage } from "./tokens.js";
import { traceView } from "./trace.js";
import { workspace } from "./workspace.js";

const app = document.getElementById("app");
let current = null;

function signIn(message) {
  if (current?.close) current.close();
  current = null;
  const input = h("input", { id: "signin-token", type: "password", placeholder: "kyma_…", autocomplete: "off", required: true });
  const error = h("p", { class: "error", id: "signin-error" }, message || "");
  clear(app, h("div", { class: "signin" },
    h("h1", {}, "kyma"),
    h("form", { onsubmit: async (e) => {
      e.preventDefault();
      setToken(input.value.trim());
      try {
        await api("/v1/tables");
        route();
      } catch (err) {
        setToken(null);
        error.textContent = err instanceof ApiError && err.status === 401 ? "this token was refused" : String(err.message || err);
      }
    } },
    h("label", { for: "signin-token" }, "API token"), input, h("button", { class: "primary", id: "signin-submit" }, "Sign in"), error,
    h("p", { class: "hint" }, "Make one with: kyma token create --scope read"))));
  input.focus();
}

onUnauthenticated(() => {
  if (!document.getElementById("signin-token")) signIn(getToken() ? "your token was refused; sign in again" : "");
});

function shell(active, admin) {
  const link = (href, label, name) => h("a", { href, class: active === name ? "active" : "", id: `nav-${name}` }, label);
  const main = h("main", { id: "page" });
  clear(app, h("header", {},
    h("b", { class: "brand" }, "kyma"),
    h("nav", {}, link("#/sql", "SQL", "sql"), link("#/explore", "Explore", "explore"),
      link("#/catalog", "Catalog", "catalog"), link("#/operations", "Operations", "operations"),
      admin ? link("#/tokens", "Tokens", "tokens") : null),
    getToken() ? h("button", { class: "signout", id: "signout", onclick: () => { setToken(null); route(); } }, "Sign out") : null),
    main);
  return main;
}

async function schema() {
  const { tables } = await api("/v1/tables");
  return Object.fromEntries(tables.map((t) => [t.name, t.columns]));
}

async function route() {
  if (current?.close) current.close();
  current = null;
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const page = parts[0] || "sql";
  let tables, admin;
  try {
    tables = await schema();
    admin = await mayManageTokens(getToken());
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return signIn(getToken() ? "your token was refused; sign in again" : "");
    clear(app, h("p", { class: "error" }, String(e.message || e)));
    return;
  }
  const main = shell(page, admin);
  try {
    if (page === "explore" || page === "trace") {
      const names = Object.keys(tables).sort();
      const table = parts[1] || names[0];
      if (!table) clear(main, h("p", { class: "empty" }, "no tables yet"));
      else if (!tables[table]) clear(main, h("p", { class: "error" }, `no table ${table}`));
      else if (page === "trace") await traceView(main, { table, traceId: parts[2] || "" });
      else current = explorer(main, { table, columns: tables[table], tables: names });
    } else if (page === "catalog") await catalogPage(main);
    else if (page === "operations") await operationsPage(main);
    else if (page === "tokens") {
      if (admin) await tokensPage(main);
      else clear(main, h("p", { class: "error", id: "tokens-refused" }, "managing tokens needs an admin token"));
    }
    else workspace(main, { schema: tables });
  } catch (e) {
    clear(main, h("p", { class: "error" }, e instanceof ApiError ? `${e.body?.error}: ${e.body?.message}` : String(e.message || e)));
  }
}

window.addEventListener("hashchange", route);
route();
