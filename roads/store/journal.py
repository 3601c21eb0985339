"""The live journal: an append-only, hash-chained event log in SQLite (WAL, synchronous FULL).

Every live action is one event: shoe opened, coup entered, coup voided or amended (operator,
reason, approver), shoe closed, shoe sealed; and every file the store publishes or removes
(seals, imports, engine runs, compactions, purges). Each event's hash covers its header
(sequence, table, shoe), the digest of its body (time, kind, actor, payload) and the previous
event's hash, so editing, inserting or deleting any event breaks the chain at that point
(:meth:`Journal.verify`). Because the body enters only by its digest, an export can show
another table's event as a *redacted* link (header and digests, no body) and the chain still
verifies offline.

Acknowledged means durable: :meth:`Journal.append` returns only after the transaction that
holds the event is committed with ``synchronous=FULL``. :class:`GroupCommitter` lets many
concurrent submitters share one commit (and one fsync) without giving that up.
"""

from __future__ import annotations

import hashlib
import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from roads.errors import InputError, JournalBusy
from roads.store import journal_queue
from roads.store.journal_queue import WritersQueue
from roads.thread_connections import close_thread_connection, keep_for_thread

GENESIS = "0" * 64
KINDS = ("shoe_opened", "coup_entered", "coup_voided", "coup_amended", "shoe_closed",
         "shoe_sealed", "data_purged", "data_exported", "table_closed", "correction_requested",
         "correction_rejected", "user_added", "user_changed", "api_key_issued", "login",
         "login_failed", "logout", "import_committed", "files_published", "store_compacted",
         "user_disabled", "user_enabled", "login_refused", "token_issued", "token_revoked",
         "api_key_revoked")
_KINDS = frozenset(KINDS)
#: Events that publish or remove stored files (the store's catalogue is their replay).
FILE_KINDS = ("shoe_sealed", "import_committed", "files_published", "store_compacted",
              "data_purged")
#: The ``table_id`` of events that concern no table (logins, user changes).
SYSTEM = "*"

#: No index on ``hash``: the sequence number is the key and the chain binds each hash to it
#: (a hash cannot repeat), while a unique index on 64 random hex digits put every appended
#: event on a page of its own, a third of what each shared commit wrote and fsynced (a
#: journal made before keeps its index; nothing looks events up by hash).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq       INTEGER PRIMARY KEY,
    at        TEXT NOT NULL,
    kind      TEXT NOT NULL,
    table_id  TEXT NOT NULL,
    shoe_id   TEXT,
    actor     TEXT,
    payload   TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_shoe ON events(table_id, shoe_id, seq);
CREATE INDEX IF NOT EXISTS events_kind ON events(table_id, kind, seq);
CREATE INDEX IF NOT EXISTS events_by_kind ON events(kind, seq);
CREATE INDEX IF NOT EXISTS events_actor ON events(actor, seq);
CREATE INDEX IF NOT EXISTS events_at ON events(at);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
"""


#: Page cache of each connection, KiB (SQLite's default is 2 MB).
CACHE_KIB = 8192
#: Page cache for a bulk commit, KiB: an import indexes ~12,000 shoes per million coups, and
#: with a small cache SQLite spills dirty pages to the WAL mid-transaction (a seventh of its
#: time). Raised for that transaction only (:func:`bulk_cache`).
BULK_CACHE_KIB = 65536

#: What a server process's SQLite connections may hold together, bytes. A server keeps a
#: connection per request thread (dozens per worker), and each one's page cache filled up to
#: CACHE_KIB as the journal grew: a 30-minute soak grew ~50 MB, in steps. Past this limit
#: SQLite reuses its least recently used pages instead of growing (20 threads that read a
#: 60 MB journal held 226 MB without it, 90 MB under 32 MB).
SERVER_HEAP_BYTES = 48 << 20


def limit_heap(limit: int) -> None:
    """Ask SQLite to keep this process's heap under ``limit`` bytes (``PRAGMA
    soft_heap_limit`` is process-wide and advisory: caches shrink, nothing fails)."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute(f"PRAGMA soft_heap_limit={int(limit)}")
    finally:
        db.close()


