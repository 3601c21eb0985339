"""The engine's converter: dealt batches into canonical ``coups`` and ``shoes`` Arrow tables.

Built from the engine's numpy buffers without per-row Python objects, so the simulator can
write millions of coups a second; the columns are exactly the canonical schema's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba as nb
import numpy as np
import polars as pl
import pyarrow as pa

from roads.arrow_arrays import large_lists, large_strings, numeric
from roads.cards import CARD_CODES
from roads.engine import NO_CARD, DealtBatch
from roads.schema import COUPS, ENTRY_METHODS, SOURCES, arrow_schema
from roads.store import Content
from roads.store.digest import RECORD, combine, record_digests
from roads.tableau import OUTCOMES

if TYPE_CHECKING:
    from roads.simulate import Simulation

COUP_SECONDS = 30
SHOE_SLOT_SECONDS = 3600
_CARD_DICT = large_strings(list(CARD_CODES))
_OUTCOME_DICT = large_strings(list(OUTCOMES))
_SOURCE_DICT = large_strings(list(SOURCES))
_ENTRY_DICT = large_strings(list(ENTRY_METHODS))
_ENGINE = SOURCES.index("engine")
_ENGINE_ENTRY = ENTRY_METHODS.index("engine")
_TIMES = pa.timestamp("us", tz="UTC")


def _dictionary(indices: np.ndarray, dictionary: pa.Array) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(numeric(indices, pa.uint8()), dictionary)


@nb.njit(cache=True, nogil=True)
def _pack_slots(slots: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """List offsets and packed values of slot columns ``lo:hi``, skipping NO_CARD."""
    offsets = np.empty(slots.shape[0] + 1, dtype=np.int64)
    values = np.empty(slots.shape[0] * (hi - lo), dtype=np.uint8)
    n = 0
    offsets[0] = 0
    for i in range(slots.shape[0]):
        for j in range(lo, hi):
            if slots[i, j] != NO_CARD:
                values[n] = slots[i, j]
                n += 1
        offsets[i + 1] = n
    return offsets, values[:n]


@nb.njit(cache=True)
def _gather_bytes(
    data: np.ndarray, offsets: np.ndarray, take: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    out_offsets = np.empty(take.shape[0] + 1, dtype=np.int64)
    out_offsets[0] = 0
    for i in range(take.shape[0]):
        k = take[i]
        out_offsets[i + 1] = out_offsets[i] + offsets[k + 1] - offsets[k]
    out = np.empty(out_offsets[-1], dtype=np.uint8)
    for i in range(take.shape[0]):
        src = offsets[take[i]]
        dst = out_offsets[i]
        for b in range(out_offsets[i + 1] - dst):
            out[dst + b] = data[src + b]
    return out_offsets, out


def _repeated(text: str, n: int) -> pa.Array:
    """``n`` copies of ``text`` as a ``large_string`` column, from two buffers."""
    data = text.encode()
    return pa.LargeStringArray.from_buffers(
        n, pa.py_buffer(np.arange(n + 1, dtype=np.int64) * len(data)), pa.py_buffer(data * n))


def _card_lists(slots: np.ndarray, lo: int, hi: int) -> pa.LargeListArray:
    """List<card> from columns ``lo:hi`` of ``(rows, k)`` card slots padded with NO_CARD."""
    offsets, values = _pack_slots(slots, lo, hi)
    return large_lists(offsets, _dictionary(values, _CARD_DICT))


def _strings(values: list[str], take: np.ndarray) -> pa.Array:
    """``values[take]`` as an Arrow string column, built without Python objects per row."""
    encoded = [v.encode() for v in values]
    width = len(encoded[0]) if encoded else 0
    if all(len(e) == width for e in encoded):  # the usual case: one fixed-width name format
        names = np.frombuffer(b"".join(encoded), dtype=np.uint8).reshape(len(encoded), width)
        return pa.LargeStringArray.from_buffers(
            len(take),
            pa.py_buffer(np.arange(len(take) + 1, dtype=np.int64) * width),
            pa.py_buffer(names[take].ravel()),
        )
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    out_offsets, out = _gather_bytes(data, offsets, np.ascontiguousarray(take, dtype=np.int64))
    return pa.LargeStringArray.from_buffers(
        len(take), pa.py_buffer(out_offsets), pa.py_buffer(out)
    )


def batch_tables(sim: Simulation, first: int, batch: DealtBatch) -> tuple[pa.Table, pa.Table]:
    """Canonical ``coups`` and ``shoes`` Arrow tables for one dealt batch."""
    layout = _Layout(sim, first, batch)
    ids = [_strings(layout.table_names, layout.table_of[layout.shoe_of_coup]),
           _strings(layout.shoe_names, layout.shoe_of_coup)]
    return (pa.Table.from_arrays([*ids, *layout.coup_columns()], schema=arrow_schema("coups")),
            layout.shoes())


def batch_frames(sim: Simulation, first: int, batch: DealtBatch
                 ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`batch_tables` as polars frames (what the part writers take)."""
    files = EngineFiles(sim, first, batch)
    return files.coups, files.shoes


