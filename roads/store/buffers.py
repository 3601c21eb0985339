"""A part file's coups as :class:`~roads.stats.columns.ShoeColumns`, straight from the Arrow
buffers of its row groups: keys, outcome and card codes stay dictionary indices, flags stay
bitmaps until unpacked, and no frame is built in between.

Why: ``roads stats`` and ``roads check`` read every coup of a store; building a polars frame
of each file (and its card lists) cost more than the statistics and checks themselves.
Only the store reads its files; the read port hands these out (``Reader.shoe_columns``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from roads.cards import CARD_INDEX
from roads.schema import NO_CARD
from roads.stats.columns import NotInRuns, ShoeColumns

#: Rows read at a time (whole row groups, then whole shoes: the last shoe waits for the next).
PIECE_ROWS = 500_000
_COLUMNS = ["table_id", "shoe_id", "coup", "outcome", "player_total", "banker_total",
            "natural", "player_pair", "banker_pair", "dealt_at", "player_cards",
            "banker_cards"]
_DICTIONARIES = ["table_id", "shoe_id", "outcome", "player_cards.list.element",
                 "banker_cards.list.element"]
_OUTCOME = {"B": 0, "P": 1, "T": 2}
_INTEGERS = {pa.int8(): np.int8, pa.uint8(): np.uint8, pa.int16(): np.int16,
             pa.uint16(): np.uint16, pa.int32(): np.int32, pa.uint32(): np.uint32,
             pa.int64(): np.int64}


def _plain(array: pa.Array, dtype: Any) -> np.ndarray:
    """The values buffer of a fixed-width array, zero-copy (``Array.to_numpy`` would load
    pandas, half a second of start-up)."""
    dtype = np.dtype(dtype)
    if not len(array):
        return _read_only(np.zeros(0, dtype=dtype))
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array),
                         offset=array.offset * dtype.itemsize)


def _read_only(array: np.ndarray) -> np.ndarray:
    """As a buffer's view is: one array type for the compiled readers whatever the size."""
    array.setflags(write=False)
    return array


