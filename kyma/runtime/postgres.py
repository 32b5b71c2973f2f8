"""The embedded PostgreSQL that holds kyma's catalog: initdb, start or adopt, stop."""

from __future__ import annotations

import hashlib
import os
import pwd
import secrets
import shlex
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import psycopg
from psycopg import sql

from kyma.engine.errors import CatalogUnavailableError, RuntimeStartError

USER = "kyma"
DATABASE = "kyma"
SYSTEM_USER = "kyma-pg"  # created for the server when kyma runs as root and ``postgres`` is absent

_INITDB_OPTIONS = (
    f"--username={USER}",
    "--auth=scram-sha-256",
    "--encoding=UTF8",
    "--locale=C.UTF-8",
)
_SETTINGS = """
# Added by kyma when it created this cluster.
listen_addresses = '127.0.0.1'
wal_level = logical
max_replication_slots = 16
max_wal_senders = 16
"""
_SOCKET_DIR_MAX = 107 - len("/.s.PGSQL.65535")  # a socket path holds at most 107 bytes
_COMMAND_TIMEOUT = 120  # seconds; pg_ctl itself gives up after 60
_WAIT = 30  # seconds to wait for a server to answer, or for old server processes to exit
_TAIL = 20


def find_pg_bin_dir(explicit: Path | None = None) -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``.

    ``explicit`` if given; else ``pg_config --bindir``; else the newest
    ``/usr/lib/postgresql/*/bin``.
    """
    if explicit is not None:
        candidates = [Path(explicit)]
    else:
        candidates = []
        if pg_config := shutil.which("pg_config"):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10
            )
            if out.returncode == 0 and out.stdout.strip():
                candidates.append(Path(out.stdout.strip()))
        installed = Path("/usr/lib/postgresql").glob("*/bin")
        candidates += sorted(installed, key=lambda p: _version(p.parent.name), reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file():
            return folder
    where = repr(str(explicit)) if explicit else "pg_config --bindir or /usr/lib/postgresql/*/bin"
    raise RuntimeStartError(f"no initdb in {where}; install PostgreSQL: apt-get install postgresql")


class EmbeddedPostgres:
    """A PostgreSQL server owned by kyma, living in one data folder.

    For ``data_dir = HOME/catalog`` the files around the cluster are siblings:
    ``HOME/catalog.password`` (the ``kyma`` superuser's password, mode 0600, owned by the
    kyma process), ``HOME/catalog.log`` (the server log, appended to on every start) and the
    Unix socket folder ``HOME/catalog.sock/``, or ``/tmp/kyma-pg-<hash>/`` when that path is
    too long for a socket. Clients connect over TCP on 127.0.0.1 with scram-sha-256.

    The server daemonizes, so it outlives a killed kyma; the next ``start()`` adopts it.
    As root, the server runs as ``postgres`` (or a ``kyma-pg`` system user made on demand).

    ``settings`` holds extra ``postgresql.conf`` lines, appended after kyma's own when the
    cluster is created (so they win); a cluster that already exists keeps its file.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        bin_dir: Path | None = None,
        log: Callable[[str], None] = print,
        settings: str = "",
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.password_file = self.data_dir.with_name(self.data_dir.name + ".password")
        self.log_file = self.data_dir.with_name(self.data_dir.name + ".log")
        self.socket_dir = _socket_dir(self.data_dir.with_name(self.data_dir.name + ".sock"))
        self._explicit_bin_dir = bin_dir
        self._log = log
        self._settings = settings
        self._url: str | None = None

    @property
    def url(self) -> str:
        """The libpq URL of the started server."""
        if self._url is None:
            raise CatalogUnavailableError(f"the Postgres in {str(self.data_dir)!r} is not started")
        return self._url

    def start(self) -> str:
        """Start the server, or adopt the one already running, and return its URL."""
        try:
            self._prepare()
        except OSError as e:
            raise RuntimeStartError(f"cannot prepare {str(self.data_dir)!r}: {e}") from e
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb()
        try:
            password = self.password_file.read_text().strip()
        except FileNotFoundError as e:
            raise RuntimeStartError(f"the password file {str(self.password_file)!r} is gone") from e
        port = self._live_port()
        self.adopted = port is not None
        if port is None:
            self._clear_stale_pid_file()
            port = _free_port()
            socket_option = f"-p {port} -k {shlex.quote(str(self.socket_dir))}"
            self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.log_file), "-o", socket_option)
            self._log(f"started PostgreSQL on 127.0.0.1:{port} for {self.data_dir}")
        else:
            self._log(f"adopted the PostgreSQL already running on 127.0.0.1:{port}")
        server = f"postgresql://{USER}:{password}@127.0.0.1:{port}"
        self._ensure_database(server, port)
        self._url = f"{server}/{DATABASE}"
        return self._url

    def stop(self) -> None:
        """Shut the server down (``pg_ctl stop -m fast``) if one runs; idempotent."""
        if self._live_port() is not None:
            self._pg_ctl("stop", "-m", "fast", "-w", "-t", "60")
            self._log(f"stopped PostgreSQL for {self.data_dir}")
        self._url = None

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @cached_property
    def _bin_dir(self) -> Path:
        return find_pg_bin_dir(self._explicit_bin_dir)

    @cached_property
    def _user(self) -> pwd.struct_passwd | None:
        """The account the server runs as when kyma is root (Postgres refuses root)."""
        if os.geteuid() != 0:
            return None
        accounts = {entry.pw_name: entry for entry in pwd.getpwall()}
        for name in ("postgres", SYSTEM_USER):
            if name in accounts:
                return accounts[name]
        shell = "/usr/sbin/nologin"
        _check(["useradd", "--system", "--no-create-home", "--shell", shell, SYSTEM_USER])
        return pwd.getpwnam(SYSTEM_USER)

    def _prepare(self) -> None:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        if self._user is not None:
            self._grant_traversal(self._user.pw_name)
        for folder in (self.data_dir, self.socket_dir):
            self._own_folder(folder)
        self.log_file.touch(mode=0o600)
        self._chown(self.log_file)

    def _grant_traversal(self, user: str) -> None:
        """Add the search bit (o+x) to each ancestor of the data folder the server can't pass."""
        for folder in reversed(self.data_dir.parents):
            probe = ["runuser", "-u", user, "--", "test", "-x", str(folder)]
            if subprocess.run(probe, timeout=10).returncode != 0:
                folder.chmod(folder.stat().st_mode | stat.S_IXOTH)
                self._log(f"added o+x to {folder} so the {user!r} user can reach {self.data_dir}")

    def _own_folder(self, folder: Path) -> None:
        """Create ``folder`` with mode 0700 for the server, refusing one owned by a stranger."""
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
        owners = {os.geteuid()} | ({self._user.pw_uid} if self._user else set())
        if not stat.S_ISDIR(info.st_mode) or info.st_uid not in owners:
            raise RuntimeStartError(f"{str(folder)!r} is not a folder owned by kyma or its server")
        folder.chmod(0o700)
        self._chown(folder)

    def _chown(self, path: Path) -> None:
        if self._user is not None:
            os.chown(path, self._user.pw_uid, self._user.pw_gid)

    def _initdb(self) -> None:
        """Create the cluster; the password is made now, or kept from an attempt that failed."""
        if not self.password_file.exists():
            fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(32) + "\n")
        # initdb reads the password from a file; give the server user its own short-lived copy.
        fd, pwfile = tempfile.mkstemp(dir=self.data_dir.parent)
        try:
            os.write(fd, self.password_file.read_bytes())
            os.close(fd)
            self._chown(Path(pwfile))
            self._run("initdb", "-D", str(self.data_dir), f"--pwfile={pwfile}", *_INITDB_OPTIONS)
        finally:
            os.unlink(pwfile)
        with open(self.data_dir / "postgresql.conf", "a") as conf:
            conf.write(_SETTINGS + self._settings)
        self._log(f"created a PostgreSQL cluster in {self.data_dir}")

    def _pid_file(self) -> list[str]:
        try:
            return (self.data_dir / "postmaster.pid").read_text().splitlines()
        except FileNotFoundError:
            return []

    def _live_port(self) -> int | None:
        """The port of the postmaster serving the data folder, or None when none runs."""
        lines = self._pid_file()
        if len(lines) >= 4 and _workdir(int(lines[0])) == str(self.data_dir):
            return int(lines[3])
        return None

    def _clear_stale_pid_file(self) -> None:
        """Remove a dead postmaster's pid file once none of its processes holds its memory.

        Postgres does this itself unless the dead pid is still a zombie (an init that does
        not reap) or was reused; the shared memory check below is the one Postgres makes.
        """
        lines = self._pid_file()
        if not lines:
            return
        segment = lines[6].split() if len(lines) > 6 else []
        deadline = time.monotonic() + _WAIT
        while len(segment) == 2 and _attached(*map(int, segment)):
            if time.monotonic() > deadline:
                raise RuntimeStartError(
                    f"processes of the dead postmaster {lines[0]} still use {self.data_dir}"
                )
            time.sleep(0.1)
        (self.data_dir / "postmaster.pid").unlink(missing_ok=True)
        self._log(f"removed the stale postmaster.pid of process {lines[0]}")

    def _ensure_database(self, server: str, port: int) -> None:
        """Wait for the server to answer, then create the kyma database if it is missing."""
        deadline = time.monotonic() + _WAIT
        while True:
            try:
                with psycopg.connect(f"{server}/postgres", autocommit=True, connect_timeout=5) as c:
                    query = "SELECT 1 FROM pg_database WHERE datname = %s"
                    if c.execute(query, (DATABASE,)).fetchone() is None:
                        create = sql.SQL("CREATE DATABASE {} OWNER {}")
                        c.execute(create.format(sql.Identifier(DATABASE), sql.Identifier(USER)))
                    return
            except psycopg.OperationalError as e:
                if time.monotonic() > deadline:
                    raise CatalogUnavailableError(
                        f"PostgreSQL on 127.0.0.1:{port} did not answer within {_WAIT}s: {e}"
                    ) from e
                time.sleep(0.2)

    def _pg_ctl(self, action: str, *args: str) -> None:
        self._run("pg_ctl", action, "-D", str(self.data_dir), *args, show_log=True)

    def _run(self, program: str, *args: str, show_log: bool = False) -> None:
        command = [str(self._bin_dir / program), *args]
        if self._user is not None:
            command = ["runuser", "-u", self._user.pw_name, "--", *command]
        _check(command, self.log_file if show_log else None)