@contextmanager
def bulk_cache(db: sqlite3.Connection) -> Iterator[None]:
    """A large page cache on ``db`` for one bulk transaction, then back to the usual size
    (SQLite frees the pages above it)."""
    db.execute(f"PRAGMA cache_size=-{BULK_CACHE_KIB}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")


def thread_connection(local: threading.local, path: Path) -> sqlite3.Connection:
    """This thread's connection to a SQLite file in WAL mode with durable commits
    (``synchronous=FULL``): connections are cheap, sharing one across threads is not."""
    db: sqlite3.Connection | None = getattr(local, "db", None)
    if db is None:
        db = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA busy_timeout=30000")
        # A server has dozens of threads, each with its connections: a page cache as large as
        # a bulk commit wants (BULK_CACHE_KIB) on every one grew the server for hours.
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        keep_for_thread(local, db)
    return db


class JournalError(InputError):
    """An event the journal refuses (unknown kind, bad payload)."""


@dataclass(frozen=True, slots=True)
class Event:
    """One journaled action; ``hash`` covers every other field and the previous hash."""

    seq: int
    at: str
    kind: str
    table_id: str
    shoe_id: str | None
    actor: str | None
    payload: dict[str, Any]
    prev_hash: str
    hash: str

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON Lines record (the export and import format)."""
        return {"seq": self.seq, "at": self.at, "kind": self.kind, "table_id": self.table_id,
                "shoe_id": self.shoe_id, "actor": self.actor, "payload": self.payload,
                "prev_hash": self.prev_hash, "hash": self.hash}

    @property
    def body_sha256(self) -> str:
        return body_digest(self.at, self.kind, self.actor, self.payload)

    def redacted(self) -> dict[str, Any]:
        """The event as a link of the chain only: header and digests, no body (what an
        export shows of an event outside its slice)."""
        return {"seq": self.seq, "table_id": self.table_id, "shoe_id": self.shoe_id,
                "body_sha256": self.body_sha256, "prev_hash": self.prev_hash,
                "hash": self.hash, "redacted": True}


#: ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``, made once
#: (``dumps`` with options builds an encoder per call: a tenth of a coup's append).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical(data: Any) -> str:
    """Deterministic JSON: sorted keys, no spaces, UTF-8 kept."""
    return _CANONICAL.encode(data)


def body_digest(at: str, kind: str, actor: str | None, payload: dict[str, Any]) -> str:
    """SHA-256 of an event's body: its time, kind, actor and payload."""
    return canonical_body_digest(at, kind, actor, canonical(payload))


def _text(value: str | None) -> str:
    """A text or null as :func:`canonical` writes it (its string encoder, called directly:
    an append spells out five values, and the encoder's own dispatch was a fifth of it)."""
    return "null" if value is None else _string(value)


_string: Callable[[str], str] = json.encoder.encode_basestring


def canonical_body_digest(at: str, kind: str, actor: str | None, payload: str) -> str:
    """:func:`body_digest` of a payload already in canonical JSON: the body is spelled out
    around it, keys in sorted order, exactly as :func:`canonical` writes the whole body
    (an append encodes its payload once, for the digest and the row)."""
    body = f'{{"actor":{_text(actor)},"at":{_text(at)},"kind":{_text(kind)},"payload":{payload}}}'
    return hashlib.sha256(body.encode()).hexdigest()


def link_hash(prev_hash: str, seq: int, table_id: str, shoe_id: str | None,
              body_sha256: str) -> str:
    """The chain link: SHA-256 of the previous hash, the header and the body's digest
    (the header is ``canonical([seq, table_id, shoe_id, body_sha256])``, spelled out)."""
    header = f"[{int(seq)},{_text(table_id)},{_text(shoe_id)},{_text(body_sha256)}]"
    return hashlib.sha256(f"{prev_hash}\n{header}".encode()).hexdigest()


