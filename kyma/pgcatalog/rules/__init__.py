"""Clients' spellings of Postgres constructs, as kyma plans them: sqlglot rules over the
parsed statement (its catalog relations already resolved), applied in order to every query.

Each rule is one module with one public ``rule(expression) -> expression`` and a doctest;
the client a rule is for is named in its docstring. None reads SQL text.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from kyma.pgcatalog.rules import (
    absent_definitions,
    any_array,
    array_subqueries,
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
    oid_subqueries,
    operators,
    pg_get_expr,
    privileges,
    reg_casts,
    sizes,
    view_definitions,
)

# (the nodes a rule looks for, the rule), in order: a statement holding none of a rule's
# nodes skips it, so a statement pays one walk plus the rules it can need
RULES: tuple[
    tuple[tuple[type[exp.Expression], ...], Callable[[exp.Expression], exp.Expression]], ...
]
RULES = (
    ((exp.Table,), empty_relations.rule),
    ((exp.Dot, exp.DataType), catalog_prefix.rule),
    ((exp.CurrentSchema,), current_schema.rule),
    ((exp.Operator,), operators.rule),
    ((exp.Collate,), collate_default.rule),
    ((exp.Join,), jdbc_search_path.rule),
    ((exp.In,), grafana_search_path.rule),
    ((exp.Subquery,), composite_types.rule),
    ((exp.Subquery,), attribute_subqueries.rule),
    ((exp.Anonymous,), descriptions.rule),
    ((exp.Format,), format_concat.rule),
    ((exp.Cast,), reg_casts.rule),
    ((exp.Any,), any_array.rule),
    ((exp.Anonymous,), array_upper.rule),
    ((exp.Anonymous,), pg_get_expr.rule),
    ((exp.Anonymous,), absent_definitions.rule),
    ((exp.Anonymous,), view_definitions.rule),
    ((exp.Subquery,), oid_subqueries.rule),
    ((exp.Anonymous,), privileges.rule),
    ((exp.Anonymous,), sizes.rule),
    ((exp.Array,), array_subqueries.rule),
)


def rewrite(expression: exp.Expression) -> exp.Expression:
    kinds = {type(node) for node in expression.walk()}
    for nodes, rule in RULES:
        if any(issubclass(kind, nodes) for kind in kinds):
            expression = rule(expression)
    return expression