def _bits(buffer: pa.Buffer | None, array: pa.Array) -> np.ndarray:
    """A bitmap of ``array`` (its validity or its boolean values) as one bool per row."""
    if buffer is None or not len(array):
        return np.ones(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
    return bits[array.offset:array.offset + len(array)].view(bool)


def _valid(array: pa.Array) -> np.ndarray | None:
    return None if array.null_count == 0 else _bits(array.buffers()[0], array)


def _small(array: pa.Array) -> np.ndarray:
    """An int8 or boolean column as int8, -1 where null."""
    if pa.types.is_boolean(array.type):
        out = _bits(array.buffers()[1], array).astype(np.int8)
    else:
        out = _plain(array, np.int8).copy()
    valid = _valid(array)
    if valid is not None:
        out[~valid] = -1
    return out


def _indices(array: pa.DictionaryArray) -> np.ndarray:
    if array.null_count:
        raise NotInRuns("a null key or outcome")
    indices = array.indices
    return _plain(indices, _INTEGERS[indices.type])


@nb.njit(cache=True, nogil=True)
def _hands(offsets: np.ndarray, codes: np.ndarray, lut: np.ndarray, valid: np.ndarray,
           slots: np.ndarray, count: np.ndarray) -> None:
    """Each row's card list as three slots (NO_CARD when empty) and its length (-1: null)."""
    for r in range(slots.shape[0]):
        first = offsets[r]
        n = offsets[r + 1] - first if valid[r] else 0
        count[r] = n if valid[r] else -1
        for j in range(3):
            slots[r, j] = lut[codes[first + j]] if j < n else NO_CARD


def _hand(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A card-list column as (rows, 3) card codes and each list's length (-1: no list)."""
    n = len(array)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64, count=n + 1,
                            offset=array.offset * 8) if n else _read_only(np.zeros(1, np.int64))
    cards = array.values
    if cards.null_count:
        raise NotInRuns("a null card")
    lut = np.array([CARD_INDEX[c] for c in cards.dictionary.to_pylist()] or [NO_CARD],
                   dtype=np.uint8)
    valid = _valid(array)
    slots = np.empty((n, 3), dtype=np.uint8)
    count = np.empty(n, dtype=np.int16)
    _hands(offsets, _indices(cards), lut, np.ones(n, dtype=bool) if valid is None else valid,
           slots, count)
    return slots, count


@dataclass(frozen=True)
class _Rows:
    """Rows read so far: their arrays, where each run of one shoe's rows starts, the runs'
    keys, and whether every row has its time."""

    arrays: dict[str, np.ndarray]
    starts: np.ndarray
    keys: pl.DataFrame
    timed: bool

    @property
    def rows(self) -> int:
        return len(self.arrays["coup"])


def _group(table: pa.Table) -> _Rows:
    """One row group's rows."""
    def column(name: str) -> Any:
        found = table.column(name)
        return found.chunk(0) if found.num_chunks == 1 else found.combine_chunks()

    table_id, shoe_id = column("table_id"), column("shoe_id")
    t, s = _indices(table_id), _indices(shoe_id)
    starts = np.r_[0, np.flatnonzero((t[1:] != t[:-1]) | (s[1:] != s[:-1])) + 1] \
        .astype(np.int64) if len(t) else np.zeros(0, dtype=np.int64)
    keys = pl.DataFrame({
        "table_id": pl.Series(table_id.dictionary.to_pylist(), dtype=pl.String)
        .gather(t[starts]),
        "shoe_id": pl.Series(shoe_id.dictionary.to_pylist(), dtype=pl.String)
        .gather(s[starts])})
    outcome = column("outcome")
    lut = np.array([_OUTCOME[o] for o in outcome.dictionary.to_pylist()] or [0],
                   dtype=np.int8)
    coup = column("coup")
    if coup.null_count:
        raise NotInRuns("a null coup number")
    dealt = column("dealt_at")
    player, p_count = _hand(column("player_cards"))
    banker, b_count = _hand(column("banker_cards"))
    cards = p_count + b_count
    cards[(p_count < 0) | (b_count < 0)] = -1
    arrays = {
        "coup": _plain(coup, np.int32), "outcome": lut[_indices(outcome)],
        **{name: _small(column(name)) for name in (
            "player_total", "banker_total", "natural", "player_pair", "banker_pair")},
        "cards": cards.astype(np.int8), "player": player, "banker": banker,
        "dealt_at": _plain(dealt, np.int64)}
    return _Rows(arrays, starts, keys, dealt.null_count == 0)


def _joined(parts: list[_Rows]) -> _Rows:
    """Consecutive rows as one (a run cut by a row-group boundary joined again)."""
    if len(parts) == 1:
        return parts[0]
    arrays = {name: np.concatenate([p.arrays[name] for p in parts]) for name in parts[0].arrays}
    shift = np.cumsum([0, *(p.rows for p in parts[:-1])])
    starts = np.concatenate([p.starts + d for p, d in zip(parts, shift, strict=True)])
    keys = pl.concat([p.keys for p in parts])
    same = keys.select((pl.col("table_id") == pl.col("table_id").shift())
                       & (pl.col("shoe_id") == pl.col("shoe_id").shift())).to_series()
    apart = ~same.fill_null(False).to_numpy()
    return _Rows(arrays, starts[apart], keys.filter(pl.Series(apart)),
                 all(p.timed for p in parts))


def _columns(rows: _Rows, shoes: int) -> ShoeColumns:
    """The first ``shoes`` runs as whole shoes; coups must rise in each."""
    end = int(rows.starts[shoes]) if shoes < len(rows.starts) else rows.rows
    arrays = {name: a[:end] for name, a in rows.arrays.items()}
    starts = rows.starts[:shoes]
    first = np.zeros(end, dtype=bool)
    first[starts] = True
    if end > 1 and not (np.diff(arrays["coup"])[~first[1:]] > 0).all():
        raise NotInRuns("coups out of order within a shoe")
    return ShoeColumns(keys=rows.keys[:shoes], offsets=np.r_[starts, end].astype(np.int64),
                       **arrays, timed=rows.timed)


def part_columns(path: Path, rows: int | None = None) -> Iterator[ShoeColumns]:
    """A part file in pieces of whole shoes (about ``rows`` rows each). Raises
    :class:`NotInRuns` (possibly after some pieces) when its shoes are not runs of rows in
    rising coup order, so the caller can read it another way; pyarrow's errors pass."""
    with pq.ParquetFile(path, read_dictionary=_DICTIONARIES) as file:
        pending: list[_Rows] = []
        seen: list[pl.DataFrame] = []
        last = file.num_row_groups - 1
        for i in range(file.num_row_groups):
            pending.append(_group(file.read_row_group(i, columns=_COLUMNS, use_threads=False)))
            if sum(p.rows for p in pending) < (rows or PIECE_ROWS) and i < last:
                continue
            piece = _joined(pending)
            shoes = len(piece.starts)
            pending = []
            if i < last and shoes:  # the last shoe may go on in the next row group
                shoes -= 1
                cut = int(piece.starts[-1])
                pending = [_Rows({n: a[cut:] for n, a in piece.arrays.items()},
                                 np.zeros(1, dtype=np.int64), piece.keys[-1:], piece.timed)]
            if shoes:
                seen.append(piece.keys[:shoes])
                yield _columns(piece, shoes)
        if seen and pl.concat(seen).is_duplicated().any():
            raise NotInRuns("a shoe in more than one run of rows")
