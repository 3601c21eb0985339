"""A part file's coups as :class:`~roads.stats.columns.ShoeColumns`, straight from the Arrow
buffers of its row groups: keys, outcome and card codes stay dictionary indices, flags stay
bitmaps until unpacked, and each row group is written in place into the arrays of its
piece (sized from the file's metadata), so no piece is built by joining row groups again.

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

#: Rows of a piece (whole row groups, then whole shoes: the last shoe waits for the next).
#: A piece's arrays take ~25 bytes a row; fewer, larger pieces cost less Python per coup.
PIECE_ROWS = 1_000_000
_COLUMNS = ["table_id", "shoe_id", "coup", "outcome", "player_total", "banker_total",
            "natural", "player_pair", "banker_pair", "dealt_at", "player_cards",
            "banker_cards"]
_DICTIONARIES = ["table_id", "shoe_id", "outcome", "player_cards.list.element",
                 "banker_cards.list.element"]
_OUTCOME = {"B": 0, "P": 1, "T": 2}
#: The Arrow types the compiled pass reads (the store's schema); a file with others is
#: read through a frame instead.
_TYPES = {"coup": pa.int32(), "player_total": pa.int8(), "banker_total": pa.int8(),
          "natural": pa.bool_(), "player_pair": pa.bool_(), "banker_pair": pa.bool_()}
_INTEGERS = {pa.int8(): np.int8, pa.uint8(): np.uint8, pa.int16(): np.int16,
             pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.int64(): np.int64}


@nb.njit(cache=True, nogil=True)
def _runs(at: int, table: np.ndarray, shoe: np.ndarray, coup: np.ndarray,
          starts: np.ndarray) -> int:
    """Where each run of one shoe's rows starts (from row ``at`` of the piece); returns how
    many. A coup not above the one before it in its run sets the run's start to -1."""
    runs = 0
    for r in range(table.shape[0]):
        if r == 0 or table[r] != table[r - 1] or shoe[r] != shoe[r - 1]:
            starts[runs] = at + r
            runs += 1
        elif coup[r] <= coup[r - 1]:
            starts[runs - 1] = -1
    return runs


@nb.njit(cache=True, nogil=True)
def _nulls(valid: np.ndarray, start: int, out: np.ndarray) -> None:
    """-1 in ``out`` where bit ``start + r`` of a validity bitmap is clear."""
    for r in range(out.shape[0]):
        i = start + r
        if (valid[i >> 3] >> (i & 7)) & 1 == 0:
            out[r] = -1


@nb.njit(cache=True, nogil=True)
def _bits(bitmap: np.ndarray, start: int, out: np.ndarray) -> None:
    """Bits ``start`` on of a bitmap as 0/1."""
    for r in range(out.shape[0]):
        i = start + r
        out[r] = (bitmap[i >> 3] >> (i & 7)) & 1


@nb.njit(cache=True, nogil=True)
def _hands(offsets: np.ndarray, codes: np.ndarray, lut: np.ndarray, slots: np.ndarray,
           count: np.ndarray) -> None:
    """Each row's card list as three slots (NO_CARD when empty) and its length."""
    for r in range(slots.shape[0]):
        first = offsets[r]
        n = offsets[r + 1] - first
        count[r] = n
        slots[r, 0] = lut[codes[first]] if n > 0 else NO_CARD
        slots[r, 1] = lut[codes[first + 1]] if n > 1 else NO_CARD
        slots[r, 2] = lut[codes[first + 2]] if n > 2 else NO_CARD


def _read_only(array: np.ndarray) -> np.ndarray:
    """As a buffer's view is: one array type for the compiled pass whatever the source."""
    array.setflags(write=False)
    return array




def _view(array: pa.Array, dtype: Any, count: int | None = None) -> np.ndarray:
    """The values buffer of a fixed-width array, zero-copy and read-only (``to_numpy``
    would load pandas, half a second of start-up)."""
    dtype = np.dtype(dtype)
    n = len(array) if count is None else count
    if not n:
        return _read_only(np.zeros(0, dtype=dtype))
    return _read_only(np.frombuffer(array.buffers()[1], dtype=dtype, count=n,
                                    offset=array.offset * dtype.itemsize))


def _indices(array: pa.DictionaryArray) -> np.ndarray:
    if array.null_count:
        raise NotInRuns("a null key or outcome")
    indices = array.indices
    if indices.type != pa.int32():
        return _read_only(_view(indices, _INTEGERS[indices.type]).astype(np.int32))
    return _view(indices, np.int32)


