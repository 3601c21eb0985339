"""The engine's converter: dealt batches into canonical ``coups`` and ``shoes`` Arrow tables.

Built from the engine's numpy buffers without per-row Python objects, so the simulator can
write millions of coups a second; the columns are exactly the canonical schema's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba as nb
import numpy as np
import pyarrow as pa

from roads.arrow_arrays import large_lists, large_strings, numeric
from roads.cards import CARD_CODES
from roads.engine import NO_CARD, DealtBatch
from roads.schema import ENTRY_METHODS, SOURCES, arrow_schema
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
    k = len(batch.seeds)
    index = np.arange(first, first + k)
    table_of = index % sim.tables
    sequence = index // sim.tables
    counts = batch.info[:, 0].astype(np.int64)
    shoe_of_coup = np.repeat(np.arange(k), counts)
    offsets = np.zeros(k, dtype=np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    coup_no = (np.arange(len(shoe_of_coup)) - offsets[shoe_of_coup] + 1).astype(np.int32)
    start_us = int(sim.start.timestamp()) * 1_000_000
    shoe_start = start_us + sequence.astype(np.int64) * SHOE_SLOT_SECONDS * 1_000_000
    dealt = shoe_start[shoe_of_coup] + (coup_no.astype(np.int64) - 1) * COUP_SECONDS * 1_000_000
    table_names = [sim.table_id(t) for t in range(sim.tables)]
    shoe_names = [sim.shoe_id(int(i)) for i in index]
    res = batch.result
    ts = pa.timestamp("us", tz="UTC")
    coups = pa.Table.from_arrays(
        [
            _strings(table_names, table_of[shoe_of_coup]),
            _strings(shoe_names, shoe_of_coup),
            pa.array(coup_no),
            _dictionary(res[:, 2].astype(np.uint8), _OUTCOME_DICT),
            _card_lists(batch.cards, 0, 3),
            _card_lists(batch.cards, 3, 6),
            pa.array(res[:, 0]),
            pa.array(res[:, 1]),
            pa.array(res[:, 3].astype(np.bool_)),
            pa.array(res[:, 4].astype(np.bool_)),
            pa.array(res[:, 5].astype(np.bool_)),
            pa.array(dealt, ts),
            _dictionary(np.full(len(res), _ENGINE, dtype=np.uint8), _SOURCE_DICT),
            _dictionary(np.full(len(res), _ENGINE_ENTRY, dtype=np.uint8), _ENTRY_DICT),
            pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(res), dtype=np.uint8)),
                                           pa.array([sim.entered_by], pa.large_string())
                                           ).cast(pa.large_string()),
        ],
        schema=arrow_schema("coups"),
    )
    burned = batch.info[:, 1]
    burn_slots = np.where(np.arange(batch.shoes.shape[1])[None, :] < burned[:, None],
                          batch.shoes, NO_CARD)[:, : int(burned.max()) if k else 0]
    shoes = pa.Table.from_arrays(
        [
            _strings(table_names, table_of),
            pa.array(shoe_names, pa.large_string()),
            pa.array([sim.rules.name] * k, pa.large_string()),
            pa.array(np.full(k, sim.rules.decks, dtype=np.int8)),
            _card_lists(burn_slots, 0, burn_slots.shape[1]),
            pa.array(batch.info[:, 2].astype(np.int16)),
            pa.array(counts.astype(np.int16)),
            pa.array(batch.info[:, 3].astype(np.int16)),
            pa.array(shoe_start, ts),
            pa.array(shoe_start + (counts - 1) * COUP_SECONDS * 1_000_000, ts),
            pa.array(batch.seeds, pa.uint64()),
            _dictionary(np.full(k, _ENGINE, dtype=np.uint8), _SOURCE_DICT),
        ],
        schema=arrow_schema("shoes"),
    )
    return coups, shoes
