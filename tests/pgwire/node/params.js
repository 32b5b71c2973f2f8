// node-postgres with parameters: node params.js '<config JSON>' '<[[sql, params], …] JSON>'
// prints one JSON array: each statement's rows (values as node-postgres reads them) or its
// error's SQLSTATE, so that one run against kyma and one against Postgres compare.
const { Client } = require("pg");

async function main() {
  const [config, statements] = process.argv.slice(2).map((a) => JSON.parse(a));
  const client = new Client(config);
  await client.connect();
  const answers = [];
  for (const [sql, params] of statements) {
    try {
      const result = await client.query({ text: sql, values: params, rowMode: "array" });
      answers.push({ rows: result.rows });
    } catch (e) {
      answers.push({ code: e.code });
    }
  }
  await client.end();
  console.log(JSON.stringify(answers));
}

main().catch((e) => { console.error(e); process.exit(1); });
