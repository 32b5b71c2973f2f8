"""Clients' spellings of Postgres constructs, as kyma plans them: sqlglot rules over the
parsed statement (its catalog relations already resolved), applied in order to every query.

Each rule is one module with one public ``rule(expression) -> expression`` and a doctest;
the client a rule is for is named in its docstring. None reads SQL text.
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules import (
    any_array,
    array_upper,
    attribute_subqueries,
    catalog_prefix,
    collate_default,
    composite_types,
    current_schema,
    descriptions,
    empty_relations,
    format_concat,
    grafana_search_path,
    jdbc_search_path,
    operators,
    pg_get_expr,
    reg_casts,
)

RULES = (
    empty_relations.rule,
    catalog_prefix.rule,
    current_schema.rule,
    operators.rule,
    collate_default.rule,
    jdbc_search_path.rule,
    grafana_search_path.rule,
    composite_types.rule,
    attribute_subqueries.rule,
    descriptions.rule,
    format_concat.rule,
    reg_casts.rule,
    any_array.rule,
    array_upper.rule,
    pg_get_expr.rule,
)


def rewrite(expression: exp.Expression) -> exp.Expression:
    for rule in RULES:
        expression = rule(expression)
    return expression
