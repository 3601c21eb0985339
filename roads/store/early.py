"""Reads ``roads store verify`` starts before the data stack loads: each catalogued file's
SHA-256 and the catalogue's shoe tables as SQLite JSON arrays, on threads of their own; once
pyarrow is imported, each coups file's distinct keys (:meth:`EarlyReads.read_keys`).

Why: a fresh ``roads store verify`` spends its first second importing polars, pyarrow and
numpy on one core, holding the GIL. Hashing a file (``hashlib.file_digest``), building a
JSON array in SQLite and decoding Parquet run in C without the GIL, so started first they
use the idle core instead of waiting for the imports. Only the standard library is imported
here at first (pyarrow by ``read_keys``, on the calling thread: never an import on two
threads at once).

Nothing is judged here and nothing is written: the store is opened read-only (no store:
nothing is read, and :func:`roads.store.verify.verify` says so as it always does), and any
read that fails is left for the verifier to do again its own way.
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from roads.files import sha256

if TYPE_CHECKING:
    import pyarrow as pa

    from roads.store.key_runs import KeyPairs

#: The catalogue's shoe tables, read whole by the verifier.
SHOE_TABLES = ("catalog_shoes", "shoe_index")
JOURNAL = "journal.sqlite"


def _read_only(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{(root / JOURNAL).resolve().as_uri()}?mode=ro", uri=True, timeout=30,
                           check_same_thread=False)


def column_arrays(db: sqlite3.Connection, table: str, columns: list[str] | None = None,
                  where: str = "") -> dict[str, str]:
    """Columns of a table (every one when not named) as one JSON array each
    (``json_group_array``, built in C: no Python tuple a row)."""
    if columns is None:
        columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
    arrays = db.execute("SELECT " + ", ".join(f"json_group_array({c})" for c in columns)
                        + f" FROM {table} {where}").fetchone()
    return dict(zip(columns, arrays, strict=True))


class EarlyReads:
    """The reads started ahead, as futures (each may hold an exception: read it again)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hashes: dict[str, Future[str | None]] = {}
        self.shoe_tables: dict[str, Future[dict[str, str]]] = {}
        self.keys: dict[str, Future[list[KeyPairs | pa.Table]]] = {}
        self._coups_files: list[str] = []
        #: The journal's head when the catalogue was read here (None: not read): verify
        #: uses the shoe tables read ahead only if its own snapshot has the same head.
        self.head: int | None = None
        self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="roads-early")
        if not (root / JOURNAL).is_file():
            return
        try:
            db = _read_only(root)
            try:
                db.execute("BEGIN")
                rows = db.execute("SELECT path, tbl FROM catalog ORDER BY path").fetchall()
                self.head = db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
                db.execute("COMMIT")
            finally:
                db.close()
        except (sqlite3.Error, OSError, ValueError):
            return  # no catalogue (or not a store): the verifier finds out
        for table in SHOE_TABLES:
            self.shoe_tables[table] = self._pool.submit(self._arrays, table)
        for path, _ in rows:
            self.hashes[path] = self._pool.submit(self._digest, path)
        self._coups_files = [path for path, kind in rows if kind == "coups"]

    def read_keys(self) -> None:
        """Import pyarrow here, then read each coups file's distinct keys on the threads."""
        from roads.store.key_runs import file_keys

        for path in self._coups_files:
            self.keys[path] = self._pool.submit(file_keys, self.root / path)

    def _digest(self, rel: str) -> str | None:
        path = self.root / rel
        return sha256(path) if path.is_file() else None

    def _arrays(self, table: str) -> dict[str, str]:
        db = _read_only(self.root)
        try:
            return column_arrays(db, table)
        finally:
            db.close()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["EarlyReads", "column_arrays"]