def event_hash(prev_hash: str, seq: int, at: str, kind: str, table_id: str,
               shoe_id: str | None, actor: str | None, payload: dict[str, Any]) -> str:
    return link_hash(prev_hash, seq, table_id, shoe_id, body_digest(at, kind, actor, payload))


@dataclass(frozen=True, slots=True)
class ChainReport:
    ok: bool
    events: int
    head: str
    first_bad_seq: int | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events an audit listing shows (any combination; nothing given means all):
    a table, a shoe, who acted, which kinds, days ``start``..``end`` (UTC, inclusive)."""

    table_id: str | None = None
    shoe_id: str | None = None
    actor: str | None = None
    kinds: tuple[str, ...] = ()
    start: date | None = None
    end: date | None = None

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition and its arguments; each part can use an index of its own."""
        parts, args = ["1=1"], []
        for column, value in (("table_id", self.table_id), ("shoe_id", self.shoe_id),
                              ("actor", self.actor)):
            if value is not None:
                parts.append(f"{column} = ?")
                args.append(value)
        if self.kinds:
            parts.append(f"kind IN ({','.join('?' * len(self.kinds))})")
            args += self.kinds
        if self.start is not None:  # times are ISO text in UTC: text order is time order
            parts.append("at >= ?")
            args.append(self.start.isoformat())
        if self.end is not None and self.end < date.max:  # nothing is after the last day
            parts.append("at < ?")
            args.append((self.end + timedelta(days=1)).isoformat())
        return " AND ".join(parts), args


_SELECT = "SELECT seq, at, kind, table_id, shoe_id, actor, payload, prev_hash, hash FROM events"


def _event(r: tuple[Any, ...]) -> Event:
    return Event(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], r[8])


#: Events inserted by one statement at most (9 values each, well under SQLite's limit).
_INSERT_ROWS = 256
_COLUMNS = "seq, at, kind, table_id, shoe_id, actor, payload, prev_hash, hash"


