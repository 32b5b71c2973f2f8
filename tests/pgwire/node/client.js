// node-postgres against kyma: node client.js <port> <token> prints one JSON object.
const { Client } = require("pg");

async function main() {
  const [port, password] = process.argv.slice(2);
  const client = new Client({ host: "127.0.0.1", port: +port, user: "kyma", database: "kyma", password });
  try {
    await client.connect();
  } catch (e) {
    console.log(JSON.stringify({ connectError: e.message, code: e.code }));
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

main().catch((e) => { console.error(e); process.exit(1); });
