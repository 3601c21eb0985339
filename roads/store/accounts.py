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

Each change is journaled before its row is written, and the row written in one transaction
with a record of its event in the ``applied`` table: a row whose last event is not
recorded, and which is as it was before that event, is what a kill between the two leaves,
and is named as an interrupted write (:func:`interrupted`), which the next run of the
command completes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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


@dataclass
class Replay:
    """What the account events leave: the rows by table and id, and for each row the last
    event that changed it and the row as it was before that event (None: no row), which
    is what a write killed between that event and its row leaves (the events come first:
    :mod:`roads.auth`)."""

    rows: dict[str, dict[str, dict[str, Any]]]
    last: dict[tuple[str, str], tuple[Event, dict[str, Any] | None]]

    def change(self, table: str, ident: str, event: Event,
               row: dict[str, Any] | None) -> None:
        """Journal ``event`` as making the row ``ident`` of ``table`` ``row`` (None: gone)."""
        old = self.rows[table].get(ident)
        self.last[table, ident] = (event, None if old is None else dict(old))
        if row is None:
            self.rows[table].pop(ident, None)
        else:
            self.rows[table][ident] = row


def replay(events: Iterable[Event]) -> Replay:
    """The rows the account events leave (a key or token revoked as ``abandoned``: one an
    interrupted issue journaled but never stored, which no row may hold)."""
    done = Replay({t: {} for t in _ROWS}, {})
    users, tokens = done.rows["users"], done.rows["tokens"]
    for e in events:
        p = e.payload
        if e.kind == "user_added":
            done.change("users", p["user"], e, {"role": p["role"], "disabled": 0,
                                                 "credential": p.get("credential")})
        elif e.kind == "user_changed" and p.get("user") in users:
            row = dict(users[p["user"]])
            if p.get("change") == "disabled":
                row["disabled"] = 1
                for ident, token in list(tokens.items()):  # disabling revokes their tokens
                    if token["name"] == p["user"]:
                        done.change("tokens", ident, e, {**token, "revoked": 1})
            elif p.get("change") == "enabled":
                row["disabled"] = 0
            elif p.get("change") == "password":
                row["credential"] = p.get("credential")
            done.change("users", p["user"], e, row)
        elif e.kind == "api_key_issued":
            done.change("api_keys", p["key_id"], e, {"table_id": e.table_id, "revoked": 0,
                                                     "credential": p.get("credential")})
        elif e.kind == "token_issued":
            done.change("tokens", p["token_id"], e, {
                "name": p["user"], "expires_at": p["expires_at"], "revoked": 0,
                "credential": p.get("credential")})
        elif e.kind in ("api_key_revoked", "token_revoked"):
            table, key = (("api_keys", "key_id") if e.kind == "api_key_revoked" else
                          ("tokens", "token_id"))
            if p.get(key) in done.rows[table]:
                done.change(table, p[key], e, None if p.get("abandoned") else
                            {**done.rows[table][p[key]], "revoked": 1})
    return done


def expected(events: Iterable[Event]) -> dict[str, dict[str, dict[str, Any]]]:
    """The rows the account events leave, by table and id."""
    return replay(events).rows


#: How a write interrupted after its event is completed, by the event's kind.
_REPAIR = {"user_added": "run `roads users add` for the user again",
           "user_changed": "run the `roads users` command again",
           "api_key_issued": "the next `roads users key` for its table closes it",
           "token_issued": "the next `roads users token` for its user closes it",
           "api_key_revoked": "run `roads users revoke-key` again",
           "token_revoked": "run `roads users revoke-key` again"}


def _same(row: dict[str, Any] | None, other: dict[str, Any] | None) -> bool:
    """Whether a row as found is the row a replay gave (a credential the events did not
    record is not judged)."""
    if row is None or other is None:
        return row is other
    return all(row[c] == v for c, v in other.items() if c != "credential") and \
        other["credential"] in (None, row["credential"])


@dataclass(frozen=True)
class Applied:
    """The account events whose rows ``auth.sqlite`` records as written (its ``applied``
    table, written in the transaction that writes the row); events up to ``since`` were
    journaled before it was kept, and are not judged by it (a store from before)."""

    seqs: frozenset[int]
    since: int

    def pending(self, seq: int) -> bool:
        """Whether the row write of event ``seq`` is not recorded (it was killed)."""
        return seq > self.since and seq not in self.seqs


NONE_APPLIED = Applied(frozenset(), 2**62)


def interrupted(table: str, ident: str, found: dict[str, Any] | None, done: Replay,
                applied: Applied) -> str | None:
    """Why a row that is not what the journal made it is the state a write killed between
    its event and its row leaves — the row's last event not recorded as applied, and the
    row as it was before that event — else None."""
    last = done.last.get((table, ident))
    if last is None or not applied.pending(last[0].seq) or not _same(found, last[1]):
        return None
    event = last[0]
    # `applied` lives in auth.sqlite beside the row: an edit of both reads the same way
    return (f"left by a write interrupted between its journal event {event.seq} "
            f"({event.kind}) and this row, which is as it was before it "
            f"({_REPAIR.get(event.kind, 'run the command again')}; if no command was "
            "killed, the row and its applied record were edited)")


def disagreements(root: Path, events_of: Callable[[], Iterable[Event]]
                  ) -> list[tuple[str, str]]:
    """``(where, detail)`` for every account row that is not what the journal made it (a
    store without ``auth.sqlite`` has no accounts, and then the events must make none).
    The rows are read before the events (``events_of``): a login journals its event before
    it writes its session, so one made while this runs is not taken for a planted one."""
    path = root / FILE
    found: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in _ROWS}
    sessions: list[tuple[Any, ...]] = []
    applied = NONE_APPLIED
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
            applied = _applied(db)
        except sqlite3.DatabaseError as exc:
            return [(FILE, f"does not read as the account database: {exc}")]
        finally:
            db.close()
    events = list(events_of())
    done = replay(events)
    want = done.rows
    problems = _sessions(sessions, events)
    for table, (key, _, _) in _ROWS.items():
        mine, theirs = found[table], want[table]
        for ident in sorted(set(mine) | set(theirs), key=str):
            where = f"{FILE} {table} {key}={ident}"
            if ident in theirs and _same(mine.get(ident), theirs[ident]):
                continue
            why = interrupted(table, ident, mine.get(ident), done, applied)
            if why is not None:
                problems.append((where, why))
            elif ident not in theirs:
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


def _applied(db: sqlite3.Connection) -> Applied:
    """The ``applied`` table (none in a store from before it: nothing is judged by it)."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'applied'").fetchone() is None:
        return NONE_APPLIED
    seqs = [r[0] for r in db.execute("SELECT seq FROM applied")]
    return Applied(frozenset(s for s in seqs if s > 0),
                   -min((s for s in seqs if s <= 0), default=-(2**62)))


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


__all__ = ["FILE", "KINDS", "SESSION_HOURS", "Applied", "Replay", "credential_digest",
           "disagreements", "expected", "interrupted", "replay"]
