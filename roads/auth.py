"""Users, roles, sessions, table API keys and personal tokens, in ``auth.sqlite`` beside
the journal (the login limiter's counters are in ``logins.sqlite``).

Passwords and secrets are never stored: passwords as scrypt hashes (a standard memory-hard
KDF from the standard library, per-user salt); API keys, personal tokens and session tokens
as SHA-256 digests of 256-bit random secrets. A key belongs to one table's shoe or system;
a personal token carries its user's role (for scripts calling the corrections API) and
ends when it is revoked, expires or its user is disabled. Logins, user changes, keys and
tokens issued or revoked are journaled; refused logins are limited and journaled in
aggregate by :mod:`roads.logins`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypedDict

from roads import faults
from roads.errors import RETRY_AFTER_SECONDS, JournalBusy
from roads.logins import (
    AuthError,
    LoginGuard,
    LoginLimits,
    RateLimited,
    recorded_name,
    write_lock_within,
)
from roads.store import SESSION_HOURS, credential_digest
from roads.store.journal import SYSTEM, Event, Journal, thread_connection
from roads.thread_connections import close_thread_connection

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
TOKEN_DAYS = 90
MIN_PASSWORD = 10
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
#: ``rk_<id>_<secret>`` (API key) and ``rt_<id>_<secret>`` (personal token): 8 hex digits
#: of id, 256 random bits of secret. Anything else is refused without a database lookup.
CREDENTIAL = re.compile(r"r([kt])_([0-9a-f]{8})_[A-Za-z0-9_-]{43}")
SESSION_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")
#: Letters (any script), digits, '.', '_', '-'; never starting with a sign a spreadsheet or
#: a command line would read as something else.
USER_NAME = re.compile(r"[^\W_][\w.-]{0,63}")
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
CREATE TABLE IF NOT EXISTS tokens (
    token_hash TEXT PRIMARY KEY, token_id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
    created_by TEXT, created_at TEXT NOT NULL, expires_at TEXT NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS applied (seq INTEGER PRIMARY KEY);
"""


class Credential(TypedDict):
    """An issued API key (``belongs_to`` its table) or personal token (to its user)."""

    kind: Literal["key", "token"]
    id: str
    belongs_to: str
    created_by: str
    created_at: str
    expires_at: str  # "" for keys: they last until revoked
    revoked: bool


@dataclass(frozen=True, slots=True)
class Session:
    """Who is acting and with which role: a browser session (with its CSRF token) or a
    personal token (``csrf`` empty: a bearer token is not sent by a browser on its own)."""

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


def credential_kind(secret: str) -> Literal["key", "token"] | None:
    """``key`` or ``token`` for a syntactically valid bearer secret, else None."""
    match = CREDENTIAL.fullmatch(secret)
    if match is None:
        return None
    return "key" if match.group(1) == "k" else "token"


