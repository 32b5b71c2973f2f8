// The HTTP API as the console calls it: a bearer token from sign-in, JSON in and out.

const TOKEN_KEY = "kyma.token";

export class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.message || body.error)) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

let unauthenticated = () => {};

export function onUnauthenticated(handler) {
  unauthenticated = handler;
}

export function getToken() {
  return localStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

function headers(extra = {}) {
  const h = { ...extra };
  const token = getToken();
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

export async function api(path, { method = "GET", body, extraHeaders = {}, signal } = {}) {
  const h = headers(extraHeaders);
  if (body !== undefined) h["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { message: text };
  }
  if (response.status === 401) unauthenticated();
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/** One SQL statement through POST /v1/query; `requestId` lets a cancel find it. */
export function query(sql, { requestId, signal } = {}) {
  const extraHeaders = requestId ? { "X-Request-Id": requestId } : {};
  return api("/v1/query", { method: "POST", body: { sql }, extraHeaders, signal });
}

/** One SQL statement's answer as a file (`accept`: its media type, e.g. Parquet's), a Blob. */
export async function queryFile(sql, accept) {
  const response = await fetch("/v1/query", {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", Accept: accept }),
    body: JSON.stringify({ sql }),
  });
  if (response.status === 401) unauthenticated();
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  return response.blob();
}

/** Stop the running statement sent with `requestId` (DELETE /v1/queries/<id>). */
export async function cancel(requestId) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { queries } = await api("/v1/queries");
    const mine = queries.find((q) => q.request_id === requestId);
    if (mine) return api(`/v1/queries/${encodeURIComponent(mine.id)}`, { method: "DELETE" });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the statement is not running (it may have finished)");
}

/** Live tail: server-sent events from GET /v1/tables/<name>/tail, read with fetch so the
 * token goes in a header. `onRows` gets each event's data, `onOpen` is called once the
 * server subscribed; resolves when the stream ends. */
export async function tail(table, onRows, signal, onOpen = () => {}) {
  const response = await fetch(`/v1/tables/${encodeURIComponent(table)}/tail`, {
    headers: headers({ Accept: "text/event-stream" }),
    signal,
  });
  if (response.status === 401) unauthenticated();
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  onOpen();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (event === "rows" && data.length) onRows(JSON.parse(data.join("\n")));
    }
  }
}

/** A SQL string literal. */
export function literal(text) {
  return `'${String(text).replaceAll("'", "''")}'`;
}

/** A SQL identifier, quoted. */
export function ident(name) {
  return `"${String(name).replaceAll('"', '""')}"`;
}
