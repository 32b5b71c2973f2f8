"""Backslash commands: ``\\d``, ``\\x``, ``\\timing``, ``\\i``, ``\\o``, ``\\copy``, ``\\q``…"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import cbor2
import pyarrow as pa

from kyma.engine.types import KYMA_TYPE_KEY
from kyma.repl import render
from kyma.repl.client import QueryError
from kyma.repl.session import Cancelled, Quit, Session

HELP = """\
  \\d [TABLE]     list tables, or describe TABLE
  \\dt            list tables
  \\dc            list connectors
  \\x             toggle expanded display
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
    try:
        table = session.execute(match.group("sql")).table
    except Cancelled:
        session.error(["cancelled"])
        return False
    except QueryError as e:
        session.error(render.error(e.message, match.group("sql"), e.line, e.column))
        return False
    try:
        _export(table, path)
    except (OSError, pa.ArrowException) as e:
        session.error([f"\\copy: {path}: {e}"])
        return False
    session.write([f"COPY {table.num_rows}"])
    return True


def _export(table: pa.Table, path: Path) -> None:
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
        return
    import pyarrow.csv as csv

    csv.write_csv(_json_dynamics(table), path)


def _json_dynamics(table: pa.Table) -> pa.Table:
    """Dynamic (CBOR) columns as their JSON text, which CSV can hold."""
    for i, field in enumerate(table.schema):
        if (field.metadata or {}).get(KYMA_TYPE_KEY) == b"dynamic":
            values = [
                None if v is None else json.dumps(cbor2.loads(v)) for v in table[i].to_pylist()
            ]
            table = table.set_column(i, field.name, pa.array(values, pa.string()))
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
    "x": _expanded,
    "timing": _timing,
    "i": _include,
    "o": _output,
    "copy": _copy,
    "q": _quit,
    "?": _help,
}
