"""What kyma pushes to Postgres. One entry per expression class; the planner reads this.

Besides the filters, aggregates and query shape every source takes: arithmetic and casts
(integer division truncates in both), CASE, ILIKE, date arithmetic with intervals, and
scalar functions: lower, upper, coalesce, nullif, date_trunc, extract/date_part, substring,
position, length, trim, ||, abs, round, floor, ceil, greatest, least. Pushed, a function is
Postgres's own, which is the answer kyma owes; they stay residual only beside a kyma table
or a kyma function. AT TIME ZONE is pushed because kyma's
Postgres sessions run in UTC, so the source computes exactly what the SQL says; DataFusion's
AT TIME ZONE would only relabel the zone.
"""

from sqlglot import exp

from kyma.connectors.capabilities import AGGREGATES, FILTERS, STRUCTURE, Capabilities

SCALARS: frozenset[type[exp.Expression]] = frozenset(
    {
        exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg, exp.Cast, exp.Case, exp.If,
        exp.ILike, exp.Lower, exp.Upper, exp.Coalesce, exp.TimestampTrunc, exp.DateTrunc,
        exp.AtTimeZone, exp.Extract, exp.Var, exp.Substring, exp.Length, exp.StrPosition,
        exp.Trim, exp.DPipe, exp.Interval, exp.Nullif, exp.Abs, exp.Round, exp.Floor,
        exp.Ceil, exp.Greatest, exp.Least,
    }
)  # fmt: skip

POSTGRES = Capabilities(expressions=STRUCTURE | FILTERS | AGGREGATES | SCALARS)
