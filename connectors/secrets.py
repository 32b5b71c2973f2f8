"""Resolve a connector's ``secret_ref`` at connect time; the value is never stored or shown.

``$env:NAME`` reads an environment variable; ``file:/path`` reads a file (one trailing
newline dropped). Errors name the reference, never the secret.
"""

from __future__ import annotations

import os

from kyma.engine.errors import ConfigError


def resolve_secret(ref: str | None) -> str | None:
    if ref is None:
        return None
    if ref.startswith("$env:"):
        name = ref.removeprefix("$env:")
        value = os.environ.get(name)
        if value is None:
            raise ConfigError(f"secret_ref {ref!r}: the environment variable {name} is not set")
        return value
    path = ref.removeprefix("file:")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().removesuffix("\n")
    except OSError as e:
        raise ConfigError(f"secret_ref {ref!r}: cannot read the file: {e.strerror}") from None


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every occurrence of each (non-empty) secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
