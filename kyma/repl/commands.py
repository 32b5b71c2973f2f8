"""Backslash commands: ``\\d``, ``\\x``, ``\\timing``, ``\\i``, ``\\o``, ``\\copy``, ``\\q``…"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from kyma.dynamic import with_json_text
from kyma.repl import render
from kyma.repl.client import Answer, QueryError
from kyma.repl.session import Cancelled, Quit, Session

HELP = """\
  \\d [TABLE]     list tables, or describe TABLE
  \\dt            list tables
  \\dc            list connectors
  \\l             list catalogs: kyma's own and each connector's
  \\x             toggle expanded display
  \\a             toggle between aligned and unaligned output
  \\t             toggle tuples only (no header, no footer)
  \\pset format aligned|unaligned|csv
  \\pset tuples_only [on|off]
  \\timing        toggle timing of statements
  \\i FILE        run the statements in FILE
  \\o [FILE]      send results to FILE, or back to stdout
  \\copy (SELECT ...) TO 'FILE'
                 export a query's rows; .csv or .parquet by FILE's extension
  \\q             quit (or Ctrl-D)
  \\?             this help
Statements end with ';'. Ctrl-C cancels a running statement."""

_COPY = re.compile(r"\((?P<sql>.*)\)\s+to\s+'(?P<path>[^']+)'\s*;?", re.IGNORECASE | re.DOTALL)


def run(session: Session, line: str) -> bool:
    """Run one backslash command line; False if it failed."""
    name, _, arg = line[1:].partition(" ")
    command = COMMANDS.get(name)
    if command is None:
        session.error([f"invalid command \\{name}; try \\? for help"])
        return False
    return command(session, arg.strip())


def _describe(session: Session, arg: str) -> bool:
    if not arg:
        return session.run_statement("SHOW TABLES")
    return session.run_statement(f"DESCRIBE {arg.rstrip(';')}")


def _tables(session: Session, _arg: str) -> bool:
    return session.run_statement("SHOW TABLES")


def _connectors(session: Session, _arg: str) -> bool:
    return session.run_statement("SHOW CONNECTORS")


def _catalogs(session: Session, _arg: str) -> bool:
    """psql's list of databases: kyma's own tables are one catalog, each connector another."""
    answer = _query(session, "SHOW CONNECTORS")
    if answer is None:
        return False
    connectors = answer.to_pylist()
    table = pa.table(
        {
            "name": ["kyma", *[c["name"] for c in connectors]],
            "type": ["kyma", *[c["type"] for c in connectors]],
            "state": ["ready", *[c["state"] for c in connectors]],
        }
    )
    session.show(Answer(table), "SHOW CONNECTORS")
    return True


def _pset(session: Session, arg: str) -> bool:
    option, _, value = arg.partition(" ")
    value = value.strip().lower()
    if option == "format" and value in render.FORMATS:
        session.format = value
        session.write([f"Output format is {value}."])
        return True
    if option == "tuples_only" and value in ("", "on", "off"):
        session.tuples_only = not session.tuples_only if not value else value == "on"
        return _show_tuples_only(session)
    session.error(
        [f"\\pset: expected format {'|'.join(render.FORMATS)} or tuples_only [on|off], got {arg!r}"]
    )
    return False


def _unaligned(session: Session, _arg: str) -> bool:
    session.format = "aligned" if session.format == "unaligned" else "unaligned"
    session.write([f"Output format is {session.format}."])
    return True


def _tuples_only(session: Session, _arg: str) -> bool:
    session.tuples_only = not session.tuples_only
    return _show_tuples_only(session)


def _show_tuples_only(session: Session) -> bool:
    session.write([f"Tuples only is {'on' if session.tuples_only else 'off'}."])
    return True


def _expanded(session: Session, _arg: str) -> bool:
    session.expanded = not session.expanded
    session.write([f"Expanded display is {'on' if session.expanded else 'off'}."])
    return True


def _timing(session: Session, _arg: str) -> bool:
    session.timing = not session.timing
    session.write([f"Timing is {'on' if session.timing else 'off'}."])
    return True


def _include(session: Session, arg: str) -> bool:
    if not arg:
        session.error(["\\i: missing the file name"])
        return False
    try:
        text = Path(arg).expanduser().read_text()
    except OSError as e:
        session.error([f"\\i: {arg}: {e.strerror}"])
        return False
    pending, session.pending = session.pending, ""
    try:
        return session.run_text(text)
    finally:
        session.pending = pending


def _output(session: Session, arg: str) -> bool:
    if session.output is not None:
        session.output.close()
        session.output = None
    if arg:
        try:
            session.output = Path(arg).expanduser().open("w")
        except OSError as e:
            session.error([f"\\o: {arg}: {e.strerror}"])
            return False
    return True


def _copy(session: Session, arg: str) -> bool:
    match = _COPY.fullmatch(arg)
    path = Path(match.group("path")).expanduser() if match else None
    if match is None or path is None or path.suffix.lower() not in (".csv", ".parquet"):
        session.error(["\\copy: expected \\copy (SELECT ...) TO 'file.csv' or 'file.parquet'"])
        return False
    table = _query(session, match.group("sql"))
    if table is None:
        return False
    try:
        _export(table, path)
    except (OSError, pa.ArrowException) as e:
        session.error([f"\\copy: {path}: {e}"])
        return False
    session.write([f"COPY {table.num_rows}"])
    return True


def _query(session: Session, sql: str) -> pa.Table | None:
    """The rows of ``sql``, or None once the failure (or Ctrl-C) is shown."""
    try:
        return session.execute(sql).table
    except Cancelled:
        session.error(["cancelled"])
    except QueryError as e:
        session.error(render.error(e.message, sql, e.line, e.column))
    return None


def _export(table: pa.Table, path: Path) -> None:
    table = with_json_text(table)  # dynamic values as JSON text, never CBOR bytes
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
        return
    import pyarrow.csv as csv

    csv.write_csv(_csv_texts(table), path)


def _csv_texts(table: pa.Table) -> pa.Table:
    """Columns CSV cannot hold as their display text: nested values (vectors, arrays) as
    JSON, binary as ``\\x`` hex."""
    for i, field in enumerate(table.schema):
        dtype = field.type
        if pa.types.is_nested(dtype) or pa.types.is_binary(dtype):
            values = pa.array(render.texts(field, table.column(i)), pa.string())
            table = table.set_column(i, field.name, values)
    return table


def _quit(_session: Session, _arg: str) -> bool:
    raise Quit


def _help(session: Session, _arg: str) -> bool:
    session.write([HELP])
    return True


COMMANDS: dict[str, Callable[[Session, str], bool]] = {
    "d": _describe,
    "dt": _tables,
    "dc": _connectors,
    "l": _catalogs,
    "pset": _pset,
    "a": _unaligned,
    "t": _tuples_only,
    "x": _expanded,
    "timing": _timing,
    "i": _include,
    "o": _output,
    "copy": _copy,
    "q": _quit,
    "?": _help,
}
