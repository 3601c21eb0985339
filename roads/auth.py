"""Users, roles, sessions and table-scoped API keys, in ``auth.sqlite`` beside the journal.

Passwords and keys are never stored: passwords as scrypt hashes (a standard memory-hard KDF
from the standard library, per-user salt), API keys and session tokens as SHA-256 digests of
256-bit random secrets. Logins, failures, user changes and key issues are journaled, so the
audit trail shows them. Failed logins are rate-limited per user name and per address.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from roads.errors import InputError
from roads.store.journal import SYSTEM, Journal, thread_connection

Role = Literal["dealer", "supervisor", "auditor", "viewer", "admin"]
ROLES: tuple[Role, ...] = ("dealer", "supervisor", "auditor", "viewer", "admin")
#: What each role may do; screens and the read API need no login at all.
PERMISSIONS: dict[str, frozenset[str]] = {
    "dealer": frozenset({"enter", "request_correction", "read"}),
    "supervisor": frozenset({"enter", "request_correction", "approve", "read"}),
    "auditor": frozenset({"audit", "read"}),
    "viewer": frozenset({"read"}),
    "admin": frozenset({"enter", "request_correction", "approve", "audit", "read", "admin"}),
}
SESSION_HOURS = 8
MIN_PASSWORD = 10
MAX_FAILURES = 5
FAILURE_WINDOW = timedelta(minutes=15)
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY, role TEXT NOT NULL, salt BLOB NOT NULL, hash BLOB NOT NULL,
    created_at TEXT NOT NULL, disabled INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY, name TEXT NOT NULL, csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    key_hash TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, table_id TEXT NOT NULL,
    created_by TEXT, created_at TEXT NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS failures (name TEXT NOT NULL, address TEXT NOT NULL, at TEXT NOT NULL);
"""


class AuthError(InputError):
    """Refused: unknown user, wrong password, too many failures, missing permission."""


class RateLimited(AuthError):
    """Too many failed logins for this user or address; try again later."""


@dataclass(frozen=True, slots=True)
class Session:
    user: str
    role: str
    csrf: str
    expires_at: datetime

    def can(self, permission: str) -> bool:
        return permission in PERMISSIONS.get(self.role, frozenset())


def _now() -> datetime:
    return datetime.now(UTC)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise AuthError(f"a password needs at least {MIN_PASSWORD} characters")


def hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P,
                          dklen=32)


