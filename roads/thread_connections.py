"""Thread-local SQLite connections that close when their thread ends.

A server's thread pool lets idle request threads go; a connection kept only in a
``threading.local`` waits for a full collection to close (its statement cache holds it in a
cycle), which a server whose loaded code is frozen runs rarely, so connections piled up. Its
own module so that the store and the dashboard's screen registry share it without the
dashboard reaching into the store."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import suppress


class _ClosedWithThread:
    """Closes a thread's connection when the thread's local storage goes, as its thread
    ends (the module doc says why the connection alone does not). This holder is in no
    cycle, so it goes at once: 40–70 connections piled up per worker in a 5-minute soak
    before, with 20–30 threads alive."""

    __slots__ = ("db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __del__(self) -> None:
        with suppress(sqlite3.Error):
            self.db.close()


def keep_for_thread(local: threading.local, db: sqlite3.Connection) -> sqlite3.Connection:
    """Keep ``db`` as this thread's connection of ``local`` (``local.db``), closed when the
    thread ends (the live connections are then at most one per thread alive)."""
    local.db, local.closer = db, _ClosedWithThread(db)
    return db


def close_thread_connection(local: threading.local) -> None:
    """Close this thread's connection of ``local`` now, if it has one (a connection left
    to the collector stays open until a collection reaches it: its statement cache holds
    it in a cycle)."""
    db: sqlite3.Connection | None = getattr(local, "db", None)
    if db is not None:
        db.close()
        local.db = local.closer = None
