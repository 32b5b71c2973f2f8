"""``make sqldiff``: every corpus and case file on kyma and on a loopback Postgres.

Prints the count of each class per file and in total, then the kyma-only errors grouped by
reason, and every wrong answer and internal error. ``--limit N`` runs each file's first N
queries; ``--only NAME`` the files whose name contains NAME; ``--json PATH`` writes every
outcome. Exits 1 on a wrong answer or an internal error.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

import corpus  # noqa: E402
from differ import CLASSES, INTERNAL, KYMA_ERROR, WRONG, Outcome  # noqa: E402
from loopback import server_tmpdir  # noqa: E402

from kyma.runtime.postgres import EmbeddedPostgres  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--only", default="")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    # A stopped run (Ctrl-C, kill) still stops its Postgres: SIGTERM unwinds as an exit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    home = server_tmpdir("kyma-sqldiff-pg-")
    pg = EmbeddedPostgres(home / "pg", log=lambda _: None)
    outcomes: list[Outcome] = []
    try:
        url = pg.start()
        for path in corpus.files():
            if args.only not in path.name:
                continue
            started = time.perf_counter()
            found = corpus.run(path, url, args.limit)
            outcomes += found
            counts = Counter(o.kind for o in found)
            line = ", ".join(f"{k} {counts[k]}" for k in CLASSES if counts[k])
            took = time.perf_counter() - started
            print(f"{corpus.name_of(path)}: {len(found)} queries ({line}) in {took:.0f} s")
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)
    report(outcomes)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=0))
    return 1 if any(o.kind in (WRONG, INTERNAL) for o in outcomes) else 0


def report(outcomes: list[Outcome]) -> None:
    counts = Counter(o.kind for o in outcomes)
    total = len(outcomes)
    print(f"\nall files: {total} queries")
    for kind in CLASSES:
        share = 100 * counts[kind] / total if total else 0
        print(f"  {kind:20} {counts[kind]:6}  {share:5.2f} %")
    reasons = Counter(o.reason for o in outcomes if o.kind == KYMA_ERROR)
    if reasons:
        print("\nkyma-only errors by reason:")
        for text, n in reasons.most_common():
            example = next(o for o in outcomes if o.kind == KYMA_ERROR and o.reason == text)
            print(f"  {n:6}  {text}\n          e.g. {example.file}:{example.line}")
    for kind in (WRONG, INTERNAL):
        for o in (o for o in outcomes if o.kind == kind):
            print(f"\n{kind} {o.file}:{o.line}: {o.reason}\n  {o.sql}")


if __name__ == "__main__":
    sys.exit(main())
