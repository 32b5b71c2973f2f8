"""Larger thread stacks, set before DataFusion starts its threads.

DataFusion plans on the thread that asks (a statement's Python thread: 8 MiB by default) and
executes on its tokio worker threads (2 MiB: Rust's default). Both recurse over plans and
some kernels recurse over values (Arrow's decimal parse: a frame per 38 digits), so a stack
overflow — a segfault of the whole server — comes at a size the front door may not foresee.
The known causes are bounded there (``_complexity``, ``rewrite.numeric_input``); these
stacks are the margin behind them. They cost address space only: pages are touched when
used. Rust reads ``RUST_MIN_STACK`` once, when its runtime spawns the first thread, so this
runs at start-up (an operator's own ``RUST_MIN_STACK`` is kept).
"""

from __future__ import annotations

import os
import threading

PYTHON_STACK = 32 << 20
"""Python threads (a statement plans on one). Larger stacks fall out of glibc's cache of
freed stacks (40 MiB): 64 MiB doubles the cost of starting a thread, 32 MiB does not."""
RUST_STACK = 64 << 20
"""DataFusion's tokio threads: started once, so their size costs nothing per statement."""


def enlarge() -> None:
    """Give threads started from now on the larger stacks."""
    os.environ.setdefault("RUST_MIN_STACK", str(RUST_STACK))
    threading.stack_size(PYTHON_STACK)
