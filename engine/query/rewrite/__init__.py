"""kyma's SQL rewrite rules, applied in order before DataFusion sees a statement.

Each rule is one module with one public ``rule(expression) -> expression`` and a doctest.
``RULES`` run on every query right after parsing; ``evolved``, ``current_state`` and
``postgres_semantics`` need the tables' columns, so the SELECT planner applies them.
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.rewrite import (
    array_literals,
    dynamic_paths,
    float_precision,
    json_operators,
    jsonb_functions,
    jsonb_tables,
    like_escape,
    schema_names,
    time_travel,
)

RULES = (
    schema_names.rule,
    time_travel.rule,
    array_literals.rule,
    json_operators.rule,
    jsonb_tables.rule,
    jsonb_functions.rule,
    dynamic_paths.rule,
    float_precision.rule,
    like_escape.rule,
)


def rewrite(expression: exp.Expression) -> exp.Expression:
    for rule in RULES:
        expression = rule(expression)
    return expression