class Transaction:
    """Reads and appends inside one write-locked transaction (so checks cannot race).

    Appended events are inserted together, by one statement, when the transaction next
    reads (:attr:`db` flushes them first, so every read sees them) or commits: a shared
    commit of many coups runs one INSERT instead of one per coup, and the writer gives the
    GIL away once instead of at every statement."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._rows: list[tuple[Any, ...]] = []  # appended, not yet inserted
        self.appended = 0  # events appended in this transaction
        self.inserted = 0  # of which inserted
        row = db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        self.seq: int = row[0] if row else 0
        self.prev: str = row[1] if row else GENESIS

    @property
    def db(self) -> sqlite3.Connection:
        """The transaction's connection, every appended event inserted."""
        self.flush()
        return self._db

    def flush(self) -> None:
        """Insert the appended events not inserted yet."""
        rows, self._rows = self._rows, []
        for start in range(0, len(rows), _INSERT_ROWS):
            part = rows[start:start + _INSERT_ROWS]
            self._db.execute(f"INSERT INTO events({_COLUMNS}) VALUES "
                             + ",".join(["(?,?,?,?,?,?,?,?,?)"] * len(part)),
                             [value for row in part for value in row])
        self.inserted += len(rows)

    def mark(self) -> tuple[int, int, str]:
        """Where the transaction is: events appended, head sequence and hash."""
        return self.appended, self.seq, self.prev

    def forget(self, mark: tuple[int, int, str]) -> bool:
        """Drop the events appended since ``mark``; False (nothing dropped) when some of
        them were inserted already."""
        appended, seq, prev = mark
        if self.inserted > appended:
            return False
        del self._rows[appended - self.inserted:]
        self.appended, self.seq, self.prev = appended, seq, prev
        return True

    def rolled_back(self, mark: tuple[int, int, str]) -> None:
        """The connection was rolled back to a savepoint taken at ``mark`` (every event
        before it inserted): forget what came after it."""
        self._rows.clear()
        self.appended, self.seq, self.prev = mark
        self.inserted = self.appended

    def last(self, table_id: str, kinds: Sequence[str],
             shoe_id: str | None = None) -> Event | None:
        """The most recent event of one of ``kinds`` for a table (and shoe: looked up by
        the shoe's own events, ``+kind`` keeping SQLite off the index of every such event
        of the table, which a year of seals makes thousands long)."""
        marks = ",".join("?" * len(kinds))
        sql = f"{_SELECT} WHERE table_id = ? AND kind IN ({marks})"
        args: list[Any] = [table_id, *kinds]
        if shoe_id is not None:
            sql = f"{_SELECT} WHERE table_id = ? AND shoe_id = ? AND +kind IN ({marks})"
            args = [table_id, shoe_id, *kinds]
        r = self.db.execute(sql + " ORDER BY seq DESC LIMIT 1", args).fetchone()
        return None if r is None else _event(r)

    def get(self, seq: int) -> Event | None:
        """The event with sequence number ``seq``."""
        r = self.db.execute(f"{_SELECT} WHERE seq = ?", (seq,)).fetchone()
        return None if r is None else _event(r)

    def decided(self, request_seq: int) -> Event | None:
        """The approval or rejection that answered correction request ``request_seq``."""
        r = self.db.execute(
            f"{_SELECT} WHERE kind IN ('coup_voided', 'coup_amended', 'correction_rejected') "
            "AND json_extract(payload, '$.request') = ? LIMIT 1", (request_seq,)).fetchone()
        return None if r is None else _event(r)

    def coup_event(self, table_id: str, shoe_id: str, kind: str, coup: int) -> bool:
        """Whether an event of ``kind`` names coup ``coup`` of the shoe (``+kind``: see
        :meth:`exists`)."""
        return self.db.execute(
            "SELECT 1 FROM events WHERE table_id = ? AND shoe_id = ? AND +kind = ? "
            "AND json_extract(payload, '$.coup') = ? LIMIT 1",
            (table_id, shoe_id, kind, coup)).fetchone() is not None

    def coup_entered(self, table_id: str, shoe_id: str, coup: int) -> Event | None:
        r = self.db.execute(
            f"{_SELECT} WHERE table_id = ? AND shoe_id = ? AND +kind = 'coup_entered' "
            "AND json_extract(payload, '$.coup') = ? LIMIT 1", (table_id, shoe_id, coup)
        ).fetchone()
        return None if r is None else _event(r)

    def since(self, seq: int, kinds: Sequence[str]) -> list[Event]:
        """Events of ``kinds`` after sequence ``seq``, in order (what a cache kept beside
        the journal has not seen yet)."""
        rows = self.db.execute(f"{_SELECT} WHERE seq > ? AND kind IN "
                               f"({','.join('?' * len(kinds))}) ORDER BY seq",
                               (seq, *kinds)).fetchall()
        return [_event(r) for r in rows]

    def exists(self, table_id: str, shoe_id: str, kind: str) -> bool:
        """Whether the shoe has an event of ``kind``, found among the shoe's own events:
        ``+kind`` keeps SQLite off the index of every such event of the table (a coup not
        stored, looked up on a table of 3,000 shoes: 586 ms that way, 0.13 ms this)."""
        return self.db.execute(
            "SELECT 1 FROM events WHERE table_id = ? AND shoe_id = ? AND +kind = ? LIMIT 1",
            (table_id, shoe_id, kind)).fetchone() is not None

    def append(self, kind: str, table_id: str, shoe_id: str | None, payload: dict[str, Any],
               actor: str | None, now: datetime | None = None) -> Event:
        """Append an event timed ``now`` (UTC; the clock when not given)."""
        if kind not in _KINDS:
            raise JournalError(f"unknown journal event kind {kind!r}")
        if not table_id:
            raise JournalError("a journal event needs a table_id")
        self.seq += 1
        at = now_utc() if now is None else now.isoformat(timespec="microseconds")
        text = canonical(payload)
        digest = link_hash(self.prev, self.seq, table_id, shoe_id,
                           canonical_body_digest(at, kind, actor, text))
        self._rows.append((self.seq, at, kind, table_id, shoe_id, actor, text, self.prev,
                           digest))
        self.appended += 1
        event = Event(self.seq, at, kind, table_id, shoe_id, actor, payload, self.prev, digest)
        self.prev = digest
        return event


