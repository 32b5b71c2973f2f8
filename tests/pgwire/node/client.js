// node-postgres against kyma: node client.js <port> <token> [long query] prints one JSON
// object. With a long query it runs that and cancels it after a second instead.
const { Client } = require("pg");

async function main() {
  const [port, password, longQuery] = process.argv.slice(2);
  const config = { host: "127.0.0.1", port: +port, user: "kyma", database: "kyma", password };
  const client = new Client(config);
  try {
    await client.connect();
  } catch (e) {
    console.log(JSON.stringify({ connectError: e.message, code: e.code }));
    return;
  }
  if (longQuery) {
    console.log(JSON.stringify(await cancelled(client, config, longQuery)));
    await client.end();
    return;
  }
  const tables = await client.query(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", ["public"]);
  const columns = await client.query(
    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1" +
    " ORDER BY ordinal_position", ["events"]);
  const rows = await client.query("SELECT n, msg, ts, attrs, emb FROM events WHERE n >= $1 ORDER BY n", [1]);
  let error = null;
  try {
    await client.query("SELECT * FROM no_such_table");
  } catch (e) {
    error = { message: e.message, code: e.code };
  }
  const after = await client.query("SELECT count(*) AS c FROM events");
  await client.end();
  console.log(JSON.stringify({
    tables: tables.rows.map((r) => r.table_name),
    columns: columns.rows,
    rows: rows.rows,
    types: rows.fields.map((f) => f.dataTypeID),
    error,
    after: after.rows,
  }));
}

// A second client sends the cancel request for the first one's running query.
async function cancelled(client, config, longQuery) {
  const started = Date.now();
  const running = client.query(longQuery);
  setTimeout(() => new Client(config).cancel(client, client.activeQuery), 1000);
  let error = null;
  try {
    await running;
  } catch (e) {
    error = { message: e.message, code: e.code };
  }
  const after = await client.query("SELECT count(*) AS c FROM events");
  return { error, seconds: (Date.now() - started) / 1000, after: after.rows };
}

main().catch((e) => { console.error(e); process.exit(1); });
