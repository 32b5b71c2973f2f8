"""The shared PushdownPlanner: a statement and the sources' Capabilities in, scans out.

This package does no I/O: it plans; running the scans is the connectors' job.
"""

from kyma.connectors.pushdown._plan import PushdownPlanner

__all__ = ["PushdownPlanner"]
