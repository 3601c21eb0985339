"""A thread's SQLite connections close when the thread ends (issue 18's soak): a server's
request threads come and go (the thread pool lets one go after 10 s idle), and each one's
connections to the journal, ``auth.sqlite``, ``logins.sqlite`` and the screens' registry
used to stay open, page cache and file descriptors included, until a full collection."""

from __future__ import annotations

import gc
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dashboard.push import ScreenRegistry
from roads.auth import Auth
from roads.store import Store

#: Threads started one after another, each making its connections and ending.
THREADS = 12


@pytest.fixture
def no_collections() -> Iterator[None]:
    """No collection while the test runs: what it shows is freed without one."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _closed(db: sqlite3.Connection) -> bool:
    try:
        db.total_changes  # noqa: B018 (an attribute read: refused once closed)
    except sqlite3.ProgrammingError:
        return True
    return False


def _in_threads(connect: Callable[[], sqlite3.Connection]) -> list[sqlite3.Connection]:
    """Each of THREADS threads, one after another, makes its connection (and uses it)."""
    made: list[sqlite3.Connection] = []

    def run() -> None:
        db = connect()
        db.execute("SELECT 1").fetchall()
        made.append(db)

    for _ in range(THREADS):
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    return made


def _sources(root: Path) -> dict[str, Callable[[], sqlite3.Connection]]:
    store = Store.create(root)
    auth = Auth(root, store.journal)
    registry = ScreenRegistry(root / "screens.sqlite")
    return {"journal writer": store.journal.connection, "journal reader": store.journal.reader,
            "auth": auth._db, "logins": auth.guard._db, "screens": registry._db}


@pytest.mark.parametrize("name", ["journal writer", "journal reader", "auth", "logins",
                                  "screens"])
def test_a_threads_connection_closes_when_the_thread_ends(tmp_path: Path, name: str,
                                                           no_collections: None) -> None:
    made = _in_threads(_sources(tmp_path)[name])
    assert len({id(db) for db in made}) == THREADS  # one connection per thread
    assert [db for db in made if not _closed(db)] == []


def test_a_live_threads_connection_stays_open_and_is_reused(tmp_path: Path,
                                                           no_collections: None) -> None:
    connect = _sources(tmp_path)["journal reader"]
    db = connect()
    assert connect() is db and not _closed(db)
    db.execute("SELECT 1").fetchall()