Action = Callable[[Transaction], Event]


class _Pending:
    """An action waiting for the writer, and how its submitter hears the outcome: a
    :class:`Future` (:meth:`GroupCommitter.submit`) or, lighter, a lock held from
    submission until the writer settles it (:meth:`GroupCommitter.run`: one lock a coup
    instead of a future's condition, its waiter lock and ``notify_all``; the writer
    spent a sixth of its time holding the GIL in ``set_result``)."""

    __slots__ = ("_done", "action", "future", "outcome", "queued")

    def __init__(self, action: Action, future: Future[Event] | None = None) -> None:
        self.action = action
        self.future = future
        self.queued = time.monotonic()  # (a submitter waits for the queue from here)
        self.outcome: Event | BaseException | None = None
        self._done: threading.Lock | None = None
        if future is None:
            self._done = threading.Lock()
            self._done.acquire()

    def settle(self, outcome: Event | BaseException) -> None:
        """Hand the outcome to the submitter (only ever after the commit, or its failure)."""
        if self.future is not None:
            if isinstance(outcome, BaseException):
                self.future.set_exception(outcome)
            else:
                self.future.set_result(outcome)
            return
        self.outcome = outcome
        assert self._done is not None
        self._done.release()

    def wait(self) -> Event:
        """Block until settled; the durable event, or the error raised."""
        assert self._done is not None
        self._done.acquire()
        outcome, self.outcome = self.outcome, None
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        return outcome


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Journal:
    """One SQLite journal file; safe to open from many threads and processes."""

    def __init__(self, path: Path, queue_wait: float | None = None) -> None:
        self.path = path
        #: How long a writer waits for the writers' queue, seconds (then JournalBusy).
        self.queue_wait = journal_queue.QUEUE_WAIT_SECONDS if queue_wait is None else queue_wait
        path.parent.mkdir(parents=True, exist_ok=True)
        self._queue = WritersQueue(str(path))
        self._local = threading.local()
        self._read_local = threading.local()
        with self._connection() as db:
            db.executescript(_SCHEMA)

    def _db(self) -> sqlite3.Connection:
        return thread_connection(self._local, self.path)

    def reader(self) -> sqlite3.Connection:
        """This thread's connection for read transactions (snapshots), apart from the one
        that writes, so a read can begin inside a thread that is writing."""
        return thread_connection(self._read_local, self.path)

    def connection(self) -> sqlite3.Connection:
        """This thread's writing connection (for derived tables kept beside the events)."""
        return self._db()

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        yield self._db()

    def close(self) -> None:
        for local in (self._local, self._read_local):
            close_thread_connection(local)
        self._queue.close()

    # -- writing ----------------------------------------------------------------------------
    @contextmanager
    def transaction(self, wait: float | None = None) -> Iterator[Transaction]:
        """An immediate (write-locked) transaction; durable when the block exits cleanly.

        Writers queue on a lock of a file beside the journal before they ask SQLite for its
        write lock (:mod:`roads.store.journal_queue`): the kernel wakes the next writer the
        moment the lock is free. Left to SQLite, a writer that finds the database locked
        sleeps and tries again, up to 100 ms a try: two server workers committing coups then
        spent most of their time asleep (150 against 470 coups/s for one worker alone, side
        by side). A writer waits ``wait`` seconds at most (default :attr:`queue_wait`), then
        raises :class:`JournalBusy`. The lock goes with its process, so a killed writer
        never leaves it held; SQLite's own lock still decides, so a writer that does not
        queue stays correct."""
        self._queue.take(self.queue_wait if wait is None else wait)
        try:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                tx = Transaction(db)
                yield tx
                tx.flush()
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        finally:
            self._queue.give_back()

    def append(self, kind: str, table_id: str, shoe_id: str | None = None,
               payload: dict[str, Any] | None = None, actor: str | None = None, *,
               wait: float | None = None) -> Event:
        """Append one event; returns once it is durable (``wait``: as in :meth:`transaction`)."""
        with self.transaction(wait) as tx:
            return tx.append(kind, table_id, shoe_id, payload or {}, actor)

    def run(self, action: Action) -> Event:
        """Run a check-then-append action in its own transaction (durable on return)."""
        with self.transaction() as tx:
            return action(tx)

    # -- reading ----------------------------------------------------------------------------
    def of_kinds(self, kinds: Sequence[str], since: int = 0) -> list[Event]:
        """Events of the given kinds in order (an indexed query)."""
        rows = self._db().execute(
            f"{_SELECT} WHERE kind IN ({','.join('?' * len(kinds))}) AND seq > ? ORDER BY seq",
            (*kinds, since)).fetchall()
        return [_event(r) for r in rows]

    def count_after(self, kinds: Sequence[str], since: int) -> int:
        """How many events of ``kinds`` come after ``since`` (indexed: kind, seq)."""
        return sum(self._db().execute(
            "SELECT count(*) FROM events WHERE kind = ? AND seq > ?", (kind, since)
        ).fetchone()[0] for kind in kinds)

    def stream(self, since: int = 0, until: int | None = None, batch: int = 10_000
               ) -> Iterator[Event]:
        """Events after ``since`` (up to ``until``) in order, fetched ``batch`` at a time from
        one read snapshot: memory stays flat whatever the journal's length."""
        db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            db.execute("BEGIN")
            cursor = db.execute(f"{_SELECT} WHERE seq > ? AND seq <= ? ORDER BY seq",
                                (since, until if until is not None else 2**62))
            while rows := cursor.fetchmany(batch):
                yield from (_event(r) for r in rows)
            db.execute("COMMIT")
        finally:
            db.close()

    def keys(self, until: int | None = None) -> Iterator[tuple[int, str, str | None, str]]:
        """``(seq, table_id, shoe_id, kind)`` of every event up to ``until``, streamed (no
        payloads: a cheap first pass over a long journal)."""
        db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            cursor = db.execute("SELECT seq, table_id, shoe_id, kind FROM events WHERE seq <= ? "
                                "ORDER BY seq", (until if until is not None else 2**62,))
            while rows := cursor.fetchmany(50_000):
                yield from rows
        finally:
            db.close()

    def at(self, seq: int) -> Event | None:
        r = self._db().execute(f"{_SELECT} WHERE seq = ?", (seq,)).fetchone()
        return None if r is None else _event(r)

    def events(self, table_id: str | None = None, shoe_id: str | None = None,
               since: int = 0) -> list[Event]:
        """Events in order, optionally for one table or shoe, after sequence ``since``."""
        sql = f"{_SELECT} WHERE seq > ?"
        args: list[Any] = [since]
        if table_id is not None:
            sql += " AND table_id = ?"
            args.append(table_id)
        if shoe_id is not None:
            sql += " AND shoe_id = ?"
            args.append(shoe_id)
        rows = self._db().execute(sql + " ORDER BY seq", args).fetchall()
        return [_event(r) for r in rows]

    def event_page(self, which: EventFilter, offset: int = 0,
                   limit: int = 50) -> tuple[list[Event], int]:
        """One page of the matching events, newest first, and how many match: two indexed
        queries in one read snapshot (the page and its total agree), never the whole
        journal in memory, whatever its length."""
        clause, args = which.where()
        db = self.reader()
        db.execute("BEGIN")
        try:
            total = int(db.execute(f"SELECT count(*) FROM events WHERE {clause}",
                                   args).fetchone()[0])
            rows = db.execute(f"{_SELECT} WHERE {clause} ORDER BY seq DESC LIMIT ? OFFSET ?",
                              [*args, limit, offset]).fetchall()
        finally:
            db.execute("COMMIT")
        return [_event(r) for r in rows], total

    def actors(self) -> list[str]:
        """Everyone the journal names as having acted (an index scan)."""
        rows = self.reader().execute(
            "SELECT DISTINCT actor FROM events WHERE actor IS NOT NULL ORDER BY actor")
        return [r[0] for r in rows]

    def table_head(self, table_id: str) -> int:
        """Sequence number of the newest event of one table (0 if none): a cheap change probe."""
        row = self._db().execute("SELECT max(seq) FROM events WHERE table_id = ?",
                                 (table_id,)).fetchone()
        return int(row[0] or 0)

    def last(self, table_id: str, kinds: Sequence[str]) -> Event | None:
        """The newest event of one of ``kinds`` at a table."""
        marks = ",".join("?" * len(kinds))
        r = self._db().execute(f"{_SELECT} WHERE table_id = ? AND kind IN ({marks}) "
                               "ORDER BY seq DESC LIMIT 1", (table_id, *kinds)).fetchone()
        return None if r is None else _event(r)

    def tables_since(self, seq: int) -> set[str]:
        """Tables with an event after sequence ``seq`` (what changed since a screen drew)."""
        rows = self._db().execute("SELECT DISTINCT table_id FROM events WHERE seq > ?",
                                  (seq,)).fetchall()
        return {r[0] for r in rows}

    def count(self, table_id: str, kind: str) -> int:
        row = self._db().execute("SELECT count(*) FROM events WHERE table_id = ? AND kind = ?",
                                 (table_id, kind)).fetchone()
        return int(row[0])

    def tables(self) -> list[str]:
        """Every table that has an event (the system pseudo-table excluded)."""
        rows = self._db().execute("SELECT DISTINCT table_id FROM events WHERE table_id != ?",
                                  (SYSTEM,)).fetchall()
        return sorted(r[0] for r in rows)

    def head(self) -> tuple[int, str]:
        """Sequence number and hash of the newest event (0 and the genesis hash if none)."""
        row = self._db().execute(
            "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        return (row[0], row[1]) if row else (0, GENESIS)

    def verify(self) -> ChainReport:
        """Recompute the chain; the first event whose hash or link does not hold is named."""
        return verify_events(self.events())


@dataclass(frozen=True, slots=True)
class Link:
    """An event as the chain sees it: a full event, or a redacted one (digest of its body)."""

    seq: int
    table_id: str
    shoe_id: str | None
    body_sha256: str
    prev_hash: str
    hash: str

    @classmethod
    def of(cls, event: Event) -> Link:
        return cls(event.seq, event.table_id, event.shoe_id, event.body_sha256,
                   event.prev_hash, event.hash)


def verify_events(events: Sequence[Event | Link], start_prev: str = GENESIS,
                  start_seq: int = 1) -> ChainReport:
    """Check a run of events (full or redacted): consecutive sequence numbers, links and
    hashes. A full event's body digest is recomputed from its content."""
    prev = start_prev
    expected_seq = start_seq
    for e in events:
        if e.seq != expected_seq:
            return ChainReport(False, len(events), prev, e.seq,
                               f"event {expected_seq} is missing (found {e.seq} next)")
        if e.prev_hash != prev:
            return ChainReport(False, len(events), prev, e.seq,
                               f"event {e.seq} does not link to the event before it")
        digest = link_hash(e.prev_hash, e.seq, e.table_id, e.shoe_id, e.body_sha256)
        if digest != e.hash:
            return ChainReport(False, len(events), prev, e.seq,
                               f"event {e.seq} was altered (its hash does not match its content)")
        prev = e.hash
        expected_seq += 1
    return ChainReport(True, len(events), prev)


#: How many times, at most, the writer hands the GIL over before a commit while the queue
#: is still growing, and for how long at most (:meth:`GroupCommitter._gather`).
GATHER = 8
GATHER_SECONDS = 0.0005


class GroupCommitter:
    """Many submitters, one writer thread: each commit carries every event waiting for it.

    ``submit`` returns a future that resolves to the durable :class:`Event` after the commit
    that holds it (or to the error that aborted that commit).
    """

    def __init__(self, journal: Journal, max_batch: int = 256) -> None:
        self.journal = journal
        self.max_batch = max_batch
        self.commits = 0  # transactions committed (each one fsync of the WAL)
        self.actions = 0  # actions they carried
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="journal-writer", daemon=True)
        self._thread.start()

    def submit(self, action: Action) -> Future[Event]:
        """Queue a check-then-append action; it runs inside the next shared transaction."""
        future: Future[Event] = Future()
        self._queue.put(_Pending(action, future))
        return future

    def run(self, action: Action) -> Event:
        """:meth:`submit` and wait: the durable event, or the error that refused or aborted
        the action (what a request thread does, without a future)."""
        item = _Pending(action)
        self._queue.put(item)
        return item.wait()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            self._gather()
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)
                    break
                batch.append(item)
            self._settle(batch)

    def _gather(self) -> None:
        """Let the submitters that are about to queue an action queue it before the commit
        starts: the writer hands the GIL over (``sleep(0)``) while the queue keeps growing,
        at most :data:`GATHER` times and for :data:`GATHER_SECONDS` at most. The threads a
        commit just answered are then in the next commit rather than in the one after it:
        fewer, larger commits (BEGIN, INSERT, COMMIT and its fsync shared by more actions).
        A lone submitter costs one hand-over; on a machine short of CPU, where one
        hand-over can take a scheduler's slice, the time bound stops it after one."""
        size, start = -1, time.perf_counter()
        for _ in range(GATHER):
            queued = self._queue.qsize()
            if queued == size or time.perf_counter() - start > GATHER_SECONDS:
                return
            size = queued
            time.sleep(0)

    def _settle(self, batch: list[_Pending]) -> None:
        """Commit a batch and answer its submitters. A batch that fails on something other
        than a refusal (a seal's catalogue insert, a full disk) is rolled back whole; its
        actions are then run one by one, so one failing action (a seal, say) cannot fail
        the coups of other tables that happened to share its commit."""
        try:
            try:
                results = self._commit(batch, savepoints=False)
            except _Inserted:  # a refused action's events were inserted: undo by SQL
                results = self._commit(batch, savepoints=True)
        except JournalBusy as exc:  # (one by one, each would wait as long again)
            for p in batch:
                p.settle(exc)
            return
        except Exception as exc:
            if len(batch) > 1:
                for p in batch:
                    self._settle([p])
            else:
                batch[0].settle(exc)
            return
        except BaseException as exc:  # (interrupted: handed to every waiting submitter)
            for p in batch:
                p.settle(exc)
            return
        self.commits += 1
        self.actions += len(batch)
        for p, outcome in results:  # only now, after COMMIT: acknowledged = durable
            p.settle(outcome)

    def _commit(self, batch: list[_Pending], savepoints: bool
                ) -> list[tuple[_Pending, Event | InputError]]:
        """Run the batch's actions in one transaction and commit it. A refused action
        (:class:`InputError`) takes back only what it appended: its events are dropped
        before they are inserted, or — with ``savepoints``, the way a batch is run again
        when one was inserted already — rolled back to a savepoint taken before it."""
        results: list[tuple[_Pending, Event | InputError]] = []
        # The writers' queue is waited for from the moment the oldest action was queued:
        # behind a hung writer, no submitter waits much longer than the journal's bound.
        waited = time.monotonic() - min(p.queued for p in batch)
        with self.journal.transaction(self.journal.queue_wait - waited) as tx:
            for p in batch:
                mark = tx.mark()
                if savepoints:
                    tx.db.execute("SAVEPOINT action")  # (every event before it inserted)
                try:
                    results.append((p, p.action(tx)))
                except InputError as refused:  # this action only: the rest go on
                    if savepoints:
                        tx.rolled_back(mark)
                        tx.db.execute("ROLLBACK TO action")
                    elif not tx.forget(mark):
                        raise _Inserted from refused
                    results.append((p, refused))
                if savepoints:
                    tx.db.execute("RELEASE action")
        return results

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


class _Inserted(Exception):
    """A refused action's events were inserted already (it read after appending): the
    batch runs again with a savepoint around each action."""