def _check(command: list[str], log_file: Path | None = None) -> None:
    """Run ``command``; on failure raise with its output and the tail of ``log_file``."""
    try:
        done = subprocess.run(command, capture_output=True, cwd="/", timeout=_COMMAND_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeStartError(f"{shlex.join(command)}: {e}") from e
    if done.returncode != 0:
        detail = _tail((done.stderr + done.stdout).decode(errors="replace"))
        if log_file is not None and log_file.exists():
            detail += f"\n--- {log_file} ---\n{_tail(log_file.read_text(errors='replace'))}"
        raise RuntimeStartError(
            f"{shlex.join(command)} failed with exit code {done.returncode}:\n{detail}"
        )


def _tail(text: str) -> str:
    return "\n".join(text.splitlines()[-_TAIL:])


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def _socket_dir(preferred: Path) -> Path:
    """``preferred``, or a folder under /tmp named by its hash when its path is too long."""
    raw = os.fsencode(preferred)
    if len(raw) <= _SOCKET_DIR_MAX:
        return preferred
    return Path("/tmp") / f"kyma-pg-{hashlib.sha256(raw).hexdigest()[:16]}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _workdir(pid: int) -> str | None:
    """The working folder of a live process; None if it is gone, a zombie, or not ours to see."""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def _attached(key: int, shmid: int) -> int:
    """How many processes attach the System V shared memory segment (0 once it is gone)."""
    for row in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]:
        cols = row.split()
        if int(cols[0]) == key and int(cols[1]) == shmid:
            return int(cols[6])
    return 0
