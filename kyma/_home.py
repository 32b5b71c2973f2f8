"""The home folder is the server's alone: its tables are readable through it.

``kyma serve`` runs with umask 077 (folders 0700, files 0600 from then on) and, at start,
warns about what an earlier version or an operator left looser, naming each path and mode;
it changes nothing itself (a shared group may be intended). An S3 store's equivalent is the
bucket policy.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

UMASK = 0o077
DEPTH = 3
"""How deep the start-up check looks: the home, its folders, their tables' folders (extents
below a private folder are out of others' reach)."""
SHOWN = 5
LOOSE_FILE = 0o077
LOOSE_FOLDER = 0o066
"""A folder may let others pass (o+x: the embedded Postgres run as its own user when kyma
is root needs to reach its data folder), not list or change it."""


def secure(home: Path, warn: Callable[[str], None]) -> None:
    """Set the process umask, make ``home`` (0700) if it is missing, warn about loose modes."""
    os.umask(UMASK)
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    loose = list(_loose(home.absolute(), DEPTH))
    for path, mode in loose[:SHOWN]:
        warn(
            f"kyma: {path} is mode {mode:04o}: other users can read or change what kyma keeps"
            f" there; chmod {'700' if path.is_dir() else '600'} it (and the rest of the home)"
        )
    if len(loose) > SHOWN:
        warn(f"kyma: {len(loose) - SHOWN} more paths under {home.absolute()} are as loose")


def _loose(path: Path, depth: int) -> Iterator[tuple[Path, int]]:
    """Each path from ``path`` down ``depth`` levels that group or others may use."""
    try:
        info = path.lstat()
    except OSError:  # gone meanwhile
        return
    if stat.S_ISLNK(info.st_mode) or stat.S_ISSOCK(info.st_mode):
        return  # a link's target is checked where it lives; Postgres's socket is 0777 by design
    mode = stat.S_IMODE(info.st_mode)
    if mode & (LOOSE_FOLDER if stat.S_ISDIR(info.st_mode) else LOOSE_FILE):
        yield path, mode
    if depth and stat.S_ISDIR(info.st_mode):
        try:
            children = sorted(path.iterdir())
        except OSError:
            return
        for child in children:
            yield from _loose(child, depth - 1)