class Auth:
    """The user, key and token registry of one store."""

    def __init__(self, root: Path, journal: Journal, limits: LoginLimits | None = None,
                 clock: Callable[[], datetime] = _now) -> None:
        self.path = root / "auth.sqlite"
        self.journal = journal
        self._local = threading.local()
        self._clock = clock
        root.mkdir(parents=True, exist_ok=True)
        db = self._db()
        db.executescript(_SCHEMA)
        # account events before this are not recorded in ``applied`` (a store from before);
        # asked first, so opening a store never waits for a change holding the write lock
        if db.execute("SELECT 1 FROM applied LIMIT 1").fetchone() is None:
            db.execute("INSERT INTO applied SELECT -? WHERE NOT EXISTS "
                       "(SELECT 1 FROM applied)", (journal.head()[0],))
        self.guard = LoginGuard(root, journal, limits or LoginLimits(), clock)

    def _db(self) -> sqlite3.Connection:
        return thread_connection(self._local, self.path)

    def close(self) -> None:
        """Close this thread's connections (``auth.sqlite``, ``logins.sqlite``)."""
        close_thread_connection(self._local)
        self.guard.close()

    @contextmanager
    def _writing(self, deadline: float | None = None) -> Iterator[sqlite3.Connection]:
        """``auth.sqlite``'s write lock, held around a change's check, its journal event and
        its row: two ``roads users add ana`` at once could otherwise both find no ``ana``
        and both journal her, and an issue between its event and its row looks to a second
        issue like one a kill left (closed as abandoned while the first hands it out).
        Nothing takes the journal's lock and then this one, so the two cannot deadlock.

        One deadline for both locks: a change waits :attr:`Journal.queue_wait` at most in
        all, for this lock (SQLite's busy timeout, bounded by the deadline) and then for the
        journal's writers' queue (what is left of it, :meth:`_append`). Behind a hung journal
        writer, the changes and logins queued on this lock each end in
        :class:`~roads.errors.JournalBusy` within the bound (SQLite's 30 s timeout here
        answered the ones queued longest "database is locked", a 500). ``deadline``: a
        login's, which waited for ``logins.sqlite`` first (:meth:`login`)."""
        db = self._db()
        self._local.deadline = time.monotonic() + self.journal.queue_wait \
            if deadline is None else deadline
        (usual,) = db.execute("PRAGMA busy_timeout").fetchone()
        write_lock_within(db, self._local.deadline, self._busy, int(usual))
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _busy(self) -> JournalBusy:
        return JournalBusy(f"the accounts are busy: a login or account change ahead of this "
                           f"one has not finished ({self.path}); try again shortly",
                           RETRY_AFTER_SECONDS)

    def _append(self, kind: str, table_id: str, payload: dict[str, Any], by: str) -> Event:
        """Journal an event inside :meth:`_writing`, waiting for the journal's writers'
        queue only for what is left of the change's deadline."""
        left = max(self._local.deadline - time.monotonic(), 0.0)
        return self.journal.append(kind, table_id, None, payload, by, wait=left)

    def _journaled(self, db: sqlite3.Connection, kind: str, table_id: str,
                   payload: dict[str, Any], by: str,
                   write: Callable[[sqlite3.Connection], object]) -> None:
        """Journal an account change, then make it in ``auth.sqlite`` with the record that
        its event is applied, inside :meth:`_writing`'s transaction ``db``. The event first:
        a kill between the two leaves an event whose row is as it was before it, which
        ``store verify`` names as an interrupted write (not as a row no event made) and the
        next run of the command completes (``roads.store.accounts``)."""
        event = self._append(kind, table_id, payload, by)
        faults.point("accounts:journaled")
        write(db)
        db.execute("INSERT INTO applied VALUES (?)", (event.seq,))

    def _exists(self, name: str) -> bool:
        return self._db().execute("SELECT 1 FROM users WHERE name = ?",
                                  (name,)).fetchone() is not None

    # -- users ------------------------------------------------------------------------------
    def add_user(self, name: str, role: str, password: str, by: str = "cli") -> None:
        if role not in ROLES:
            raise AuthError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
        if not USER_NAME.fullmatch(name):
            raise AuthError(f"user name {name!r}: use up to 64 letters, digits, '.', '_' or "
                            "'-', starting with a letter or digit")
        _check_password(password)
        if self._exists(name):  # early, before the slow hash; asked again under the lock
            raise AuthError(f"user {name!r} already exists")
        salt = secrets.token_bytes(16)
        hashed = hash_password(password, salt)
        with self._writing() as db:
            if self._exists(name):
                raise AuthError(f"user {name!r} already exists")
            self._journaled(db, "user_added", SYSTEM,
                            {"user": name, "role": role,
                             "credential": credential_digest(salt, hashed)},
                            by, lambda db: db.execute(
                                "INSERT INTO users(name, role, salt, hash, created_at) "
                                "VALUES (?,?,?,?,?)",
                                (name, role, salt, hashed, self._clock().isoformat())))

    def set_password(self, name: str, password: str, by: str = "cli") -> None:
        _check_password(password)
        if not self._exists(name):
            raise AuthError(f"no user {name!r}")
        salt = secrets.token_bytes(16)
        hashed = hash_password(password, salt)

        def write(db: sqlite3.Connection) -> None:
            db.execute("UPDATE users SET salt = ?, hash = ? WHERE name = ?",
                       (salt, hashed, name))
            db.execute("DELETE FROM sessions WHERE name = ?", (name,))

        with self._writing() as db:
            if not self._exists(name):
                raise AuthError(f"no user {name!r}")
            self._journaled(db, "user_changed", SYSTEM,
                            {"user": name, "change": "password",
                             "credential": credential_digest(salt, hashed)}, by, write)

    def disable_user(self, name: str, by: str = "cli") -> None:
        """Refuse the user's logins and end their sessions and personal tokens at once."""
        def write(db: sqlite3.Connection) -> None:  # all three or none
            db.execute("UPDATE users SET disabled = 1 WHERE name = ?", (name,))
            db.execute("DELETE FROM sessions WHERE name = ?", (name,))
            db.execute("UPDATE tokens SET revoked = 1 WHERE name = ? AND revoked = 0", (name,))

        with self._writing() as db:
            if not self._exists(name):
                raise AuthError(f"no user {name!r}")
            sessions, tokens = db.execute(
                "SELECT (SELECT count(*) FROM sessions WHERE name = ?), "
                "(SELECT count(*) FROM tokens WHERE name = ? AND revoked = 0)",
                (name, name)).fetchone()
            self._journaled(db, "user_changed", SYSTEM,
                            {"user": name, "change": "disabled", "sessions_ended": sessions,
                             "tokens_revoked": tokens}, by, write)

    def enable_user(self, name: str, by: str = "cli") -> None:
        """Allow the user to log in again (revoked tokens stay revoked)."""
        with self._writing() as db:
            if not self._exists(name):
                raise AuthError(f"no user {name!r}")
            self._journaled(db, "user_changed", SYSTEM, {"user": name, "change": "enabled"},
                            by, lambda db: db.execute(
                                "UPDATE users SET disabled = 0 WHERE name = ?", (name,)))

    def users(self) -> list[dict[str, str | bool]]:
        rows = self._db().execute(
            "SELECT name, role, created_at, disabled FROM users ORDER BY name").fetchall()
        return [{"name": r[0], "role": r[1], "created_at": r[2], "disabled": bool(r[3])}
                for r in rows]

    # -- logins and sessions ----------------------------------------------------------------
    def login(self, name: str, password: str, address: str = "") -> tuple[str, Session]:
        """A new session token for a correct password. Slow (scrypt): call it off the
        event loop. Refused attempts are limited and counted (:mod:`roads.logins`)."""
        typed = recorded_name(name)
        try:
            self.guard.check(typed, address)
        except RateLimited:
            self._refused(typed, address, "rate limited")
            raise
        row = self._db().execute("SELECT role, salt, hash, disabled FROM users WHERE name = ?",
                                 (name,)).fetchone()
        # Hash even for an unknown user so timing does not reveal which names exist.
        salt = row[1] if row else b"\0" * 16
        matches = hmac.compare_digest(hash_password(password, salt), row[2] if row else b"")
        if row is None or not matches or row[3]:
            reason = "disabled user" if row is not None and matches else "bad credentials"
            deadline = self.guard.deadline()  # one for the failure and its journaling
            self.guard.failed(typed, address, reason, deadline)
            self.guard.flush(deadline=deadline)
            raise AuthError("wrong user name or password")
        deadline = self.guard.deadline()  # one for logins.sqlite, auth.sqlite and the queue
        self.guard.succeeded(typed, address, deadline)
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires = self._clock() + timedelta(hours=SESSION_HOURS)
        row_values = (_digest(token), name, csrf, expires.isoformat())
        # The event first: a crash between the two leaves a login without a session (no
        # harm), never a session no login recorded (which verify names as planted). Under
        # the write lock, with the password and the user asked again: a password change
        # or disabling journaled between the hash and the row ends the session it let in.
        with self._writing(deadline) as db:
            if db.execute("SELECT role, salt, hash, disabled FROM users WHERE name = ?",
                          (name,)).fetchone() != row:
                raise AuthError("wrong user name or password")
            self._append("login", SYSTEM, {"user": name, "address": address,
                                           "credential": credential_digest(*row_values)},
                         name)
            db.execute("INSERT INTO sessions VALUES (?,?,?,?)", row_values)
        return token, Session(name, row[0], csrf, expires)

    def _refused(self, name: str, address: str, reason: str) -> None:
        deadline = self.guard.deadline()
        self.guard.refused(name, address, reason, deadline)
        self.guard.flush(deadline=deadline)

    def flush_refusals(self, force: bool = False) -> int:
        """Journal the refused logins of ended windows (all of them when ``force``)."""
        return self.guard.flush(force)

    def session(self, token: str | None) -> Session | None:
        """The live session of a token; None when unknown, expired or the user disabled."""
        if not token or not SESSION_TOKEN.fullmatch(token):
            return None
        row = self._db().execute(
            "SELECT s.name, u.role, s.csrf, s.expires_at, u.disabled FROM sessions s "
            "JOIN users u ON u.name = s.name WHERE s.token_hash = ?",
            (_digest(token),)).fetchone()
        if row is None or row[4]:
            return None
        expires = datetime.fromisoformat(row[3])
        if expires <= self._clock():
            # Tidying only (an expired row lets no one in): skipped, not waited for, while
            # a login or change holds the write lock; the next look at it removes it.
            with contextlib.suppress(JournalBusy), self._writing(time.monotonic()) as db:
                db.execute("DELETE FROM sessions WHERE token_hash = ?", (_digest(token),))
            return None
        return Session(row[0], row[1], row[2], expires)

    def logout(self, token: str) -> None:
        """End a session; the event names the row it ended (by digest), so the row put
        back afterwards is not the login's any more."""
        session = self.session(token)
        deadline = time.monotonic() + self.journal.queue_wait  # the delete's and the event's
        with self._writing(deadline) as db:  # (committed before the event is journaled)
            row = db.execute("SELECT token_hash, name, csrf, expires_at FROM sessions "
                             "WHERE token_hash = ?", (_digest(token),)).fetchone()
            db.execute("DELETE FROM sessions WHERE token_hash = ?", (_digest(token),))
        if session is not None:
            self.journal.append("logout", SYSTEM, None, {
                "user": session.user,
                **({"credential": credential_digest(*row)} if row else {})}, session.user,
                wait=max(deadline - time.monotonic(), 0.0))

    # -- API keys and personal tokens -------------------------------------------------------
    def _new_id(self) -> str:
        """A key or token id no key and no token has (ids name both in ``revoke``)."""
        while True:
            candidate = secrets.token_hex(4)
            if self._db().execute(
                    "SELECT 1 FROM api_keys WHERE key_id = ? UNION ALL "
                    "SELECT 1 FROM tokens WHERE token_id = ?",
                    (candidate, candidate)).fetchone() is None:
                return candidate

    def issue_key(self, table_id: str, by: str = "cli") -> str:
        """A new key for one table's card-reading shoe or system; shown once, stored hashed."""
        with self._writing() as db:
            self._abandon(db, "api_key", table_id, by)
            key_id = self._new_id()
            key = f"rk_{key_id}_{secrets.token_urlsafe(32)}"
            self._journaled(db, "api_key_issued", table_id,
                            {"key_id": key_id, "credential": credential_digest(_digest(key))},
                            by, lambda db: db.execute(
                                "INSERT INTO api_keys(key_hash, key_id, table_id, created_by, "
                                "created_at) VALUES (?,?,?,?,?)",
                                (_digest(key), key_id, table_id, by,
                                 self._clock().isoformat())))
        return key

    def _abandon(self, db: sqlite3.Connection, kind: Literal["api_key", "token"], owner: str,
                 by: str) -> None:
        """Close the keys (of table ``owner``) or tokens (of user ``owner``) an issue killed
        between its event and its row journaled but never stored (the secret was never
        shown): revoked as ``abandoned``, so no row of them may appear later. Called
        under :meth:`_writing`, so an issue still running cannot be taken for one."""
        table, column = ("api_keys", "key_id") if kind == "api_key" else ("tokens", "token_id")
        issued = self.journal.of_kinds((f"{kind}_issued", f"{kind}_revoked"))
        closed = {e.payload.get(column) for e in issued if e.kind.endswith("_revoked")}
        for event in issued:
            ident = event.payload.get(column)
            mine = event.table_id if kind == "api_key" else event.payload.get("user")
            if (event.kind.endswith("_issued") and mine == owner and ident not in closed
                    and db.execute(f"SELECT 1 FROM {table} WHERE {column} = ?",
                                   (ident,)).fetchone() is None):
                payload = {column: ident, "abandoned": True,
                           **({} if kind == "api_key" else {"user": owner})}
                self._journaled(db, f"{kind}_revoked", event.table_id, payload, by,
                                lambda db: None)

    def key_table(self, key: str) -> tuple[str, str] | None:
        """(table, key id) a key is scoped to; None for an unknown or revoked key."""
        if credential_kind(key) != "key":
            return None
        row = self._db().execute(
            "SELECT table_id, key_id FROM api_keys WHERE key_hash = ? AND revoked = 0",
            (_digest(key),)).fetchone()
        return None if row is None else (row[0], row[1])

    def issue_token(self, name: str, by: str = "cli", days: int = TOKEN_DAYS) -> str:
        """A personal token acting as ``name`` with ``name``'s role (``rt_<id>_<secret>``):
        shown once, stored hashed, journaled; it expires after ``days``."""
        if not 1 <= days <= 366:
            raise AuthError(f"a token lasts 1 to 366 days (got {days})")
        with self._writing() as db:
            row = db.execute("SELECT disabled FROM users WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise AuthError(f"no user {name!r}")
            if row[0]:
                raise AuthError(f"user {name!r} is disabled")
            self._abandon(db, "token", name, by)
            token_id = self._new_id()
            token = f"rt_{token_id}_{secrets.token_urlsafe(32)}"
            expires = self._clock() + timedelta(days=days)
            self._journaled(db, "token_issued", SYSTEM,
                            {"user": name, "token_id": token_id,
                             "expires_at": expires.isoformat(),
                             "credential": credential_digest(_digest(token))}, by,
                            lambda db: db.execute(
                                "INSERT INTO tokens(token_hash, token_id, name, created_by, "
                                "created_at, expires_at) VALUES (?,?,?,?,?,?)",
                                (_digest(token), token_id, name, by,
                                 self._clock().isoformat(), expires.isoformat())))
        return token

    def token_session(self, token: str) -> Session | None:
        """The session a personal token stands for; None when the token is unknown,
        revoked or expired, or its user disabled."""
        if credential_kind(token) != "token":
            return None
        row = self._db().execute(
            "SELECT t.name, u.role, t.expires_at FROM tokens t JOIN users u ON u.name = t.name "
            "WHERE t.token_hash = ? AND t.revoked = 0 AND u.disabled = 0",
            (_digest(token),)).fetchone()
        if row is None:
            return None
        expires = datetime.fromisoformat(row[2])
        return Session(row[0], row[1], "", expires) if expires > self._clock() else None

    def bearer_known(self, secret: str) -> bool:
        """Whether a bearer secret is a live key or token (any table, any role)."""
        kind = credential_kind(secret)
        if kind == "key":
            return self.key_table(secret) is not None
        return kind == "token" and self.token_session(secret) is not None

    def revoke(self, key_id: str, by: str = "cli") -> Literal["key", "token"]:
        """Revoke an API key or a personal token by its id; returns which it was."""
        with self._writing() as db:
            key = db.execute("SELECT table_id, revoked FROM api_keys WHERE key_id = ?",
                             (key_id,)).fetchone()
            token = db.execute("SELECT name, revoked FROM tokens WHERE token_id = ?",
                               (key_id,)).fetchone()
            found = key or token
            if found is None:
                raise AuthError(f"no API key or personal token with id {key_id!r}")
            if found[1]:
                raise AuthError(f"{key_id} is already revoked")
            if key is not None:
                self._journaled(db, "api_key_revoked", key[0], {"key_id": key_id}, by,
                                lambda db: db.execute(
                                    "UPDATE api_keys SET revoked = 1 WHERE key_id = ?",
                                    (key_id,)))
                return "key"
            self._journaled(db, "token_revoked", SYSTEM, {"user": token[0], "token_id": key_id},
                            by, lambda db: db.execute(
                                "UPDATE tokens SET revoked = 1 WHERE token_id = ?", (key_id,)))
        return "token"

    def credentials(self) -> list[Credential]:
        """Every key and token ever issued (ids, never secrets), newest first."""
        rows = self._db().execute(
            "SELECT 'key', key_id, table_id, created_by, created_at, '', revoked FROM api_keys "
            "UNION ALL SELECT 'token', token_id, name, created_by, created_at, expires_at, "
            "revoked FROM tokens ORDER BY 5 DESC").fetchall()
        return [Credential(kind=r[0], id=r[1], belongs_to=r[2], created_by=r[3] or "",
                           created_at=r[4], expires_at=r[5], revoked=bool(r[6])) for r in rows]


__all__ = ["PERMISSIONS", "ROLES", "Auth", "AuthError", "Credential", "LoginLimits", "RateLimited",
           "Session", "credential_kind", "hash_password"]
