"""The Postgres generator plus kyma's nodes, so a parsed statement prints back as kyma SQL."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres

from kyma.engine.query.dialect.expressions import (
    SNAPSHOT,
    Cursor,
    Deallocate,
    ExecutePrepared,
    Explain,
    KymaStatement,
    Notification,
    Prepare,
    Savepoint,
)


class KymaGenerator(Postgres.Generator):
    TRANSFORMS = {
        **Postgres.Generator.TRANSFORMS,
        Explain: lambda self, e: self.explain_sql(e),
        KymaStatement: lambda self, e: self.kymastatement_sql(e),
        Savepoint: lambda self, e: (
            f"{'RELEASE ' if e.args.get('release') else ''}SAVEPOINT {self.sql(e, 'this')}"
        ),
        Notification: lambda self, e: self.notification_sql(e),
        Prepare: lambda self, e: self.prepare_sql(e),
        ExecutePrepared: lambda self, e: (
            f"EXECUTE {self.sql(e, 'this')}"
            + (f" ({self.expressions(e, flat=True)})" if e.expressions else "")
        ),
        Deallocate: lambda self, e: (
            f"DEALLOCATE {'ALL' if e.this.is_star else self.sql(e, 'this')}"
        ),
        Cursor: lambda self, e: self.cursor_sql(e),
    }

    def prepare_sql(self, expression: Prepare) -> str:
        types = f" ({self.expressions(expression, flat=True)})" if expression.expressions else ""
        return (
            f"PREPARE {self.sql(expression, 'this')}{types} AS {self.sql(expression, 'expression')}"
        )

    def cursor_sql(self, expression: Cursor) -> str:
        name = self.sql(expression, "this")
        if expression.verb == "CLOSE":
            return f"CLOSE {'ALL' if isinstance(expression.this, exp.Star) else name}"
        if expression.verb == "DECLARE":
            binary = " BINARY" if expression.args.get("binary") else ""
            hold = " WITH HOLD" if expression.args.get("hold") else ""
            return f"DECLARE {name}{binary} CURSOR{hold} FOR {expression.text('query')}"
        count = "ALL" if expression.count is None else str(expression.count)
        return f"{expression.verb} FORWARD {count} FROM {name}"

    def notification_sql(self, expression: Notification) -> str:
        payload = expression.args.get("payload")
        text = f"{expression.verb} {self.sql(expression, 'this')}"
        return f"{text}, {self.sql(payload)}" if payload else text

    def explain_sql(self, expression: Explain) -> str:
        return f"EXPLAIN {self.sql(expression, 'this')}"

    def kymastatement_sql(self, expression: KymaStatement) -> str:
        parts = [expression.verb, expression.noun]
        if expression.args.get("exists"):
            parts.append("IF EXISTS")
        if expression.this:
            parts.append(self.sql(expression, "this"))
        if expression.args.get("kind"):
            parts.append(f"TYPE {self.sql(expression, 'kind')}")
        if options := expression.args.get("options"):
            listed = ", ".join(f"{p.name} = {self.sql(p, 'value')}" for p in options)
            parts.append(f"WITH ({listed})")
        return " ".join(parts)

    def version_sql(self, expression: exp.Version) -> str:
        if expression.name == SNAPSHOT:
            return f"AS OF SNAPSHOT {self.sql(expression, 'expression')}"
        return super().version_sql(expression)
