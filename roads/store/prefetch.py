"""Decoding the first coups files of a whole-store read on a thread of its own, while the
command is still importing and loading its compiled passes.

Why: a fresh ``roads stats`` or ``roads check`` spends its first second or more importing
numba, polars and scipy and loading the compiled kernels, all holding the GIL on one core,
before the first row group is read; the other core waits. Decoding Parquet (pyarrow) needs
none of that and releases the GIL, so it can start as soon as the files are known. The
decoded row groups are handed to :func:`roads.store.buffers.part_columns`, which would have
read the same ones: nothing is decoded twice and every result is the same.

Bounded: at most :data:`AHEAD_ROWS` rows are held decoded, and the thread stops at the first
file a reader reached before it (the readers have caught up) or that it cannot read (the
reader then reads it and reports the error as it always has). Pure pyarrow: importing this
module loads neither numba nor polars.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

#: Rows held decoded ahead (some 70 bytes a row as Arrow arrays: ~90 MB, two engine files,
#: handed on in the first seconds of the read). The pages stay with the process (Arrow's
#: allocator keeps a finished thread's pages; MIMALLOC_PURGE_DELAY=-1): 2.5 M rows raised
#: a 30 M-coup store's peak RSS from ~856 MB to 1,002 MB, over the 1 GB bound.
AHEAD_ROWS = 1_300_000
#: The columns and dictionaries :mod:`roads.store.buffers` reads (it imports them from here).
COLUMNS = ["table_id", "shoe_id", "coup", "outcome", "player_total", "banker_total",
           "natural", "player_pair", "banker_pair", "dealt_at", "player_cards",
           "banker_cards"]
DICTIONARIES = ["table_id", "shoe_id", "outcome", "player_cards.list.element",
                "banker_cards.list.element"]

_Decoded = list[pa.Table]  # a file's row groups, in order


def _identity(path: Path) -> tuple[int, int]:
    """What tells a file from another written at the same path since."""
    found = os.stat(path)
    return found.st_size, found.st_mtime_ns


def decode(path: Path) -> _Decoded:
    """Every row group of a part file, as :func:`roads.store.buffers.part_columns` reads
    them (one at a time, in order, without Arrow's threads)."""
    with pq.ParquetFile(path, read_dictionary=DICTIONARIES) as file:
        return [file.read_row_group(i, columns=COLUMNS, use_threads=False)
                for i in range(file.num_row_groups)]


class ReadAhead:
    """Files decoded ahead of their readers, in the order the readers will ask for them."""

    def __init__(self, paths: Sequence[Path], rows: int = AHEAD_ROWS) -> None:
        self._paths = list(paths)
        self._rows = rows
        self._lock = threading.Lock()
        self._ahead: dict[Path, tuple[tuple[int, int], Future[_Decoded]]] = {}
        self._taken: set[Path] = set()
        self._thread = threading.Thread(target=self._run, name="roads-read-ahead",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        held = 0
        for path in self._paths:
            if held >= self._rows:
                return
            future: Future[_Decoded] = Future()
            with self._lock:
                if path in self._taken:  # the readers are here already
                    return
                try:
                    identity = _identity(path)
                except OSError:
                    return
                self._ahead[path] = (identity, future)
            try:
                tables = decode(path)
            except (OSError, pa.ArrowException):
                with self._lock:  # the reader reads it itself and says what is wrong
                    del self._ahead[path]
                future.set_result([])
                return
            future.set_result(tables)
            held += sum(t.num_rows for t in tables)

    def take(self, path: Path) -> _Decoded | None:
        """The file's decoded row groups if they were (or are being) decoded ahead and the
        file is still the one decoded; None: read it. Each file is handed out once."""
        with self._lock:
            self._taken.add(path)
            found = self._ahead.pop(path, None)
        if found is None:
            return None
        identity, future = found
        tables = future.result()
        try:
            same = _identity(path) == identity
        except OSError:
            same = False
        return tables if tables and same else None


_current: ReadAhead | None = None


def start(paths: Sequence[Path], rows: int | None = None) -> ReadAhead:
    """Begin decoding ``paths`` ahead for this process's next whole-store read (at most
    ``rows`` rows, :data:`AHEAD_ROWS` by default)."""
    global _current
    _current = ReadAhead(paths, AHEAD_ROWS if rows is None else rows)
    return _current


def take(path: Path) -> _Decoded | None:
    """The decoded row groups of ``path`` if the read-ahead holds them (see
    :meth:`ReadAhead.take`)."""
    ahead = _current
    return ahead.take(path) if ahead is not None else None


def stop() -> None:
    """Forget the read-ahead (what it still holds is freed)."""
    global _current
    _current = None


__all__ = ["AHEAD_ROWS", "COLUMNS", "DICTIONARIES", "ReadAhead", "decode", "start", "stop",
           "take"]
