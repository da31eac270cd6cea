"""API keys for ``graphmem serve``: each key belongs to one namespace (a tenant), may be
read-only, and is stored hashed (SHA-256 of a 256-bit random secret: the secret itself is shown
once, when the key is created, and never kept). A small SQLite file beside the store holds them,
so ``graphmem keys`` and a running server share it."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import sqlite3
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import NotFoundError, StoreError, ValidationError
from ..models import utcnow
from ..models.fields import NAMESPACE_PATTERN

PREFIX = "gmk"


class ApiKey(BaseModel):
    """A key as listed: never its secret."""

    id: str
    namespace: str = Field(description="the namespace it reaches (empty for an admin key)")
    read_only: bool
    admin: bool = Field(default=False, description="manages keys over REST (/v1/keys) and reaches no namespace")
    label: str
    created_at: datetime
    revoked_at: datetime | None = None


class KeyStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._keyed = False  # keys were seen: from then on every request needs one, whatever the file says
        try:
            if not self.path.exists():  # tokens' hashes are nobody else's to read: 0600 (SQLite's -wal follows)
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            with self._connect() as db:
                db.execute("CREATE TABLE IF NOT EXISTS api_keys (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, "
                           "read_only INTEGER NOT NULL, label TEXT NOT NULL, hash TEXT NOT NULL, "
                           "created_at TEXT NOT NULL, revoked_at TEXT, admin INTEGER NOT NULL DEFAULT 0)")
                if "admin" not in {r[1] for r in db.execute("PRAGMA table_info(api_keys)")}:  # a file from before
                    db.execute("ALTER TABLE api_keys ADD COLUMN admin INTEGER NOT NULL DEFAULT 0")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the API key file {self.path}: {exc}") from exc

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def create(self, namespace: str, *, read_only: bool = False, label: str = "", admin: bool = False
               ) -> tuple[ApiKey, str]:
        """A new key for ``namespace`` (an ``admin`` key: for none; it manages keys) and its token
        (shown once; only its hash is kept)."""
        if admin:
            namespace, read_only = "", False
        elif not re.fullmatch(NAMESPACE_PATTERN, namespace):
            raise ValidationError(f"invalid namespace {namespace!r}")
        if len(label) > 200:
            raise ValidationError("a key's label is at most 200 characters")
        key = ApiKey(id=secrets.token_hex(6), namespace=namespace, read_only=read_only, admin=admin, label=label,
                     created_at=utcnow())
        token = f"{PREFIX}_{key.id}_{secrets.token_urlsafe(32)}"
        with self._connect() as db:
            db.execute("INSERT INTO api_keys (id, namespace, read_only, label, hash, created_at, revoked_at, admin) "
                       "VALUES (?, ?, ?, ?, ?, ?, NULL, ?)", (key.id, namespace, int(read_only), label, _hash(token),
                                                              key.created_at.isoformat(), int(admin)))
        return key, token

    def adopt_first(self, namespace: str, token: str, *, label: str) -> ApiKey | None:
        """Store ``token`` (chosen by the operator: ``GRAPHMEM_FIRST_KEY``) as a key of ``namespace``
        when the file has no key at all; None when it has some (then it is left as it is)."""
        if not re.fullmatch(NAMESPACE_PATTERN, namespace):
            raise ValidationError(f"invalid namespace {namespace!r}")
        if len(token) < 32 or token != token.strip() or token.startswith(f"{PREFIX}_"):
            raise ValidationError(f"a chosen API key needs 32 characters or more, no surrounding spaces, and not "
                                  f"the {PREFIX}_ prefix of the keys graphmem makes")
        key = ApiKey(id=secrets.token_hex(6), namespace=namespace, read_only=False, label=label, created_at=utcnow())
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")  # two processes starting at once: one first key
            if db.execute("SELECT 1 FROM api_keys LIMIT 1").fetchone() is not None:
                return None
            db.execute("INSERT INTO api_keys (id, namespace, read_only, label, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       (key.id, namespace, 0, label, _hash(token), key.created_at.isoformat()))
        return key

    def list(self, *, revoked: bool = False) -> list[ApiKey]:
        with self._connect() as db:
            rows = db.execute("SELECT id, namespace, read_only, label, created_at, revoked_at, admin FROM api_keys "
                              + ("" if revoked else "WHERE revoked_at IS NULL ") + "ORDER BY created_at").fetchall()
        return [_key(r) for r in rows]

    def revoke(self, key_id: str) -> ApiKey:
        with self._connect() as db:
            done = db.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                              (utcnow().isoformat(), key_id)).rowcount
        if not done:
            raise NotFoundError(f"no active API key {key_id!r}")
        return next(k for k in self.list(revoked=True) if k.id == key_id)

    def any(self) -> bool:
        """Whether keys were ever made here: then every request needs one, even after all of
        them are revoked (revoking the last key must not open the server), and, once this
        process has seen a key, even when the file is deleted or recreated empty."""
        if not self._keyed:
            with self._connect() as db:
                self._keyed = db.execute("SELECT 1 FROM api_keys LIMIT 1").fetchone() is not None
        return self._keyed

    def verify(self, token: str) -> ApiKey | None:
        """The active key ``token`` is, or None. Constant-time on the hash. A key graphmem made
        names its row (``gmk_<id>_<secret>``); one an operator chose is found by its hash."""
        parts = token.split("_", 2)
        made = len(parts) == 3 and parts[0] == PREFIX
        try:
            with self._connect() as db:
                row = db.execute("SELECT id, namespace, read_only, label, created_at, revoked_at, admin, hash FROM api_keys "
                                 + ("WHERE id = ?" if made else "WHERE hash = ?"),
                                 (parts[1] if made else _hash(token),)).fetchone()
        except sqlite3.OperationalError:  # the file was replaced under a running server: no key is valid
            return None
        if row is None or row[5] is not None or not hmac.compare_digest(row[7], _hash(token)):
            return None
        return _key(row[:7])


def token_of(headers: Mapping[str, str]) -> str | None:
    """The API key a request carries: ``Authorization: Bearer <key>``, else ``X-API-Key``."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return headers.get("x-api-key") or None


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _key(row: tuple) -> ApiKey:
    return ApiKey(id=row[0], namespace=row[1], read_only=bool(row[2]), admin=bool(row[6]), label=row[3],
                  created_at=datetime.fromisoformat(row[4]), revoked_at=datetime.fromisoformat(row[5]) if row[5] else None)
