"""A catalog statement as the catalog's DataFusion context reads it: Postgres spellings
DataFusion has no use for (``pg_catalog.`` prefixes, ``::regclass``, ``COLLATE``,
``OPERATOR(pg_catalog.~)``) taken out, and the few constructs clients send that it cannot
plan (correlated subqueries over pg_attrdef, JDBC's search-path rank, Grafana's search-path
schema list) replaced by what they always come to in kyma. Pure: no I/O.
"""

from __future__ import annotations

import re

from kyma.pgcatalog._information_schema import SCHEMA

_COMMENT = re.compile(r"('(?:[^']|'')*')|--[^\n]*")  # a string is kept, a comment goes
_VIEW = re.compile(r'"?information_schema"?\s*\.\s*"?(\w+)"?', re.I)
_REG_LITERAL = re.compile(r"'(?:pg_catalog\.)?(\w+)'\s*::\s*regclass\b", re.I)
_CATALOG_OIDS = {"pg_class": 1259, "pg_attribute": 1249, "pg_type": 1247, "pg_namespace": 2615}
# JDBC ranks types by their schema's place in the search path with a join over
# generate_series; every kyma type is in pg_catalog, so the join and its rank go
_SEARCH_PATH_JOIN = re.compile(
    r"LEFT\s+JOIN\s+\(\s*select\s+ns\.oid\s+as\s+nspoid.*?\)\s+as\s+sp\s+"
    r"ON\s+sp\.nspoid\s*=\s*typnamespace",
    re.I | re.S,
)
_SEARCH_PATH_RANK = re.compile(r"ORDER\s+BY\s+sp\.r\s*,", re.I)
# Grafana lists the schemas of the search path with generate_series over its parts: kyma's
# search path is its one schema
_SEARCH_PATH_SCHEMAS = re.compile(
    r"IN\s*\(\s*SELECT\s+CASE\s+WHEN\s+trim\s*\(\s*s\s*\[\s*i\s*\]\s*\).*?"
    r"string_to_array\s*\(\s*current_setting\s*\(\s*'search_path'\s*\)\s*,\s*','\s*\)\s+s\s*\)",
    re.I | re.S,
)
# pgcli binds its relkinds as one array parameter: `= ANY('{r,p}')` or `= ANY(ARRAY['r', 'p'])`
_ANY_TEXT = re.compile(r"=\s*ANY\s*\(\s*'\{([^}']*)\}'\s*\)", re.I)
_ANY_ARRAY = re.compile(r"=\s*ANY\s*\(\s*ARRAY\s*\[([^\]]*)\]\s*\)", re.I)
_ARRAY_UPPER = re.compile(r"\barray_upper\s*\(", re.I)  # lower bounds are 1 here
# a type OID as its name, as pgcli reads a column's type: format_type's rendering
_REGTYPE_TEXT = re.compile(r"([\w.]+)\s*::\s*regtype\s*::\s*(?:text|varchar)\b", re.I)
# pgcli asks whether a type is a composite type: kyma has none
_COMPOSITE = re.compile(
    r"\(\s*SELECT\s+(\w+)\.relkind\s*=\s*'c'\s+FROM\s+pg_class\s+\1\s+"
    r"WHERE\s+\1\.oid\s*=\s*\w+\.typrelid\s*\)",
    re.I,
)
_REG_CAST = re.compile(r"::\s*(?:regclass|regtype|regnamespace|regproc|regrole)\b", re.I)
# psql's \\d reads a column's default and collation in correlated scalar subqueries that
# DataFusion cannot plan; kyma has neither, so each such subquery is NULL
_SCALAR = re.compile(
    r"\(\s*SELECT\s+[^()]*?(?:\((?:[^()]|\([^()]*\))*\)[^()]*?)*FROM\s+(?:pg_attrdef|pg_collation)\b",
    re.I,
)
# comments on tables and columns (Metabase reads them): kyma keeps none
_DESCRIPTION = re.compile(r"\b(?:col|obj)_description\s*\(", re.I)
# format('%s.%I', a, b) with plain arguments (Metabase's type names), spelled with concat
_FORMAT = re.compile(r"\bformat\s*\(\s*'((?:[^']|'')*)'((?:\s*,\s*[^(),']+)+)\s*\)", re.I)
_GET_EXPR = re.compile(r"\bpg_get_expr\s*\(([^,()]+),([^,()]+),\s*(?:true|false)\s*\)", re.I)
_PG_PREFIX = re.compile(r'"?pg_catalog"?\s*\.\s*', re.I)
_COLLATE = re.compile(r'\s+COLLATE\s+(?:"?pg_catalog"?\s*\.\s*)?"?default"?', re.I)
_OPERATOR = re.compile(r"OPERATOR\s*\(\s*pg_catalog\s*\.\s*([^\s)]+)\s*\)", re.I)


