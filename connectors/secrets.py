"""Resolve a connector's ``secret_ref`` at connect time; the value is never stored or shown.

A secret comes only from an allow-listed place, so that whoever may define a connector
cannot make kyma read (and send to a server of their choosing) any file or variable:

* ``$env:KYMA_SECRET_<NAME>`` reads an environment variable whose name has that prefix;
* ``file:<name>`` or ``file:/path`` reads a file in the secrets folder (``KYMA_SECRETS_DIR``,
  default ``<home>/secrets``), one trailing newline dropped. The real path counts: a symlink
  that leads out of the folder is refused, and so is any of kyma's own files under its home
  when the folder is (or holds) the home.

Errors name the reference and the rule, never the secret.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kyma.engine.errors import ConfigError

ENV_PREFIX = "KYMA_SECRET_"
_FIELD = "connection.secret_ref"


@dataclass(frozen=True)
class SecretPolicy:
    """Where secrets may come from: ``folder`` for files; ``home`` is kyma's, never read."""

    folder: Path
    home: Path | None = None

    def check(self, ref: str | None) -> None:
        """ConfigError naming the rule when ``ref`` points outside the allowed places."""
        if ref is None:
            return
        if not ref.startswith("$env:"):
            self._path(ref)
        elif not ref.removeprefix("$env:").startswith(ENV_PREFIX):
            raise ConfigError(
                f"{_FIELD}: {ref!r} is not allowed: only environment variables named"
                f" {ENV_PREFIX}<NAME> may hold secrets"
            )

    def resolve(self, ref: str | None) -> str | None:
        """The secret ``ref`` names (checked again: the file system may have changed)."""
        if ref is None:
            return None
        self.check(ref)
        if ref.startswith("$env:"):
            name = ref.removeprefix("$env:")
            value = os.environ.get(name)
            if value is None:
                raise ConfigError(f"secret_ref {ref!r}: the environment variable {name} is not set")
            return value
        try:
            with open(self._path(ref), encoding="utf-8") as f:
                return f.read().removesuffix("\n")
        except OSError as e:
            raise ConfigError(f"secret_ref {ref!r}: cannot read the file: {e.strerror}") from None

    def _path(self, ref: str) -> Path:
        """The real path of a ``file:`` reference, inside the secrets folder."""
        folder = Path(os.path.realpath(self.folder))
        real = Path(os.path.realpath(folder / ref.removeprefix("file:")))
        if not real.is_relative_to(folder) or real == folder:
            raise ConfigError(
                f"{_FIELD}: {ref!r} is outside the secrets folder {str(folder)!r}"
                " (KYMA_SECRETS_DIR): secret files are read only from there, symlinks resolved"
            )
        home = Path(os.path.realpath(self.home)) if self.home is not None else None
        if home is not None and home.is_relative_to(folder) and real.is_relative_to(home):
            raise ConfigError(f"{_FIELD}: {ref!r} is one of kyma's own files; it is never read")
        return real


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every occurrence of each (non-empty) secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
