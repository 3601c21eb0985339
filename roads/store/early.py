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

import hashlib
import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

    from roads.store.key_runs import KeyPairs

#: The catalogue's shoe tables, read whole by the verifier.
SHOE_TABLES = ("catalog_shoes", "shoe_index")
JOURNAL = "journal.sqlite"


def sha256_of(path: Path) -> str:
    """A file's SHA-256 (``file_digest`` reads into one buffer: no fresh pages a block)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _read_only(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{(root / JOURNAL).resolve().as_uri()}?mode=ro", uri=True, timeout=30,
                           check_same_thread=False)


#: What joins a column's values when they are read as one text (a control character no
#: key, path or time the store writes holds; a value that holds it is read as JSON).
SEPARATOR = "\x1f"


def column_arrays(db: sqlite3.Connection, table: str, columns: list[str] | None = None,
                  where: str = "") -> dict[str, str]:
    """Columns of a table (every one when not named) as one text each, built in C (no
    Python tuple a row): for a column declared ``TEXT`` whose values are all text without
    :data:`SEPARATOR`, the values joined by it (``group_concat``) behind a leading one;
    otherwise (a null, a number, a value holding the separator, no rows) a JSON array
    (``json_group_array``). Why: splitting the text costs a third of decoding JSON, and the
    store's keys, paths and times are all text; one scan serves the common case."""
    declared = {row[1]: str(row[2]).upper() for row in db.execute(f"PRAGMA table_info({table})")}
    if columns is None:
        columns = list(declared)
    text = [c for c in columns if declared.get(c) == "TEXT"]
    other = [c for c in columns if c not in text]
    found = db.execute("SELECT " + ", ".join(
        ["count(*)"] + [f"group_concat({c}, char(31))" for c in text]
        + [f"sum(typeof({c}) = 'text' AND instr({c}, char(31)) = 0)" for c in text]
        + [f"json_group_array({c})" for c in other]) + f" FROM {table} {where}").fetchone()
    rows, n = found[0], len(text)
    joined = {c: v for c, v, plain in zip(text, found[1:n + 1], found[n + 1:2 * n + 1],
                                          strict=True) if rows and plain == rows}
    arrays = dict(zip(other, found[2 * n + 1:], strict=True))
    again = [c for c in text if c not in joined]
    if again:  # (rare: read those as JSON)
        arrays |= dict(zip(again, db.execute("SELECT " + ", ".join(
            f"json_group_array({c})" for c in again) + f" FROM {table} {where}").fetchone(),
            strict=True))
    return {c: SEPARATOR + joined[c] if c in joined else arrays[c] for c in columns}


class EarlyReads:
    """The reads started ahead, as futures (each may hold an exception: read it again)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hashes: dict[str, Future[str | None]] = {}
        self.shoe_tables: dict[str, Future[dict[str, str]]] = {}
        self.keys: dict[str, Future[list[KeyPairs | pa.Table]]] = {}
        self._coups_files: list[str] = []
        self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="roads-early")
        if not (root / JOURNAL).is_file():
            return
        try:
            db = _read_only(root)
            try:
                rows = db.execute("SELECT path, tbl FROM catalog ORDER BY path").fetchall()
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
        return sha256_of(path) if path.is_file() else None

    def _arrays(self, table: str) -> dict[str, str]:
        db = _read_only(self.root)
        try:
            return column_arrays(db, table)
        finally:
            db.close()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["SEPARATOR", "EarlyReads", "column_arrays", "sha256_of"]
