"""kyma's scalar types are stated once (kyma.engine.types.SCALARS); every table that maps
each of them to something of its own covers exactly that list."""

from __future__ import annotations

import pytest

from kyma.engine.spark._schema import _SCALARS as SPARK_TYPES
from kyma.engine.types import SCALARS, KymaType
from kyma.ingest.coerce._values import _SCALARS as CONVERTERS


@pytest.mark.parametrize("table", [SPARK_TYPES, CONVERTERS], ids=["spark", "coerce"])
def test_per_type_tables_cover_the_scalars(table: dict[str, object]) -> None:
    assert tuple(table) == SCALARS


def test_every_scalar_parses_and_is_named_in_the_error() -> None:
    assert [KymaType.parse(name.upper()).name for name in SCALARS] == list(SCALARS)
    with pytest.raises(ValueError) as raised:
        KymaType.parse("decimal")
    assert all(name in str(raised.value) for name in SCALARS)
