"""Stage 3's row groups inside DataFusion's Parquet scan, as a filter it prunes by.

DataFusion's Python API reads every row group of a listed file: it cannot be handed the row
groups stage 3 (``_token_filter``) kept. It skips row groups and pages by a filter's
statistics, though, and extents hold their rows in time order: ``_timestamp`` within the
time range of some kept row group holds every row of the kept ones and, ranges being
disjoint, none of the others, which DataFusion then skips by their min/max (and their pages
by the page index). The filter drops only rows of row groups stage 3 pruned, where no row
the statement wants is (pruning is conservative), so it changes no answer; where ranges
overlap, DataFusion merely skips less.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from datafusion import Expr, col, lit

from kyma.engine.format.predicate import BlockStats

TIME = "_timestamp"

Range = tuple[int, int]


def ranges(stats: Sequence[BlockStats] | None, blocks: list[int]) -> list[Range] | None:
    """The time ranges of an extent's ``blocks``; None when a block's times are unknown or
    hold a null (no range of times keeps its rows).

    >>> from kyma.engine.format.predicate import ColStat
    >>> stats = [BlockStats(2, {TIME: ColStat("Ts", 0, 10 * i, 10 * i + 9)}) for i in range(3)]
    >>> ranges(stats, [0, 2]), ranges(stats[:1] + [BlockStats(1, {})], [0, 1])
    ([(0, 9), (20, 29)], None)
    """
    if stats is None:
        return None
    out = []
    for block in blocks:
        found = stats[block].columns.get(TIME)
        if found is None or found.nulls or found.min is None or found.max is None:
            return None
        out.append((int(found.min), int(found.max)))
    return out


def merged(spans: list[Range]) -> list[Range]:
    """``spans`` sorted, overlapping and adjacent ones joined.

    >>> merged([(20, 29), (0, 9), (10, 12), (5, 7)])
    [(0, 12), (20, 29)]
    """
    out: list[Range] = []
    for low, high in sorted(spans):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def time_filter(spans: list[Range]) -> Expr:
    """``_timestamp`` within one of ``spans`` (merged), a balanced OR."""
    terms = [(col(TIME) >= _at(low)) & (col(TIME) <= _at(high)) for low, high in merged(spans)]
    return _any(terms)


def _any(terms: list[Expr]) -> Expr:
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return _any(terms[:half]) | _any(terms[half:])


def _at(ns: int) -> Expr:
    return lit(pa.scalar(ns, pa.timestamp("ns", tz="UTC")))
