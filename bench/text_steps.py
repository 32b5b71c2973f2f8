"""Benchmark: the extent write's text steps one at a time, in process.

    python bench/text_steps.py [--repeat 5]

On bench/extent_write.py's batches (OTLP spans and records, a 50 000-line hits request, a
10 000-line logs request), each batch taken as one block, the CPU milliseconds (best of
``--repeat``) of the steps that read strings' bytes: which columns are text, the text
columns' token filters and trigram filters, the extent's distinct and token sets for the
catalog (the text columns' words given, as the Parquet writer gives them) and the writer's
options (dictionary sampling). To compare with another commit, run it with that commit's
interpreter or ``PYTHONPATH`` (the functions measured are the same seams in both).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from extent_write import _best, batches

from kyma.engine.format._stats import ExtentStats, block_stats
from kyma.engine.format.parquet import _grams, _tokens
from kyma.engine.format.parquet._layout import writer_options


def steps(batch: pa.RecordBatch) -> dict[str, Callable[[], object]]:
    text = _tokens.text_columns(batch)
    words = {name: _tokens.block_filter(batch.column(name))[1] for name in text}
    stats = block_stats(batch)

    def sets() -> None:
        extent = ExtentStats(batch.schema)
        for name in text:
            extent.given_words(name, [words[name]])
        extent.update(batch, stats)
        extent.column_stats()

    return {
        "text columns": lambda: _tokens.text_columns(batch),
        "token filters": lambda: [_tokens.block_filter(batch.column(n)) for n in text],
        "trigram filters": lambda: [_grams.block_filter(batch, n) for n in text],
        "distinct and token sets": sets,
        "writer options": lambda: writer_options(batch.schema, batch, batch.num_rows, text),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases = batches(Path(tempfile.mkdtemp(prefix="kyma-bench-text-")))
    print(f"load {os.getloadavg()[0]:.1f}; CPU ms of each step, best of {args.repeat}")
    names = list(steps(cases[0][1]))
    print(f"{'batch':28s}" + "".join(f" {n:>24s}" for n in names))
    for label, batch, _ in cases:
        found = steps(batch)
        times = [_best(args.repeat, found[n]) * 1000 for n in names]
        print(f"{label:28s}" + "".join(f" {t:24.2f}" for t in times))


if __name__ == "__main__":
    main()
