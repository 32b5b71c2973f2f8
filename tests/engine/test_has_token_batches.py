"""``has_token`` over a table of many record batches: DataFusion hands a function every batch
after a partition's first as a slice whose offsets start past 0, which pyarrow's
``ascii_lower`` read wrong (rows of later batches were missed, or matched by chance)."""

from __future__ import annotations

import pyarrow as pa

ROWS = 20_000
NEEDLE_AT = 12_500


def test_has_token_sees_every_batch_of_an_extent(services) -> None:  # type: ignore[no-untyped-def]
    messages = [f"Row {i} OK" for i in range(ROWS)]
    messages[NEEDLE_AT] = "read Zebra x"
    services.query.execute("CREATE TABLE needle (message string, k long)")
    batch = pa.record_batch({"message": messages, "k": pa.array(range(ROWS), pa.int64())})
    services.write_path.ingest_batches("needle", [batch], source="test")
    for _ in range(2):  # read from the files, then from the decoded-column cache
        answer = services.query.execute(
            "SELECT count(*) FILTER (WHERE has_token(message, 'ok')) AS ok,"
            " array_agg(k) FILTER (WHERE has_token(message, 'zebra')) AS zebra FROM needle"
        )
        assert answer.table.to_pylist() == [{"ok": ROWS - 1, "zebra": [NEEDLE_AT]}]