class EngineFiles:
    """One dealt batch as the frames of its coups and shoes files, and the content of its
    coups file made from the batch's own buffers.

    The two id columns are gathered by polars from the batch's few names: its strings of up
    to twelve bytes live inside their views, so no buffer of a name per coup is built in
    Arrow and converted again (a fifth of a batch's conversion)."""

    def __init__(self, sim: Simulation, first: int, batch: DealtBatch) -> None:
        layout = self._layout = _Layout(sim, first, batch)
        rest = pl.from_arrow(pa.Table.from_arrays(layout.varying_columns(),
                                                  schema=_VARYING_FIELDS))
        shoes = pl.from_arrow(layout.shoes())
        assert isinstance(rest, pl.DataFrame) and isinstance(shoes, pl.DataFrame)
        ids = pl.DataFrame([
            pl.Series("table_id", layout.table_names).gather(
                layout.table_of[layout.shoe_of_coup]),
            pl.Series("shoe_id", layout.shoe_names).gather(layout.shoe_of_coup)])
        n = rest.height  # the run's constants, repeated by polars (no Arrow column built)
        same = pl.select(*(pl.repeat(pl.lit(value, dtype=COUPS[name]), n).alias(name)
                           for name, value in (("source", "engine"), ("entry", "engine"),
                                               ("entered_by", sim.entered_by))))
        self.coups = pl.concat([ids, rest, same], how="horizontal")
        self.shoes = shoes

    def coups_content(self) -> Content:
        """The coups file's content digest and shoe keys, hashed from the kernel's buffers
        (the digest of :mod:`roads.store.digest` made of its frame took ~20 polars passes,
        a quarter of a batch's CPU; ``tests/test_simulate.py`` holds the two equal)."""
        layout = self._layout
        batch, n = layout.batch, len(layout.batch.result)
        rec = np.empty(n, dtype=RECORD)
        who = layout.sim.entered_by.encode()
        _fill_records(rec.view(np.uint8).reshape(n, RECORD.itemsize), layout.coup_no,
                      batch.result, batch.cards, layout.dealt, _ENGINE, _ENGINE_ENTRY, len(who))
        cuts = np.r_[0, np.cumsum(layout.counts)]
        ends = (layout.counts * len(who)).tolist()  # every coup's text is the same
        tables = [layout.table_names[t] for t in layout.table_of]
        digests = record_digests(rec, cuts, tables, layout.shoe_names,
                                 who * int(layout.counts.max(initial=0)), [0] * len(ends),
                                 ends)
        keys = pl.DataFrame({"table_id": tables, "shoe_id": layout.shoe_names})
        return Content(combine(keys.with_columns(pl.Series("digest", digests))), keys)


@nb.njit(cache=True, nogil=True)
def _fill_records(out: np.ndarray, coup: np.ndarray, result: np.ndarray, cards: np.ndarray,
                  dealt: np.ndarray, source: int, entry: int, text_bytes: int) -> None:
    """The digest's 32-byte little-endian records (:data:`roads.store.digest.RECORD`) of
    dealt coups, in one pass (numpy's field by field assignment was strided, 13 times).
    The kernel's NO_CARD (255) is the digest's empty slot, and it leaves one only after
    the cards dealt; no value is null."""
    for i in range(out.shape[0]):
        c = coup[i]
        for b in range(4):
            out[i, b] = (c >> (8 * b)) & 0xFF
        out[i, 4] = result[i, 2]
        for j in range(6):
            out[i, 5 + j] = cards[i, j]
        out[i, 11] = result[i, 0] & 0xFF
        out[i, 12] = result[i, 1] & 0xFF
        for j in range(3):
            out[i, 13 + j] = result[i, 3 + j]
        t = dealt[i]
        for b in range(8):
            out[i, 16 + b] = (t >> (8 * b)) & 0xFF
        out[i, 24] = source
        out[i, 25] = entry
        for b in range(4):
            out[i, 26 + b] = (text_bytes >> (8 * b)) & 0xFF
        out[i, 30] = 0
        out[i, 31] = 0


