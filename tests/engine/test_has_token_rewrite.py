"""``has_token`` with a literal word runs as DataFusion's regular expression
(``rewrite/has_token.py``), not the Python function, with the function's answers."""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.query.udfs import has_token

TEXTS = [
    None,
    "",
    "zanzibar",
    "ZANZIBAR!",
    "xzanzibar",
    "zanzibar1",
    "to zanzibar_x",
    "é zanzibar",
    "zanzibaré",
    "Zanzi bar",
    "\u212aelvin kelvin",
    "\u212aelvin only",
    "db2-db2 DB2",
    "line\nzanzibar\n",
    "ſs long s",
]
TOKENS = ["zanzibar", "ZanZibar", "kelvin", "\u212aelvin", "db2", "s", "a-b", "", "zan"]


def test_has_token_answers_as_the_function_does(services) -> None:
    services.query.execute("CREATE TABLE texts (n long, m string)")
    batch = pa.record_batch(
        {"n": pa.array(range(len(TEXTS)), pa.int64()), "m": pa.array(TEXTS, pa.string())}
    )
    services.write_path.ingest_batches("texts", iter([batch]), source="test")
    column = pa.array(TEXTS, pa.string())
    for token in TOKENS:
        literal = token.replace("'", "''")
        sql = f"SELECT n, has_token(m, '{literal}') AS h FROM texts ORDER BY n"
        got = services.query.execute(sql).table.column("h").to_pylist()
        expected = has_token(column, pa.array([token] * len(TEXTS))).to_pylist()
        assert got == expected, token
        where = f"SELECT n FROM texts WHERE has_token(m, '{literal}') ORDER BY n"
        kept = services.query.execute(where).table.column("n").to_pylist()
        assert kept == [n for n, h in enumerate(expected) if h], token
    plan = services.query.execute("EXPLAIN SELECT n FROM texts WHERE has_token(m, 'db2')")
    text = " ".join(plan.table.column("plan").to_pylist())
    assert "has_token" not in text and "~ (^|[^0-9A-Za-z])[dD][bB]2" in text, text