def views(code: str) -> set[str]:
    """The ``information_schema`` views ``code`` names."""
    return {m.group(1).lower() for m in _VIEW.finditer(code)}


def local(sql: str) -> str:
    """``sql`` as the catalog context runs it.

    >>> local("SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = 'pg_class'::regclass")
    'SELECT c.relname FROM pg_class c WHERE c.oid = 1259'
    >>> local("SELECT table_name FROM information_schema.tables")
    'SELECT table_name FROM information_schema_tables'
    >>> local("SELECT relname FROM pg_class WHERE relkind = ANY('{r,p}')")
    "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p')"
    """
    sql = _COMMENT.sub(lambda m: m.group(1) or "", sql)
    sql = _VIEW.sub(lambda m: f"information_schema_{m.group(1).lower()}", sql)
    sql = _OPERATOR.sub(lambda m: m.group(1), sql)
    sql = _PG_PREFIX.sub("", _COLLATE.sub("", sql))
    sql = _COMPOSITE.sub("FALSE", sql)
    sql = _SEARCH_PATH_RANK.sub("ORDER BY", _SEARCH_PATH_JOIN.sub("", sql))
    sql = _SEARCH_PATH_SCHEMAS.sub(f"IN ('{SCHEMA}')", sql)
    sql = _ARRAY_UPPER.sub("array_length(", sql)
    sql = _ANY_TEXT.sub(lambda m: "IN (" + ", ".join(_quoted(m.group(1))) + ")", sql)
    sql = _ANY_ARRAY.sub(r"IN (\1)", sql)
    sql = _REG_LITERAL.sub(lambda m: str(_CATALOG_OIDS.get(m.group(1).lower(), 0)), sql)
    sql = _REGTYPE_TEXT.sub(r"format_type(\1, -1)", sql)
    sql = _GET_EXPR.sub(r"pg_get_expr(\1,\2)", _REG_CAST.sub("", sql))
    sql = _FORMAT.sub(_concat, _nulled(sql, _DESCRIPTION))
    return _nulled(sql, _SCALAR)


def _concat(match: re.Match[str]) -> str:
    """A ``format(...)`` call as ``concat(...)``: ``%s`` an argument, ``%I`` it quoted.

    >>> _concat(_FORMAT.search("format('<%s>.%I', a.x, b)"))
    "concat('<', a.x, '>.', quote_ident(b))"
    """
    arguments = [a.strip() for a in match.group(2).split(",")[1:]]
    parts, rest = [], match.group(1)
    for piece in re.split(r"(%[sI])", rest):
        if piece in ("%s", "%I"):
            argument = arguments.pop(0) if arguments else "NULL"
            parts.append(argument if piece == "%s" else f"quote_ident({argument})")
        elif piece:
            parts.append(f"'{piece}'")
    return "concat(" + ", ".join(parts or ["''"]) + ")"


def _quoted(elements: str) -> list[str]:
    """The elements of an array's text as string literals.

    >>> _quoted("r,p,f"), _quoted("")
    (["'r'", "'p'", "'f'"], ['NULL'])
    """
    parts = [e.strip().strip('"') for e in elements.split(",") if e.strip()]
    return ["'" + p.replace("'", "''") + "'" for p in parts] or ["NULL"]


def _nulled(sql: str, pattern: re.Pattern[str]) -> str:
    """``sql`` with each match of ``pattern`` up to the parenthesis its first one opens as
    NULL: subqueries over pg_attrdef or pg_collation, calls of col_description.

    >>> _nulled("SELECT a, (SELECT f(d.x, 1) FROM pg_attrdef d WHERE (y)) AS z", _SCALAR)
    'SELECT a, NULL AS z'
    >>> _nulled("SELECT (SELECT substring(g(d.x) for 9) FROM pg_attrdef d), b", _SCALAR)
    'SELECT NULL, b'
    >>> _nulled("SELECT col_description(CAST(f(x) AS oid), 1) AS c", _DESCRIPTION)
    'SELECT NULL AS c'
    """
    while match := pattern.search(sql):
        depth, end = 0, match.start()
        for end in range(sql.index("(", match.start()), len(sql)):
            depth += {"(": 1, ")": -1}.get(sql[end], 0)
            if depth == 0:
                break
        sql = sql[: match.start()] + "NULL" + sql[end + 1 :]
    return sql
