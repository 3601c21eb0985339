"""The accounts in ``auth.sqlite`` against the journal's account events.

Who may approve a correction, which table a key may deal into and whether a key or token
still works live in ``auth.sqlite``, beside the journal but outside its chain: one changed
byte there (a viewer's role set to ``supervisor``, a revoked key's flag cleared, a user
inserted) changes what the server lets people do. Every such row is made by an action the
journal records (``user_added``, ``user_changed``, ``api_key_issued`` / ``_revoked``,
``token_issued`` / ``_revoked``), so replaying those events gives what the rows must say;
``roads store verify`` names every row that says otherwise. The events also carry a digest
of each stored credential (:func:`credential_digest`: of a password's salt and scrypt hash,
of a key's or token's SHA-256), so a password hash copied from one user to another, or a
key's hash replaced by one whose secret the forger holds, is named too (events written
before the digests were journaled carry none, and those rows are checked without them).
A session row must be one a ``login`` event recorded (its digest of the row: the token's
SHA-256, user, CSRF token and expiry; never the token itself), so a planted or re-assigned
session is named; logins journaled before the digest are trusted for their session's
lifetime. The login limiter's counters are not replayed.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from roads.store.journal import Event

FILE = "auth.sqlite"
KINDS = ("user_added", "user_changed", "api_key_issued", "api_key_revoked", "token_issued",
         "token_revoked", "login", "logout")
#: How long a browser session lasts (the server's logins make them; verify trusts a session
#: row an undigested older login may have made for this long).
SESSION_HOURS = 8

#: table -> (its id column, the columns the journal decides, the credential's columns)
_ROWS = {"users": ("name", ("role", "disabled"), "salt, hash"),
         "api_keys": ("key_id", ("table_id", "revoked"), "key_hash"),
         "tokens": ("token_id", ("name", "expires_at", "revoked"), "token_hash")}


def credential_digest(*parts: object) -> str:
    """What the journal records of a stored credential: a SHA-256 of its stored form (a
    password's salt and scrypt hash; a key's or token's own SHA-256; a session row), from
    which neither the password nor the secret can be recovered (the salt is not journaled).
    Each part is length-prefixed, so no characters can move from one field to the next (a
    session of ``victor`` re-labelled ``vic``), and a part of the wrong type (a NULL in a
    tampered row) gives a digest that differs rather than an error."""
    digest = hashlib.sha256()
    for part in parts:
        data = (part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
                if isinstance(part, str) else repr(part).encode())
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def expected(events: Iterable[Event]) -> dict[str, dict[str, dict[str, Any]]]:
    """The rows the account events leave, by table and id."""
    rows: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in _ROWS}
    users, keys, tokens = rows["users"], rows["api_keys"], rows["tokens"]
    for e in events:
        p = e.payload
        if e.kind == "user_added":
            users[p["user"]] = {"role": p["role"], "disabled": 0,
                                "credential": p.get("credential")}
        elif e.kind == "user_changed" and p.get("user") in users:
            if p.get("change") == "disabled":
                users[p["user"]]["disabled"] = 1
                for token in tokens.values():  # disabling revokes the user's tokens
                    if token["name"] == p["user"]:
                        token["revoked"] = 1
            elif p.get("change") == "enabled":
                users[p["user"]]["disabled"] = 0
            elif p.get("change") == "password":
                users[p["user"]]["credential"] = p.get("credential")
        elif e.kind == "api_key_issued":
            keys[p["key_id"]] = {"table_id": e.table_id, "revoked": 0,
                                 "credential": p.get("credential")}
        elif e.kind == "api_key_revoked" and p.get("key_id") in keys:
            keys[p["key_id"]]["revoked"] = 1
        elif e.kind == "token_issued":
            tokens[p["token_id"]] = {"name": p["user"], "expires_at": p["expires_at"],
                                     "revoked": 0, "credential": p.get("credential")}
        elif e.kind == "token_revoked" and p.get("token_id") in tokens:
            tokens[p["token_id"]]["revoked"] = 1
    return rows


def disagreements(root: Path, events_of: Callable[[], Iterable[Event]]
                  ) -> list[tuple[str, str]]:
    """``(where, detail)`` for every account row that is not what the journal made it (a
    store without ``auth.sqlite`` has no accounts, and then the events must make none).
    The rows are read before the events (``events_of``): a login journals its event before
    it writes its session, so one made while this runs is not taken for a planted one."""
    path = root / FILE
    found: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in _ROWS}
    sessions: list[tuple[Any, ...]] = []
    if path.is_file():
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for table, (key, columns, secret) in _ROWS.items():
                for row in db.execute(f"SELECT {key}, {', '.join(columns)}, {secret} "
                                      f"FROM {table}"):
                    found[table][row[0]] = {
                        **dict(zip(columns, row[1:len(columns) + 1], strict=True)),
                        "credential": credential_digest(*row[len(columns) + 1:])}
            sessions = db.execute(
                "SELECT token_hash, name, csrf, expires_at FROM sessions").fetchall()
        except sqlite3.DatabaseError as exc:
            return [(FILE, f"does not read as the account database: {exc}")]
        finally:
            db.close()
    events = list(events_of())
    want = expected(events)
    problems = _sessions(sessions, events)
    for table, (key, _, _) in _ROWS.items():
        mine, theirs = found[table], want[table]
        for ident in sorted(set(mine) | set(theirs), key=str):
            where = f"{FILE} {table} {key}={ident}"
            if ident not in theirs:
                problems.append((where, "no journal event made this row"))
            elif ident not in mine:
                problems.append((where, "the journal made this row but it is not there"))
            else:
                changed = [f"{c} is {mine[ident][c]!r}, the journal says {v!r}"
                           for c, v in theirs[ident].items()
                           if c != "credential" and mine[ident][c] != v]
                if theirs[ident]["credential"] not in (None, mine[ident]["credential"]):
                    changed.append("its stored credential (password hash, key or token) is "
                                   "not the one the journal recorded")
                if changed:
                    problems.append((where, ", ".join(changed)))
    return problems


#: Changes to a user that end every session they have (``Auth`` deletes the rows).
_ENDS_SESSIONS = ("password", "disabled")


def _live_logins(events: list[Event]) -> set[str]:
    """The session digests of logins nothing has ended since: not a logout of that row, nor
    a password change or disabling of its user (which delete the user's sessions without a
    logout event each: a row put back after them would otherwise pass)."""
    live: dict[str, str] = {}  # session digest -> user
    for e in events:
        p = e.payload
        if e.kind == "login" and "credential" in p:
            live[p["credential"]] = str(p.get("user"))
        elif e.kind == "logout" and "credential" in p:
            live.pop(p["credential"], None)
        elif e.kind == "user_changed" and p.get("change") in _ENDS_SESSIONS:
            live = {d: u for d, u in live.items() if u != str(p.get("user"))}
    return set(live)


def _sessions(rows: list[tuple[Any, ...]], events: list[Event]) -> list[tuple[str, str]]:
    """Session rows no login event recorded, or that something journaled has ended since (a
    row put back after its logout, or after its user's password change or disabling); a row
    an older login made, without a digest, is trusted until it could have expired."""
    logins = [e for e in events if e.kind == "login"]
    recorded = _live_logins(events)
    undigested = [e.at for e in logins if "credential" not in e.payload]
    trusted_until = (datetime.fromisoformat(max(undigested)) + timedelta(hours=SESSION_HOURS)
                     if undigested else None)
    problems = []
    for token_hash, name, csrf, expires_at in rows:
        if credential_digest(token_hash, name, csrf, expires_at) in recorded:
            continue
        try:
            older = (trusted_until is not None
                     and datetime.fromisoformat(expires_at) <= trusted_until)
        except (TypeError, ValueError):
            older = False
        if not older:
            problems.append((f"{FILE} sessions name={name}",
                             "no login event recorded this session (or it was logged out, "
                             "or its user's password changed or disabled since)"))
    return problems


__all__ = ["FILE", "KINDS", "SESSION_HOURS", "credential_digest", "disagreements", "expected"]
