"""``ORDER BY <name>`` where a result column takes that name from its expression, kyma
against a loopback Postgres: Postgres sorts by the result column (``x::text`` sorts as
text), not by the input column of that name; an alias, the column itself and a qualified
name keep sorting as before, and two result columns of that name are ambiguous (42702) in both.
"""

from __future__ import annotations

import psycopg
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError

ROWS = "(VALUES (9, 2.5::float8, 'b'), (10, -1, 'a'), (1, 30, NULL), (NULL, 4, 'c')) AS t(n, r, s)"


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT n::text FROM {ROWS} ORDER BY n",  # bigint: refused by DataFusion before
        f"SELECT r::text FROM {ROWS} ORDER BY r DESC",
        f"SELECT s, n::text FROM {ROWS} ORDER BY n NULLS FIRST, s",
        f"SELECT DISTINCT r::text FROM {ROWS} ORDER BY r",
        f"SELECT n::text, count(*) FROM {ROWS} GROUP BY n ORDER BY n",
        # unchanged: an alias, the column itself, a qualified name, an expression
        f"SELECT n::text AS v, n FROM {ROWS} ORDER BY n",
        f"SELECT n, r::text FROM {ROWS} ORDER BY n",
        f"SELECT r::text FROM {ROWS} ORDER BY t.r",
        f"SELECT n, n FROM {ROWS} ORDER BY n",
    ],
)
def test_order_by_a_result_name_sorts_as_postgres(sql: str, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    assert kyma(sql)[1] == postgres.execute(sql).fetchall(), sql  # type: ignore[call-overload]


def test_a_name_two_result_columns_take_is_ambiguous_in_both(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    sql = f"SELECT n::text, n::int FROM {ROWS} ORDER BY n"
    with pytest.raises(psycopg.errors.AmbiguousColumn):
        postgres.execute(sql)
    with pytest.raises(KymaError, match='ORDER BY "n" is ambiguous') as refused:
        kyma(sql)
    assert status(refused.value, "sqlstate") == "42702"
