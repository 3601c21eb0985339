"""The login limiter: slows a password guesser without letting anyone lock staff out.

- Failures are counted per (user name, address): after a few, each further attempt of that
  pair must wait a delay that doubles with every failure (up to a cap). Another address is
  not affected, so a guesser at one terminal cannot make a dealer's right password fail at
  hers. Attempts refused while waiting are not failures: they do not extend the delay.
- Each address also has a budget of failures per window over all user names, so one
  machine cannot spray guesses across the staff list.
- Every refused attempt (wrong password, unknown or disabled user, rate limited) is counted
  in a fixed window and journaled as one ``login_refused`` event per window with the counts
  by source, so a flood cannot fill the journal and no attempt goes unrecorded.

State lives in ``logins.sqlite`` beside the journal (shared by every server process, kept
across restarts). It holds counters, not records — the record is the journal event — so it
is written without an fsync per attempt (WAL, ``synchronous=NORMAL``): a flood costs the
disk nothing the tables' own commits wait for. A power cut (not a crash) may lose the counts
of the last moments before their window was journaled.

Every write of ``logins.sqlite`` waits for its write lock under a deadline (the journal's
``queue_wait``, one for a whole login: the failure, the refusal and the flush that
journals it), then :class:`~roads.errors.JournalBusy` (HTTP 503 with Retry-After), as the
accounts' writes do; SQLite's 30 s busy timeout answered them "database is locked", a 500.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from roads.errors import RETRY_AFTER_SECONDS, InputError, JournalBusy
from roads.store.journal import SYSTEM, Journal
from roads.thread_connections import close_thread_connection, keep_for_thread

SCHEMA = """
CREATE TABLE IF NOT EXISTS failures (name TEXT NOT NULL, address TEXT NOT NULL, at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS failures_pair ON failures(name, address, at);
CREATE INDEX IF NOT EXISTS failures_address ON failures(address, at);
CREATE TABLE IF NOT EXISTS refusals (
    window INTEGER NOT NULL, name TEXT NOT NULL, address TEXT NOT NULL, reason TEXT NOT NULL,
    count INTEGER NOT NULL, journaled INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (window, name, address, reason));
"""
#: Sources listed by name in one ``login_refused`` event; the rest are summed.
LISTED_SOURCES = 50
#: A typed user name is recorded at most this long (it is attacker-chosen text).
NAME_CHARS = 64
#: SQLite's busy timeout for reads, milliseconds (a write waits for its deadline instead).
READ_BUSY_MS = 30000


class AuthError(InputError):
    """Refused: unknown user, wrong password, too many failures, missing permission."""


class RateLimited(AuthError):
    """Too many failed logins from this address (for this user, or in all); retry later."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class LoginLimits:
    """The limiter's numbers (defaults are in ``docs/security.md``)."""

    free_failures: int = 3
    first_delay: timedelta = timedelta(seconds=1)
    max_delay: timedelta = timedelta(minutes=15)
    address_budget: int = 30
    window: timedelta = timedelta(minutes=15)
    journal_window: timedelta = timedelta(minutes=1)

    def delay(self, failures: int) -> timedelta:
        """How long after its last failure a (user, address) pair must wait."""
        if failures < self.free_failures:
            return timedelta(0)
        doublings = min(failures - self.free_failures, 30)
        delay: timedelta = self.first_delay * (1 << doublings)
        return min(delay, self.max_delay)


def recorded_name(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[:NAME_CHARS] + "…"


class LoginGuard:
    """Counts failures and refusals in ``logins.sqlite`` and journals them in aggregate."""

    def __init__(self, root: Path, journal: Journal, limits: LoginLimits,
                 clock: Callable[[], datetime]) -> None:
        self.path = root / "logins.sqlite"
        self.journal = journal
        self.limits = limits
        self._clock = clock
        self._local = threading.local()
        self._db().executescript(SCHEMA)

    def _db(self) -> sqlite3.Connection:
        """This thread's connection (WAL; commits reach the OS, not the platter)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, isolation_level=None,
                                 timeout=READ_BUSY_MS / 1000, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(f"PRAGMA busy_timeout={READ_BUSY_MS}")
            keep_for_thread(self._local, db)
        return db

    def deadline(self) -> float:
        """When a login's waits for locks end (:func:`time.monotonic`): the journal's
        ``queue_wait`` from now."""
        return time.monotonic() + self.journal.queue_wait

    def close(self) -> None:
        """Close this thread's connection to ``logins.sqlite``."""
        close_thread_connection(self._local)

    @contextmanager
    def _transaction(self, deadline: float | None = None) -> Iterator[sqlite3.Connection]:
        """``logins.sqlite``'s write lock (one process at a time; the others wait their
        turn) by ``deadline`` (default :meth:`deadline`), else :class:`JournalBusy`."""
        db = self._db()
        write_lock_within(db, self.deadline() if deadline is None else deadline, self._busy,
                          READ_BUSY_MS)
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _busy(self) -> JournalBusy:
        return JournalBusy(f"the login limiter is busy: a login ahead of this one has not "
                           f"finished ({self.path}); try again shortly", RETRY_AFTER_SECONDS)

    def check(self, name: str, address: str) -> None:
        """Raise :class:`RateLimited` when this attempt must not be tried yet."""
        now = self._clock()
        since = (now - self.limits.window).isoformat()
        db = self._db()
        (spent,) = db.execute("SELECT count(*) FROM failures WHERE address = ? AND at > ?",
                              (address, since)).fetchone()
        if spent >= self.limits.address_budget:
            (oldest,) = db.execute("SELECT min(at) FROM failures WHERE address = ? AND at > ?",
                                   (address, since)).fetchone()
            wait = datetime.fromisoformat(oldest) + self.limits.window - now
            raise RateLimited("too many failed logins from this address; try again in "
                              f"{_words(wait)}", _seconds(wait))
        count, last = db.execute(
            "SELECT count(*), max(at) FROM failures WHERE name = ? AND address = ? AND at > ?",
            (name, address, since)).fetchone()
        if count and count >= self.limits.free_failures:
            wait = datetime.fromisoformat(last) + self.limits.delay(count) - now
            if wait > timedelta(0):
                raise RateLimited(f"too many failed logins; try again in {_words(wait)}",
                                  _seconds(wait))

    def failed(self, name: str, address: str, reason: str,
               deadline: float | None = None) -> None:
        """A wrong password (or unknown or disabled user): a failure that grows the pair's
        delay and spends the address's budget, and a refusal to journal."""
        with self._transaction(deadline) as db:
            db.execute("INSERT INTO failures VALUES (?,?,?)",
                       (name, address, self._clock().isoformat()))
            self._count(db, name, address, reason)

    def refused(self, name: str, address: str, reason: str,
                deadline: float | None = None) -> None:
        """An attempt refused without trying the password: journaled, not a failure."""
        with self._transaction(deadline) as db:
            self._count(db, name, address, reason)

    def succeeded(self, name: str, address: str, deadline: float | None = None) -> None:
        with self._transaction(deadline) as db:
            db.execute("DELETE FROM failures WHERE name = ? AND address = ?",
                       (name, address))

    def _count(self, db: sqlite3.Connection, name: str, address: str, reason: str) -> None:
        seconds = int(self.limits.journal_window.total_seconds())
        window = int(self._clock().timestamp()) // seconds * seconds
        db.execute(
            "INSERT INTO refusals(window, name, address, reason, count) VALUES (?,?,?,?,1) "
            "ON CONFLICT(window, name, address, reason) DO UPDATE SET count = count + 1",
            (window, name, address, reason))

    def flush(self, force: bool = False, deadline: float | None = None) -> int:
        """Journal the refusals of every window that has ended (every window when
        ``force``, e.g. at shutdown): one event per window. Returns the events written.
        The write lock and the journal's queue are waited for by one ``deadline``."""
        deadline = self.deadline() if deadline is None else deadline
        seconds = int(self.limits.journal_window.total_seconds())
        now = self._clock()
        ended = math.inf if force else int(now.timestamp()) - seconds
        db = self._db()
        if db.execute("SELECT 1 FROM refusals WHERE window <= ? AND count > journaled LIMIT 1",
                      (ended,)).fetchone() is None:
            return 0
        written = 0
        # one process claims a window; the others see it done
        with self._transaction(deadline) as db:
            rows = db.execute(
                "SELECT window, name, address, reason, count - journaled FROM refusals "
                "WHERE window <= ? AND count > journaled ORDER BY window, count - journaled "
                "DESC, name, address", (ended,)).fetchall()
            by_window: dict[int, list[tuple[str, str, str, int]]] = {}
            for window, name, address, reason, count in rows:
                by_window.setdefault(window, []).append((name, address, reason, count))
            for window, sources in by_window.items():
                self.journal.append("login_refused", SYSTEM, None, {
                    "window_start": datetime.fromtimestamp(window, UTC).isoformat(),
                    "window_seconds": seconds,
                    "attempts": sum(s[3] for s in sources),
                    "sources": [{"user": n, "address": a, "reason": r, "attempts": c}
                                for n, a, r, c in sources[:LISTED_SOURCES]],
                    "more_sources": max(0, len(sources) - LISTED_SOURCES)}, None,
                    wait=max(deadline - time.monotonic(), 0.0))
                written += 1
            db.execute("UPDATE refusals SET journaled = count WHERE window <= ?", (ended,))
            keep = int((now - self.limits.window).timestamp())
            db.execute("DELETE FROM refusals WHERE window < ? AND count = journaled", (keep,))
            db.execute("DELETE FROM failures WHERE at <= ?",
                       ((now - self.limits.window).isoformat(),))
        return written


def write_lock_within(db: sqlite3.Connection, deadline: float, busy: Callable[[], JournalBusy],
                      usual_ms: int) -> None:
    """``BEGIN IMMEDIATE`` on ``db`` by ``deadline`` (:func:`time.monotonic`; SQLite's busy
    timeout set to what is left of it), else ``busy()`` raised; the busy timeout is then
    ``usual_ms`` again (the connection's reads keep theirs)."""
    db.execute(f"PRAGMA busy_timeout={max(int((deadline - time.monotonic()) * 1000), 0)}")
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
            raise
        raise busy() from None
    finally:
        db.execute(f"PRAGMA busy_timeout={usual_ms}")


def _seconds(wait: timedelta) -> int:
    return max(1, math.ceil(wait.total_seconds()))


def _words(wait: timedelta) -> str:
    seconds = _seconds(wait)
    return f"{seconds} s" if seconds < 120 else f"{math.ceil(seconds / 60)} min"