def _cards(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A card-list column's list offsets (int64), card codes (dictionary indices) and
    the code of each dictionary entry."""
    n = len(array)
    width = 8 if pa.types.is_large_list(array.type) else 4
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if width == 8 else np.int32,
                            count=n + 1, offset=array.offset * width) if n else \
        np.zeros(1, np.int64)
    offsets = _read_only(offsets.astype(np.int64, copy=False))
    cards = array.values
    if cards.null_count:
        raise NotInRuns("a null card")
    lut = np.array([CARD_INDEX[c] for c in cards.dictionary.to_pylist()] or [NO_CARD],
                   dtype=np.uint8)
    return offsets, _indices(cards), lut


@dataclass
class _Piece:
    """A piece's arrays being filled, where its runs of one shoe's rows start, their keys,
    and whether every row has its time."""

    arrays: dict[str, np.ndarray]
    small: np.ndarray  # (5, rows): the totals, natural and pair flags
    starts: list[np.ndarray]
    keys: list[pl.DataFrame]  # table_id, shoe_id of each run, a frame per row group
    timed: bool
    shoes: int = 0  # runs so far
    rows: int = 0


def _new_piece(rows: int, timed: bool) -> _Piece:
    small = np.empty((5, rows), dtype=np.int8)
    arrays: dict[str, np.ndarray] = {
        "coup": np.empty(rows, np.int32), "outcome": np.empty(rows, np.int8),
        "cards": np.empty(rows, np.int8), "player": np.empty((rows, 3), np.uint8),
        "banker": np.empty((rows, 3), np.uint8), "dealt_at": np.empty(rows, np.int64)}
    return _Piece(arrays, small, [], [], timed)


def _add(piece: _Piece, table: pa.Table) -> None:
    """One row group's rows appended to ``piece`` (its first run joined to the piece's
    last when both are one shoe)."""
    def column(name: str) -> Any:
        found = table.column(name)
        return found.chunk(0) if found.num_chunks == 1 else found.combine_chunks()

    n = table.num_rows
    if not n:
        return
    cols = {name: column(name) for name in _COLUMNS}
    for name, kind in _TYPES.items():
        if cols[name].type != kind:
            raise NotInRuns(f"{name} is {cols[name].type}")
    if cols["coup"].null_count:
        raise NotInRuns("a null coup number")
    table_id, shoe_id, outcome = cols["table_id"], cols["shoe_id"], cols["outcome"]
    t, s, o = _indices(table_id), _indices(shoe_id), _indices(outcome)
    o_lut = np.array([_OUTCOME[v] for v in outcome.dictionary.to_pylist()] or [0],
                     dtype=np.int8)
    p_off, p_codes, p_lut = _cards(cols["player_cards"])
    b_off, b_codes, b_lut = _cards(cols["banker_cards"])
    dealt = cols["dealt_at"]
    arrays, at, end = piece.arrays, piece.rows, piece.rows + n
    starts = np.empty(n, dtype=np.int64)
    runs = _runs(at, t, s, _view(cols["coup"], np.int32), starts)
    arrays["coup"][at:end] = _view(cols["coup"], np.int32)
    arrays["outcome"][at:end] = o_lut[o]
    arrays["dealt_at"][at:end] = _view(dealt, np.int64)
    for row, name in enumerate(("player_total", "banker_total", "natural", "player_pair",
                                "banker_pair")):
        array, out = cols[name], piece.small[row, at:end]
        if row < 2:
            out[:] = _view(array, np.int8)
        else:
            _bits(_read_only(np.frombuffer(array.buffers()[1], dtype=np.uint8)), array.offset,
                  out)
        if array.null_count:
            _nulls(_read_only(np.frombuffer(array.buffers()[0], dtype=np.uint8)),
                   array.offset, out)
    counts = []
    for side, (offsets, codes, lut) in (("player", (p_off, p_codes, p_lut)),
                                        ("banker", (b_off, b_codes, b_lut))):
        array = cols[f"{side}_cards"]
        count = np.empty(n, dtype=np.int8)
        _hands(offsets, codes, lut, arrays[side][at:end], count)
        if array.null_count:
            _nulls(_read_only(np.frombuffer(array.buffers()[0], dtype=np.uint8)),
                   array.offset, count)
            arrays[side][at:end][count < 0] = NO_CARD
        counts.append(count)
    cards = arrays["cards"][at:end]
    np.add(counts[0], counts[1], out=cards)
    cards[(counts[0] < 0) | (counts[1] < 0)] = -1
    starts = starts[:runs]
    first = starts - at
    if (starts < 0).any():
        raise NotInRuns("coups out of order within a shoe")
    # the runs' keys as strings (a shoe's rows may run on from one row group into the
    # next, whose dictionaries are its own), never as a Python value per shoe
    keys = pl.DataFrame({
        "table_id": pl.Series(table_id.dictionary.to_pylist(), dtype=pl.String)
        .gather(t[first]),
        "shoe_id": pl.Series(shoe_id.dictionary.to_pylist(), dtype=pl.String)
        .gather(s[first])})
    if piece.shoes and keys.row(0) == piece.keys[-1].row(-1):  # the last shoe goes on
        if arrays["coup"][at] <= arrays["coup"][at - 1]:
            raise NotInRuns("coups out of order within a shoe")
        starts, keys = starts[1:], keys[1:]
    if keys.height:  # (none when the group's rows are all of the last shoe)
        piece.starts.append(starts)
        piece.keys.append(keys)
        piece.shoes += keys.height
    piece.timed = piece.timed and dealt.null_count == 0
    piece.rows += n


def _columns(piece: _Piece, shoes: int, end: int) -> ShoeColumns:
    """The piece's first ``shoes`` runs (rows up to ``end``) as whole shoes."""
    starts = np.concatenate(piece.starts)[:shoes]
    small = piece.small[:, :end]
    return ShoeColumns(
        keys=pl.concat(piece.keys)[:shoes],
        offsets=np.r_[starts, end].astype(np.int64),
        **{name: a[:end] for name, a in piece.arrays.items()},
        player_total=small[0], banker_total=small[1], natural=small[2],
        player_pair=small[3], banker_pair=small[4], timed=piece.timed)


