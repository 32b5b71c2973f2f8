"""The column-wise pgoutput decoder against the row-wise one, on the same peeked messages of a
real slot: the same batches, or None (the worker then decodes row by row) for what only the
row-wise path handles."""

from __future__ import annotations

import time
from typing import Any

import pyarrow as pa
from cdc_helpers import body, drain, equal_both_ways, kyma

from kyma.connectors.postgres.cdc import _slot
from kyma.connectors.postgres.cdc._columnar import Messages

TABLE = """
CREATE TABLE t (a int, b text, v numeric(10,2), w numeric, f real, g double precision,
                ts timestamptz, tsl timestamp, d date, ok boolean, c char(4), u uuid,
                big bigint, j jsonb, arr int[], PRIMARY KEY (a, b));
INSERT INTO t SELECT g, 'k' || g, g * 1.25, g / 3.0, g / 7.0, g / 9.0,
                     '2024-01-01+00'::timestamptz + g * interval '1.5 second',
                     '2024-01-01'::timestamp + g * interval '1 day', date '2024-02-28' + g,
                     g % 2 = 0, 'c' || g % 10, md5(g::text)::uuid, g::bigint << 40,
                     jsonb_build_object('g', g), ARRAY[g, NULL]
FROM generate_series(1, 20) g;
"""


def decoded_both_ways(w: Any) -> tuple[Any, Any]:
    """(column-wise, row-wise) decodings of what the slot holds now, without consuming it."""
    state = w.cdc.state(w.id)
    confirmed = state.confirmed_lsn or 0
    floors = {t.source_table: max(t.cursor_lsn or 0, confirmed) for t in state.tables}
    conn = w._source()
    position = _slot.where(conn, w.slot)
    m = Messages.joined(*_slot.peek(conn, w.slot, position.wal_end, 100_000))
    return w.decoder.columnar(conn, m, floors), w.decoder.rowwise(conn, m, floors)


def ordered(table: pa.Table) -> list[dict[str, Any]]:
    """The rows by key and LSN, NaN as the text 'NaN' (so that it equals itself)."""
    rows = [{k: "NaN" if v != v else v for k, v in r.items()} for r in table.to_pylist()]
    return sorted(rows, key=lambda r: (r["_kyma_pk"], r["_kyma_lsn"]))


def same_batches(columnar: Any, rowwise: Any) -> None:
    assert [t.end_lsn for t in columnar[0]] == [t.end_lsn for t in rowwise[0]]
    assert columnar[1].keys() == rowwise[1].keys()
    for name, (batch, count) in columnar[1].items():
        expected, expected_count = rowwise[1][name]
        assert batch.schema == expected.schema
        assert ordered(batch) == ordered(expected)
        assert count == expected_count


def test_columnar_decoding_matches_row_by_row(services, cdc_source, worker) -> None:
    cdc_source.execute(TABLE)
    services.connectors.create(body(cdc_source, ["public.t"]))
    w = worker()
    w.start()
    cdc_source.execute("UPDATE t SET v = v + 0.01, f = 'NaN', ts = now(), j = '[1]' WHERE a <= 10")
    cdc_source.execute(
        "BEGIN;"
        " INSERT INTO t (a, b, v, ts, d, ok)"
        "  VALUES (100, 'x:y', 1.5, 'infinity', '-infinity', true);"
        " UPDATE t SET v = 2.5, c = 'zz' WHERE a = 100;"  # inserted, then updated: an insert
        " DELETE FROM t WHERE a IN (2, 3);"
        " INSERT INTO t (a, b, g) VALUES (3, 'k3', 'Infinity');"  # deleted, then inserted
        " UPDATE t SET g = -0.5 WHERE a = 4; UPDATE t SET g = NULL, u = NULL WHERE a = 4;"
        " COMMIT"
    )
    cdc_source.execute("INSERT INTO t (a, b, w) VALUES (200, 'é', 0.50), (201, '', 1e-20)")
    columnar, rowwise = decoded_both_ways(w)
    assert columnar is not None, "the column-wise decoder left these to the row-wise one"
    assert len(columnar[0]) == 3 and columnar[1]["public.t"][1] == 10 + 7 + 2
    same_batches(columnar, rowwise)
    assert w.status()["last_commit_at"] is None
    assert drain(w) == 3
    status = w.status()
    assert status["changes_per_s"] > 0 and status["last_commit_at"] <= time.time()
    equal_both_ways(services, "pg.public.t")
    changes = "pg.public.t__changes"
    ops = kyma(
        services,
        f"SELECT _kyma_pk, _kyma_op FROM {changes} WHERE _kyma_lsn ="
        f" (SELECT _kyma_lsn FROM {changes} WHERE _kyma_pk = '100:x:y') ORDER BY _kyma_pk",
    ).to_pylist()
    assert [(r["_kyma_pk"], r["_kyma_op"]) for r in ops] == [
        ("100:x:y", "insert"),
        ("2:k2", "delete"),
        ("3:k3", "insert"),
        ("4:k4", "update"),
    ]


def test_what_the_columnar_decoder_leaves_to_the_row_wise_one(services, cdc_source, worker) -> None:
    """TRUNCATE, a changed key and an unchanged TOASTed value: None, and the worker's batch
    (row by row) is right."""
    cdc_source.execute(TABLE)
    cdc_source.execute(
        "ALTER TABLE t ADD COLUMN body text; ALTER TABLE t ALTER body SET STORAGE EXTERNAL;"
        " UPDATE t SET body = repeat('b', 9000) WHERE a = 5"
    )
    services.connectors.create(body(cdc_source, ["public.t"]))
    w = worker()
    w.start()
    for change in (
        "UPDATE t SET v = 7 WHERE a = 5",  # big_text stays in TOAST: unchanged
        "UPDATE t SET b = 'moved' WHERE a = 6",  # the key changes
        "TRUNCATE t",
    ):
        cdc_source.execute(change)
        columnar, _ = decoded_both_ways(w)
        assert columnar is None, change
        assert drain(w) == 1
        equal_both_ways(services, "pg.public.t")
