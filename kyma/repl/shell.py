"""``kyma sql``: connect, then run ``-c``/``-f`` once or read statements at a prompt."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from kyma import __version__
from kyma.repl.client import Client, QueryError
from kyma.repl.session import Quit, Session

PROMPT, CONTINUATION = "kyma=> ", "kyma-> "


def run(
    connect: Callable[[], Client],
    where: str,
    command: str | None = None,
    file: Path | None = None,
    history: Path | None = None,
    pager: str = "",
    color: bool = False,
    output_format: str = "aligned",
    tuples_only: bool = False,
) -> int:
    """The exit status: 0, or 1 when a ``-c``/``-f`` statement failed (psql's ON_ERROR_STOP)."""
    try:
        client = connect()
    except QueryError as e:
        print(f"kyma sql: {e.message}", file=sys.stderr)
        return 1
    try:
        if command is not None or file is not None or not sys.stdin.isatty():
            session = Session(
                client, interactive=False, output_format=output_format, tuples_only=tuples_only
            )
            return _batch(session, command, file)
        return _interactive(client, where, history, pager, color, output_format, tuples_only)
    finally:
        client.close()


def _batch(session: Session, command: str | None, file: Path | None) -> int:
    try:
        if command is not None:
            ok = session.run_text(command)
        elif file is not None:
            try:
                text = file.read_text()
            except OSError as e:
                print(f"kyma sql: {file}: {e.strerror}", file=sys.stderr)
                return 1
            ok = session.run_text(text)
        else:
            ok = session.run_text(sys.stdin.read())
    except Quit:
        ok = True
    finally:
        if session.output is not None:
            session.output.close()
    return 0 if ok else 1


def _interactive(
    client: Client,
    where: str,
    history: Path | None,
    pager: str,
    color: bool,
    output_format: str,
    tuples_only: bool,
) -> int:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from kyma.repl.complete import SqlCompleter

    completer = SqlCompleter()
    completer.refresh(client)
    session = Session(
        client,
        interactive=True,
        pager=pager,
        color=color,
        on_schema_change=lambda: completer.refresh(client),
        output_format=output_format,
        tuples_only=tuples_only,
    )
    prompt: PromptSession[str] = PromptSession(
        history=FileHistory(str(history)) if history else InMemoryHistory(),
        completer=completer,
        complete_while_typing=False,
    )
    print(f"kyma sql {__version__}, connected to {where}. Type \\? for help, \\q to quit.")
    while True:
        try:
            line = prompt.prompt(CONTINUATION if session.pending else PROMPT)
        except KeyboardInterrupt:  # at the prompt: drop the line and any pending statement
            session.pending = ""
            continue
        except EOFError:
            break
        try:
            session.feed_line(line)
        except Quit:
            break
    if session.output is not None:
        session.output.close()
    return 0
