"""What kyma pushes to Postgres. One entry per expression class; the planner reads this.

Besides the filters, aggregates and query shape every source takes: arithmetic and casts
(integer division truncates in both), CASE, ILIKE, and the scalar functions whose results
match kyma's: lower, upper, coalesce, date_trunc. AT TIME ZONE is pushed because kyma's
Postgres sessions run in UTC, so the source computes exactly what the SQL says; DataFusion's
AT TIME ZONE would only relabel the zone.
"""

from sqlglot import exp

from kyma.connectors.capabilities import AGGREGATES, FILTERS, STRUCTURE, Capabilities

SCALARS: frozenset[type[exp.Expression]] = frozenset(
    {
        exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg, exp.Cast, exp.Case, exp.If,
        exp.ILike, exp.Lower, exp.Upper, exp.Coalesce, exp.TimestampTrunc, exp.DateTrunc,
        exp.AtTimeZone,
    }
)  # fmt: skip

POSTGRES = Capabilities(expressions=STRUCTURE | FILTERS | AGGREGATES | SCALARS)