#: The coups fields after the two ids, as :func:`batch_frames` builds them in Arrow.
_COUP_FIELDS = pa.schema(list(arrow_schema("coups"))[2:])
#: Those that vary from coup to coup (all but source, entry and entered_by, the last three).
_VARYING_FIELDS = pa.schema(list(_COUP_FIELDS)[:-3])


class _Layout:
    """Where a batch's shoes and coups go: tables, shoe names, coup numbers and clocks."""

    def __init__(self, sim: Simulation, first: int, batch: DealtBatch) -> None:
        self.sim, self.batch = sim, batch
        k = self.k = len(batch.seeds)
        index = np.arange(first, first + k)
        self.table_of = index % sim.tables
        sequence = index // sim.tables
        self.counts = batch.info[:, 0].astype(np.int64)
        self.shoe_of_coup = np.repeat(np.arange(k), self.counts)
        offsets = np.zeros(k, dtype=np.int64)
        np.cumsum(self.counts[:-1], out=offsets[1:])
        self.coup_no = (np.arange(len(self.shoe_of_coup)) - offsets[self.shoe_of_coup] + 1
                        ).astype(np.int32)
        start_us = int(sim.start.timestamp()) * 1_000_000
        self.shoe_start = start_us + sequence.astype(np.int64) * SHOE_SLOT_SECONDS * 1_000_000
        self.dealt = self.shoe_start[self.shoe_of_coup] + (
            self.coup_no.astype(np.int64) - 1) * COUP_SECONDS * 1_000_000
        self.table_names = [sim.table_id(t) for t in range(sim.tables)]
        self.shoe_names = [sim.shoe_id(int(i)) for i in index]

    def coup_columns(self) -> list[pa.Array]:
        """Every coups column after ``table_id`` and ``shoe_id``, in schema order."""
        n = len(self.batch.result)
        return [
            *self.varying_columns(),
            _dictionary(np.full(n, _ENGINE, dtype=np.uint8), _SOURCE_DICT),
            _dictionary(np.full(n, _ENGINE_ENTRY, dtype=np.uint8), _ENTRY_DICT),
            _repeated(self.sim.entered_by, n),
        ]

    def varying_columns(self) -> list[pa.Array]:
        """:meth:`coup_columns` but the run's three constants (source, entry, entered_by)."""
        res = self.batch.result
        return [
            numeric(self.coup_no),
            _dictionary(res[:, 2].astype(np.uint8), _OUTCOME_DICT),
            _card_lists(self.batch.cards, 0, 3),
            _card_lists(self.batch.cards, 3, 6),
            numeric(res[:, 0]),
            numeric(res[:, 1]),
            numeric(res[:, 3], pa.bool_()),
            numeric(res[:, 4], pa.bool_()),
            numeric(res[:, 5], pa.bool_()),
            numeric(self.dealt, _TIMES),
        ]

    def shoes(self) -> pa.Table:
        """The batch's canonical ``shoes`` table."""
        batch, k, counts = self.batch, self.k, self.counts
        burned = batch.info[:, 1]
        burn_slots = np.where(np.arange(batch.shoes.shape[1])[None, :] < burned[:, None],
                              batch.shoes, NO_CARD)[:, : int(burned.max()) if k else 0]
        return pa.Table.from_arrays(
            [
                _strings(self.table_names, self.table_of),
                large_strings(self.shoe_names),
                _repeated(self.sim.rules.name, k),
                numeric(np.full(k, self.sim.rules.decks, dtype=np.int8)),
                _card_lists(burn_slots, 0, burn_slots.shape[1]),
                numeric(batch.info[:, 2].astype(np.int16)),
                numeric(counts.astype(np.int16)),
                numeric(batch.info[:, 3].astype(np.int16)),
                numeric(self.shoe_start, _TIMES),
                numeric(self.shoe_start + (counts - 1) * COUP_SECONDS * 1_000_000, _TIMES),
                numeric(batch.seeds, pa.uint64()),
                _dictionary(np.full(k, _ENGINE, dtype=np.uint8), _SOURCE_DICT),
            ],
            schema=arrow_schema("shoes"),
        )
