"""API tokens and who may do what: scopes ``read``, ``ingest``, ``admin`` and table grants.

A token is ``kyma_`` + 256 random bits (url-safe base64). The catalog keeps only its
SHA-256: a slow password hash (bcrypt, argon2) protects low-entropy secrets against guessing,
which 256 random bits need no protection from, and a fast hash keeps the per-request lookup
cheap. The clear token is printed once, by ``kyma token create``.

Every surface (HTTP API, Flight SQL, OTLP) turns its ``Authorization: Bearer <token>`` into a
``Principal`` through one ``Authenticator`` and asks it for a scope and tables. With auth off
every caller is ``ANYONE``, who may do everything.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from kyma.engine.errors import ConfigError, PermissionDeniedError, UnauthenticatedError
from kyma.engine.query import ADMIN, Access, Caller
from kyma.settings import Settings
from kyma.tokens import TokenRecord, TokenStore

SCOPES = ("read", "ingest", "admin")
AUTH_MODES = ("off", "required")
TOKEN_PREFIX = "kyma_"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class Principal:
    """A caller: ``scopes`` (admin implies the others) and ``tables`` (None: every table)."""

    token_id: int | None
    scopes: frozenset[str]
    tables: frozenset[str] | None = None

    @property
    def unrestricted(self) -> bool:
        return ADMIN in self.scopes

    def caller(self, client: str, pid: int | None = None, request_id: str | None = None) -> Caller:
        """This principal as the list of running statements names it (``token 7``);
        ``pid``: its Postgres protocol session's; ``request_id``: its HTTP request's."""
        name = "anyone" if self.token_id is None else f"token {self.token_id}"
        return Caller(name, self.unrestricted, client, pid, request_id)

    @property
    def limited(self) -> bool:
        """Whether the caller is limited to some tables (a read or ingest token's --table)."""
        return not self.unrestricted and self.tables is not None

    def require(self, scope: str, tables: Iterable[str] | None = ()) -> None:
        """PermissionDeniedError naming the missing scope, or the first table not granted.

        ``tables`` None: what is asked tells about every table (connectors, jobs, metrics),
        which a caller limited to some tables may not see."""
        if self.unrestricted:
            return
        if scope not in self.scopes:
            have = ", ".join(sorted(self.scopes))
            raise PermissionDeniedError(
                f"this needs a token with scope {scope!r}; token {self.token_id} has {have}",
                scope=scope,
            )
        if tables is None and self.limited:
            raise PermissionDeniedError(
                f"this tells about every table; token {self.token_id} is limited to"
                f" {self._granted()}",
                scope=scope,
            )
        for table in sorted(tables or ()):
            if not self.may_touch(table):
                raise PermissionDeniedError(
                    f"token {self.token_id} may not {scope} table {table!r}"
                    f" (it is limited to {self._granted()})",
                    scope=scope,
                    table=table,
                )

    def may_touch(self, table: str) -> bool:
        return self.unrestricted or self.tables is None or table in self.tables

    def may_see_catalog(self, connector: str) -> bool:
        """Whether a connector shows in listings: the caller may read one of its tables
        (``<connector>.<schema>.<table>``)."""
        prefix = f"{connector}."
        return not self.limited or any(t.startswith(prefix) for t in self.tables or ())

    def require_catalog(self, connector: str | None, asked: str) -> str:
        """``connector``, or PermissionDeniedError unless the caller may read one of its
        tables; None (no such connector) is refused alike: a refusal tells nothing of what
        exists, as a query naming a table not granted is refused before it is looked up."""
        if connector is None or not self.may_see_catalog(connector):
            raise PermissionDeniedError(
                f"token {self.token_id} may not read connector {asked!r}"
                f" (it is limited to {self._granted()})",
                scope="read",
            )
        return connector

    def authorize(self, access: Access) -> None:
        """The check the query engine calls with what a statement needs."""
        self.require(access.scope, access.tables)

    def _granted(self) -> str:
        return ", ".join(sorted(self.tables or ()))


ANYONE = Principal(None, frozenset({ADMIN}))


class Authenticator:
    """Bearer tokens to principals, against the catalog on every call (a revoke is immediate)."""

    def __init__(self, tokens: TokenStore, mode: str) -> None:
        if mode not in AUTH_MODES:
            raise ConfigError(f"KYMA_AUTH: expected one of {AUTH_MODES}, got {mode!r}")
        self.tokens = tokens
        self.required = mode == "required"

    def principal(self, authorization: str | None) -> Principal:
        """The caller an ``Authorization`` header value names; UnauthenticatedError if none."""
        if not self.required:
            return ANYONE
        if not authorization:
            raise UnauthenticatedError("missing token: send Authorization: Bearer <token>")
        kind, _, token = authorization.strip().partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise UnauthenticatedError("malformed Authorization header: expected Bearer <token>")
        record = self.tokens.by_hash(token_hash(token.strip()))
        if record is None:
            raise UnauthenticatedError("unknown token")
        if record.revoked_at is not None:
            raise UnauthenticatedError(f"token {record.token_id} was revoked")
        return _principal(record)


def _principal(record: TokenRecord) -> Principal:
    tables = None if record.tables is None else frozenset(record.tables)
    return Principal(record.token_id, frozenset(record.scopes), tables)


def create_token(
    tokens: TokenStore, scopes: list[str], tables: list[str] | None, name: str | None = None
) -> tuple[str, TokenRecord]:
    """A new token and its record; the token itself is not kept anywhere."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if not scopes or unknown:
        raise ConfigError(f"scope: expected some of {SCOPES}, got {unknown or scopes!r}")
    if tables and ADMIN in scopes:
        raise ConfigError("--table limits read and ingest tokens; an admin token has every table")
    token = new_token()
    record = tokens.create(
        token_hash(token), sorted(set(scopes)), sorted(set(tables)) if tables else None, name
    )
    return token, record


def first_token(tokens: TokenStore) -> str | None:
    """An admin token named ``first`` when the catalog has never had a token, else None.

    With auth required, a fresh deployment (a container) has no other way in; the caller
    prints it once. A catalog that has had tokens (even only revoked ones) gets none.
    """
    if tokens.list_all():
        return None
    return create_token(tokens, [ADMIN], None, "first")[0]


def check_listen(settings: Settings) -> None:
    """ConfigError unless the listeners are safe to open: auth on, loopback, or told so."""
    if settings.auth not in AUTH_MODES:
        raise ConfigError(f"KYMA_AUTH: expected one of {AUTH_MODES}, got {settings.auth!r}")
    if (settings.tls_cert_file is None) != (settings.tls_key_file is None):
        raise ConfigError("KYMA_TLS_CERT_FILE and KYMA_TLS_KEY_FILE go together: set both")
    if settings.auth == "required" or settings.allow_insecure_listen:
        return
    if not is_loopback(settings.http_host):
        raise ConfigError(
            f"refusing to listen on {settings.http_host!r} without auth: set KYMA_AUTH=required"
            " and create tokens with `kyma token create`, or set KYMA_ALLOW_INSECURE_LISTEN=true"
            " to serve it to anyone who can reach it"
        )


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)