class Auth:
    """The user and key registry of one store."""

    def __init__(self, root: Path, journal: Journal) -> None:
        self.path = root / "auth.sqlite"
        self.journal = journal
        self._local = threading.local()
        root.mkdir(parents=True, exist_ok=True)
        self._db().executescript(_SCHEMA)

    def _db(self) -> sqlite3.Connection:
        return thread_connection(self._local, self.path)

    # -- users ------------------------------------------------------------------------------
    def add_user(self, name: str, role: str, password: str, by: str = "cli") -> None:
        if role not in ROLES:
            raise AuthError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
        if not name or not name.replace("_", "").replace("-", "").replace(".", "").isalnum():
            raise AuthError(f"user name {name!r}: use letters, digits, '.', '_' or '-'")
        _check_password(password)
        salt = secrets.token_bytes(16)
        try:
            self._db().execute("INSERT INTO users(name, role, salt, hash, created_at) "
                               "VALUES (?,?,?,?,?)", (name, role, salt,
                                                      hash_password(password, salt),
                                                      _now().isoformat()))
        except sqlite3.IntegrityError:
            raise AuthError(f"user {name!r} already exists") from None
        self.journal.append("user_added", SYSTEM, None, {"user": name, "role": role}, by)

    def set_password(self, name: str, password: str, by: str = "cli") -> None:
        _check_password(password)
        salt = secrets.token_bytes(16)
        cur = self._db().execute("UPDATE users SET salt = ?, hash = ? WHERE name = ?",
                                 (salt, hash_password(password, salt), name))
        if cur.rowcount == 0:
            raise AuthError(f"no user {name!r}")
        self._db().execute("DELETE FROM sessions WHERE name = ?", (name,))
        self.journal.append("user_changed", SYSTEM, None, {"user": name, "change": "password"},
                            by)

    def users(self) -> list[dict[str, str | bool]]:
        rows = self._db().execute(
            "SELECT name, role, created_at, disabled FROM users ORDER BY name").fetchall()
        return [{"name": r[0], "role": r[1], "created_at": r[2], "disabled": bool(r[3])}
                for r in rows]

    # -- logins and sessions ----------------------------------------------------------------
    def _failures(self, name: str, address: str) -> int:
        since = (_now() - FAILURE_WINDOW).isoformat()
        row = self._db().execute(
            "SELECT count(*) FROM failures WHERE at > ? AND (name = ? OR address = ?)",
            (since, name, address)).fetchone()
        return int(row[0])

    def login(self, name: str, password: str, address: str = "") -> tuple[str, Session]:
        """A new session token for a correct password; failures are counted and journaled."""
        if self._failures(name, address) >= MAX_FAILURES:
            self.journal.append("login_failed", SYSTEM, None,
                                {"user": name, "address": address, "reason": "rate limited"},
                                name)
            raise RateLimited("too many failed logins; wait 15 minutes")
        row = self._db().execute("SELECT role, salt, hash, disabled FROM users WHERE name = ?",
                                 (name,)).fetchone()
        # Hash even for an unknown user so timing does not reveal which names exist.
        salt = row[1] if row else b"\0" * 16
        ok = hmac.compare_digest(hash_password(password, salt), row[2] if row else b"") \
            and row is not None and not row[3]
        if not ok:
            self._db().execute("INSERT INTO failures VALUES (?,?,?)",
                               (name, address, _now().isoformat()))
            self.journal.append("login_failed", SYSTEM, None,
                                {"user": name, "address": address, "reason": "bad credentials"},
                                name)
            raise AuthError("wrong user name or password")
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires = _now() + timedelta(hours=SESSION_HOURS)
        self._db().execute("INSERT INTO sessions VALUES (?,?,?,?)",
                           (_digest(token), name, csrf, expires.isoformat()))
        self.journal.append("login", SYSTEM, None, {"user": name, "address": address}, name)
        return token, Session(name, row[0], csrf, expires)

    def session(self, token: str | None) -> Session | None:
        """The live session of a token; None when unknown or expired."""
        if not token:
            return None
        row = self._db().execute(
            "SELECT s.name, u.role, s.csrf, s.expires_at, u.disabled FROM sessions s "
            "JOIN users u ON u.name = s.name WHERE s.token_hash = ?",
            (_digest(token),)).fetchone()
        if row is None or row[4]:
            return None
        expires = datetime.fromisoformat(row[3])
        if expires <= _now():
            self._db().execute("DELETE FROM sessions WHERE token_hash = ?", (_digest(token),))
            return None
        return Session(row[0], row[1], row[2], expires)

    def logout(self, token: str) -> None:
        session = self.session(token)
        self._db().execute("DELETE FROM sessions WHERE token_hash = ?", (_digest(token),))
        if session is not None:
            self.journal.append("logout", SYSTEM, None, {"user": session.user}, session.user)

    # -- API keys ---------------------------------------------------------------------------
    def issue_key(self, table_id: str, by: str = "cli") -> str:
        """A new key for one table's card-reading shoe or system; shown once, stored hashed."""
        key_id = secrets.token_hex(4)
        key = f"rk_{key_id}_{secrets.token_urlsafe(32)}"
        self._db().execute("INSERT INTO api_keys(key_hash, key_id, table_id, created_by, "
                           "created_at) VALUES (?,?,?,?,?)",
                           (_digest(key), key_id, table_id, by, _now().isoformat()))
        self.journal.append("api_key_issued", table_id, None, {"key_id": key_id}, by)
        return key

    def key_table(self, key: str) -> tuple[str, str] | None:
        """(table, key id) a key is scoped to; None for an unknown or revoked key."""
        row = self._db().execute(
            "SELECT table_id, key_id FROM api_keys WHERE key_hash = ? AND revoked = 0",
            (_digest(key),)).fetchone()
        return None if row is None else (row[0], row[1])