def _carried(piece: _Piece, rows: int) -> _Piece:
    """A new piece of ``rows`` rows that begins with ``piece``'s last shoe."""
    starts = np.concatenate(piece.starts)
    cut = int(starts[-1])
    carry = piece.rows - cut
    new = _new_piece(carry + rows, piece.timed)
    for name, a in piece.arrays.items():
        new.arrays[name][:carry] = a[cut:piece.rows]
    new.small[:, :carry] = piece.small[:, cut:piece.rows]
    new.starts, new.keys = [np.zeros(1, dtype=np.int64)], [piece.keys[-1][-1:]]
    new.shoes, new.rows = 1, carry
    return new


def part_columns(path: Path, rows: int | None = None) -> Iterator[ShoeColumns]:
    """A part file in pieces of whole shoes (about ``rows`` rows each). Raises
    :class:`NotInRuns` (possibly after some pieces) when its shoes are not runs of rows in
    rising coup order, so the caller can read it another way; pyarrow's errors pass."""
    with pq.ParquetFile(path, read_dictionary=_DICTIONARIES) as file:
        sizes = [file.metadata.row_group(i).num_rows for i in range(file.num_row_groups)]
        spans, first, held = [], 0, 0  # the row groups of each piece
        for i, n in enumerate(sizes):
            held += n
            if held >= (rows or PIECE_ROWS) or i == len(sizes) - 1:
                spans.append(range(first, i + 1))
                first, held = i + 1, 0
        seen: set[tuple[str, str]] = set()
        piece = _new_piece(sum(sizes[i] for i in spans[0]) if spans else 0, True)
        for k, span in enumerate(spans):
            if k:
                held = sum(sizes[i] for i in span)
                piece = _carried(piece, held) if piece.shoes else _new_piece(held, piece.timed)
            for i in span:
                _add(piece, file.read_row_group(i, columns=_COLUMNS, use_threads=False))
            shoes = piece.shoes
            last = k == len(spans) - 1
            if not last and shoes:  # the last shoe may go on in the next row group
                shoes -= 1
            if shoes:
                end = piece.rows if last or shoes == piece.shoes else \
                    int(np.concatenate(piece.starts)[shoes])
                cols = _columns(piece, shoes, end)
                keys = set(cols.keys.iter_rows())
                if len(keys) < cols.keys.height or not keys.isdisjoint(seen):
                    # before the piece is handed on: a reader checks each piece as it comes
                    # (a shoe twice in one piece failed the integrity checks' shapes)
                    raise NotInRuns("a shoe in more than one run of rows")
                seen |= keys
                yield cols
