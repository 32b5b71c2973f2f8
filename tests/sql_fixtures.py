"""SQL fixtures as sqlglot keeps them: ``# title`` lines, then an input and its expected
output, each a statement ending with ``;`` (one line each), cases separated by blank lines."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def cases(name: str) -> list:
    """``pytest.param(input, expected, id=title)`` for each case in ``fixtures/<name>``."""
    params = []
    for block in (FIXTURES / name).read_text().strip().split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        title = " ".join(line.lstrip("# ") for line in lines if line.startswith("#"))
        statements = [line.removesuffix(";") for line in lines if not line.startswith("#")]
        assert len(statements) == 2, f"{name}: {title!r} needs an input and an expected line"
        params.append(pytest.param(*statements, id=title))
    return params
