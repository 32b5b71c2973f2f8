"""kyma's SQL rewrite rules, applied in order before DataFusion sees a statement.

Each rule is one module with one public ``rule(expression) -> expression``.
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.rewrite import dynamic_paths, json_operators, kyma_types, like_escape

RULES = (json_operators.rule, dynamic_paths.rule, kyma_types.rule, like_escape.rule)


def rewrite(expression: exp.Expression) -> exp.Expression:
    for rule in RULES:
        expression = rule(expression)
    return expression
