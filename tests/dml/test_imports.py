"""``read_parquet``, ``read_csv`` and ``read_ndjson`` over the folder an admin allowed
(``KYMA_IMPORT_DIRS``), in SELECT, INSERT … SELECT and CREATE TABLE AS, over the Postgres
protocol and HTTP; any other path — outside it, through ``..`` or a symbolic link out of
it — is 42501 (HTTP 403) and nothing is read."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROWS = [(i, f"s{i % 4}", i * 0.5) for i in range(1, 301)]


@pytest.fixture(scope="module")
def folder(kyma) -> Path:
    root = Path(kyma.services.settings.allowed_import_dirs[0])
    n, s, r = (list(c) for c in zip(*ROWS, strict=True))
    pq.write_table(pa.table({"n": n, "s": s, "r": r}), root / "rows.parquet")
    (root / "parts").mkdir()
    for i in range(3):  # a folder of three files, 100 rows each
        part = slice(i * 100, (i + 1) * 100)
        pq.write_table(pa.table({"n": n[part], "s": s[part]}), root / "parts" / f"{i}.parquet")
    lines = ["n,s,r", *(f"{a},{b},{c}" for a, b, c in ROWS)]
    (root / "rows.csv").write_text("\n".join(lines) + "\n")
    (root / "rows.ndjson").write_text(
        "".join(json.dumps({"n": a, "s": b, "r": c}) + "\n" for a, b, c in ROWS)
    )
    (root / "out").symlink_to("/etc")
    return root


def test_files_read_as_tables(kyma, folder: Path) -> None:
    total = sum(r for _, _, r in ROWS)
    per = sorted({s for _, s, _ in ROWS})
    with kyma.connect() as conn:
        for function, name in [
            ("read_parquet", "rows.parquet"),
            ("read_csv", "rows.csv"),
            ("read_ndjson", "rows.ndjson"),
        ]:
            sql = f"SELECT count(*), sum(n), sum(r) FROM {function}('{folder / name}')"
            assert conn.execute(sql).fetchone() == (300, 45150, total), sql
            grouped = f"SELECT f.s, count(*) FROM {function}('{folder / name}') AS f GROUP BY 1"
            assert sorted(conn.execute(grouped).fetchall()) == [(s, 75) for s in per]
        parts = f"SELECT count(*), max(n) FROM read_parquet('{folder / 'parts'}')"
        assert conn.execute(parts).fetchone() == (300, 300)


def test_insert_select_and_create_table_as_load_them(kyma, folder: Path) -> None:
    with kyma.connect() as conn:
        conn.execute("CREATE TABLE imported (n long, s string)")
        sql = f"INSERT INTO imported (n, s) SELECT n, s FROM read_parquet('{folder}/rows.parquet')"
        assert conn.execute(sql).statusmessage == "INSERT 0 300"
        made = conn.execute(
            f"CREATE TABLE from_csv AS SELECT n, r FROM read_csv('{folder}/rows.csv') WHERE n > 100"
        )
        assert made.statusmessage == "SELECT 200"
        answer = conn.execute(
            "SELECT (SELECT count(*) FROM imported), (SELECT sum(n) FROM imported"
            " JOIN read_ndjson('" + str(folder / "rows.ndjson") + "') AS j USING (n)),"
            " (SELECT min(n) FROM from_csv)"
        ).fetchone()
        assert answer == (300, 45150, 101)


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "{folder}/../../etc/passwd", "{folder}/out/passwd", "{folder}/../dml"],
)
def test_paths_outside_the_allowed_folder_are_refused(kyma, folder: Path, path: str) -> None:
    sql = f"SELECT count(*) FROM read_csv('{path.format(folder=folder)}')"
    with kyma.connect() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
        conn.execute(sql)
    assert "KYMA_IMPORT_DIRS" in str(refused.value)
    status, body = kyma.http(sql)
    assert status == 403, body
