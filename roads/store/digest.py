"""Content digests: one number for what a file *holds*, independent of how it is encoded.

A part file's SHA-256 binds its bytes; the content digest binds its canonical rows, so the
journal can vouch for coups whatever file they end up in (a compaction re-encodes them, an
export carries a slice of them) and an offline checker can recompute it from the rows alone.

Coups (``docs/store.md`` gives the byte layout, so another implementation can check it):
rows in (table_id, shoe_id, coup) order; each shoe's digest is the SHA-256 of
``b"roads-coups-2\\0" + table_id + b"\\0" + shoe_id + b"\\0"``, then one fixed 32-byte record
per coup, then the UTF-8 ``entered_by`` texts of its coups in order. Each shoe's *leaf* is
the SHA-256 of the line ``table_id \\t shoe_id \\t shoe digest \\n``; a table's digest is the
SHA-256 of its leaves (32 bytes each) in (table_id, shoe_id) order. Shoes: the SHA-256 of
``b"roads-shoes-3\\0"`` and one line per shoe row in (table_id, shoe_id) order (rows of one
shoe, which no writer makes, in the order they come): the columns in
schema order, tab-separated, ending in a newline; text with backslash, tab and newline
escaped as ``\\\\``, ``\\t``, ``\\n``; integers in decimal; times as integer microseconds
since the epoch; card lists as codes joined by commas; null as ``\\N``.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from roads.schema import SHOE_KEY, conform, rising_within_shoes, shoe_start

COUPS_TAG = b"roads-coups-2\0"
#: One coup, fixed width, little-endian (see the module docstring and ``docs/store.md``).
RECORD = np.dtype([
    ("coup", "<i4"), ("outcome", "u1"), ("player", "u1", 3), ("banker", "u1", 3),
    ("player_total", "i1"), ("banker_total", "i1"), ("natural", "u1"), ("player_pair", "u1"),
    ("banker_pair", "u1"), ("dealt_at", "<i8"), ("source", "u1"), ("entry", "u1"),
    ("entered_by_bytes", "<u4"), ("spare", "u1", 2)])
assert RECORD.itemsize == 32
EMPTY_SLOT, NO_LIST, UNKNOWN = 255, 254, 2
NULL_TIME = np.iinfo(np.int64).min
NULL_TEXT = 0xFFFFFFFF


def _fill_slots(offsets: np.ndarray, flat: np.ndarray, null: np.ndarray, out: np.ndarray,
                at_byte: int) -> None:
    """Row ``i``'s cards (``flat[offsets[i]:offsets[i + 1]]``) into bytes ``at_byte ..
    at_byte + 3`` of record ``out[i]``, padded with EMPTY_SLOT; NO_LIST in all three for a
    null hand."""
    for i in range(null.shape[0]):
        cards = offsets[i + 1] - offsets[i]
        for j in range(3):
            if null[i]:
                out[i, at_byte + j] = NO_LIST
            elif j < cards:
                out[i, at_byte + j] = flat[offsets[i] + j]
            else:
                out[i, at_byte + j] = EMPTY_SLOT


@functools.cache
def _slot_kernel() -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], None]:
    """:func:`_fill_slots` compiled on first use (importing numba costs a reader that never
    digests a third of a second)."""
    import numba as nb
    return nb.njit(cache=True, nogil=True)(_fill_slots)


def prepare_kernels() -> None:
    """Compile (or load from the cache) the slot filler a digest of
    :data:`COMPILED_FROM` rows or more runs, so ``roads prepare`` leaves no large ingest,
    engine run, export or verify a compilation to pay inside its work.

    numba types a read-only array apart from a writable one: offsets and card codes taken
    straight from a stored file's Arrow buffers are read-only, an ingest's own are not, so
    every mix is compiled (before, the first large export compiled one inside its run)."""
    for offsets_writable, codes_writable in itertools.product((True, False), repeat=2):
        offsets, codes = np.zeros(2, np.int64), np.zeros(1, np.uint8)
        offsets.setflags(write=offsets_writable)
        codes.setflags(write=codes_writable)
        _slot_kernel()(offsets, codes, np.zeros(1, np.bool_),
                       np.zeros((1, RECORD.itemsize), np.uint8), 0)


def _offset(field: str) -> int:
    """Where ``field`` starts within a record."""
    return int(RECORD.fields[field][1])  # type: ignore[index]


def _put_slots(lists: pl.Series, null: np.ndarray, rec: np.ndarray, at_byte: int) -> None:
    """One side's card codes into the records, straight from the Arrow list's offsets and
    the Enum's codes (no polars pass, no strided copy)."""
    arrow = lists.to_arrow()
    codes = _integers(arrow.values.indices)
    fill = _slot_kernel() if _compiled(len(null)) else _fill_slots_numpy
    fill(_integers(arrow.offsets).astype(np.int64, copy=False),
         np.ascontiguousarray(codes, dtype=np.uint8), null,
         rec.view(np.uint8).reshape(len(rec), RECORD.itemsize), at_byte)


def _integers(array: Any) -> np.ndarray:
    """:func:`roads.arrow_arrays.integers`, loaded on first use (a reader that never
    digests does not load pyarrow for it)."""
    from roads.arrow_arrays import integers

    return integers(array)


#: Rows from which the compiled kernel fills the slots: below it, numpy does (a seal or a
#: verify of sealed shoes would otherwise load numba, ~1 s, for a few thousand rows).
COMPILED_FROM = 200_000
#: Rows from which it does once numba is loaded anyway (an ingest's check loads it): an
#: ingest's part of a day, ~40,000 coups, took 40 % less time than with numpy's passes.
COMPILED_ONCE_LOADED = 16_384


def _compiled(rows: int) -> bool:
    """Whether the compiled slot filler fills ``rows`` records (see :data:`COMPILED_FROM`)."""
    return rows >= COMPILED_FROM or (rows >= COMPILED_ONCE_LOADED and "numba" in sys.modules)


def _fill_slots_numpy(offsets: np.ndarray, flat: np.ndarray, null: np.ndarray,
                      out: np.ndarray, at_byte: int) -> None:
    """:func:`_fill_slots` in whole-array steps (the same bytes; tested equal)."""
    starts, counts = offsets[:-1], np.diff(offsets)
    last = max(len(flat) - 1, 0)
    for j in range(3):
        held = flat[np.minimum(starts + j, last)] if len(flat) else \
            np.zeros(len(starts), np.uint8)
        out[:, at_byte + j] = np.where(null, np.uint8(NO_LIST),
                                       np.where(counts > j, held, np.uint8(EMPTY_SLOT)))


_FLAGS = ("natural", "player_pair", "banker_pair")
_NUMERIC = frozenset(RECORD.names or ()) - {"player", "banker", "spare"}


def _fields(frame: pl.DataFrame) -> pl.DataFrame:
    """Every numeric field of the records with its null marker, each shoe run's start, the
    hands' null masks: one polars pass (each pass wakes polars' thread pool, which costs
    more than the work when writers digest side by side)."""
    return frame.select(
        "coup", pl.col("outcome").to_physical().cast(pl.UInt8),
        *(pl.col(f"{side}_total").fill_null(-1) for side in ("player", "banker")),
        *(pl.col(f).cast(pl.UInt8).fill_null(UNKNOWN) for f in _FLAGS),
        pl.col("dealt_at").dt.epoch("us").fill_null(NULL_TIME),
        *(pl.col(f).to_physical().cast(pl.UInt8).fill_null(255) for f in ("source", "entry")),
        pl.col("entered_by").str.len_bytes().fill_null(NULL_TEXT).alias("entered_by_bytes"),
        *(pl.col(f"{side}_cards").is_null().alias(f"{side}_null")
          for side in ("player", "banker")),
        shoe_start(frame).alias("shoe_start"))


def coup_records(frame: pl.DataFrame, fields: pl.DataFrame | None = None
                 ) -> tuple[np.ndarray, pl.Series]:
    """The fixed-width records of canonical coups (in the given order) and their
    ``entered_by`` texts."""
    fields = _fields(frame) if fields is None else fields
    rec = np.zeros(frame.height, dtype=RECORD)
    for name in fields.columns:
        if name in _NUMERIC:
            rec[name] = fields[name].to_numpy()
    for side in ("player", "banker"):
        _put_slots(frame[f"{side}_cards"], fields[f"{side}_null"].to_numpy(), rec,
                   _offset(side))
    return rec, frame["entered_by"]


def shoe_digests(coups: pl.DataFrame) -> pl.DataFrame:
    """``table_id, shoe_id, digest`` of every shoe of canonical coups (a shoe's coups in
    rising coup order; the shoes in the order they come)."""
    frame = conform(coups, "coups")
    if frame.is_empty():
        return pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String,
                                    "digest": pl.String})
    fields = _fields(frame)
    runs = fields["shoe_start"].to_numpy()
    starts = np.flatnonzero(runs)
    keys = frame.select(*SHOE_KEY)[starts]
    tables, shoes = keys["table_id"].to_list(), keys["shoe_id"].to_list()
    if len(set(zip(tables, shoes, strict=True))) < len(tables) \
            or not rising_within_shoes(fields["coup"].to_numpy(), runs):
        frame = frame.sort("table_id", "shoe_id", "coup", maintain_order=True)
        fields = _fields(frame)
        runs = fields["shoe_start"].to_numpy()
        starts = np.flatnonzero(runs)
        keys = frame.select(*SHOE_KEY)[starts]
        tables, shoes = keys["table_id"].to_list(), keys["shoe_id"].to_list()
    cuts = np.r_[starts, frame.height]
    digests: list[str] = []
    first = 0
    while first < len(starts):  # whole shoes of about DIGEST_ROWS rows at a time
        last = max(first + 1, int(np.searchsorted(cuts, cuts[first] + DIGEST_ROWS, "right")) - 1)
        last = min(last, len(starts))
        lo, hi = int(cuts[first]), int(cuts[last])
        digests += _digest_shoes(frame.slice(lo, hi - lo), fields.slice(lo, hi - lo),
                                 tables[first:last], shoes[first:last], cuts[first:last + 1] - lo)
        first = last
    return keys.with_columns(pl.Series("digest", digests, dtype=pl.String))


#: Rows whose records are built at a time (whole shoes): an engine batch of 600,000 coups
#: digested whole held 30 MB of records and texts on each writer thread. Not below
#: COMPILED_FROM, or the compiled slot filler would never run.
DIGEST_ROWS = 262_144


def _digest_shoes(frame: pl.DataFrame, fields: pl.DataFrame, tables: list[str],
                  shoes: list[str], cuts: np.ndarray) -> list[str]:
    """The digests of whole shoes whose rows ``cuts`` delimits (``frame`` holds them)."""
    rec, who = coup_records(frame, fields)
    text = who.fill_null("").str.join("").item().encode() if who.null_count() < len(who) \
        else b""
    lengths = fields["entered_by_bytes"].to_numpy().astype(np.int64)
    lengths[lengths == NULL_TEXT] = 0
    text_ends = np.r_[0, np.cumsum(lengths)][cuts].tolist()
    return record_digests(rec, cuts, tables, shoes, text, text_ends[:-1], text_ends[1:])


def record_digests(records: np.ndarray, cuts: np.ndarray, tables: list[str],
                   shoes: list[str], text: bytes, text_starts: list[int],
                   text_ends: list[int]) -> list[str]:
    """Shoe digests from their coups' fixed-width :data:`RECORD` s (shoe ``i``: records
    ``cuts[i]:cuts[i + 1]``) and ``entered_by`` texts (``text[text_starts[i]:
    text_ends[i]]``): what an engine batch, which holds its coups as numpy buffers, hashes
    without a polars pass.

    Each shoe's three pieces (its header, its records, its texts) are slices of three
    buffers, so a shoe costs three calls into hashlib and no Python bytes of its own."""
    raw = memoryview(records.view(np.uint8).data)
    texts = memoryview(text)
    head, head_ends = _joined([f"{t}\0{s}\0" for t, s in zip(tables, shoes, strict=True)])
    bounds = (np.asarray(cuts, dtype=np.int64) * RECORD.itemsize).tolist()
    sha = hashlib.sha256
    digests = []
    for i in range(len(tables)):
        h = sha(COUPS_TAG)
        h.update(head[head_ends[i]: head_ends[i + 1]])
        h.update(raw[bounds[i]: bounds[i + 1]])
        h.update(texts[text_starts[i]: text_ends[i]])
        digests.append(h.hexdigest())
    return digests


def _joined(texts: list[str]) -> tuple[memoryview, list[int]]:
    """``texts`` as one UTF-8 buffer and the byte offsets where each begins and ends (one
    encode for all of them, not one bytes object each)."""
    data = "".join(texts).encode()
    if data.isascii():  # the usual case: character offsets are byte offsets
        ends = np.r_[0, np.cumsum([len(t) for t in texts])]
    else:
        ends = np.r_[0, np.cumsum([len(t.encode()) for t in texts])]
    return memoryview(data), ends.tolist()


def leaf(table_id: str, shoe_id: str, digest: str) -> str:
    """One shoe's leaf of a table digest: the SHA-256 of ``table_id\tshoe_id\tdigest\n``
    (an export can show another table's shoe as its leaf alone)."""
    return hashlib.sha256(f"{table_id}\t{shoe_id}\t{digest}\n".encode()).hexdigest()


def combine_leaves(leaves: list[str]) -> str:
    """A table digest from its shoes' leaves in (table_id, shoe_id) order."""
    return hashlib.sha256(b"".join(bytes.fromhex(x) for x in leaves)).hexdigest()


def combine(shoes: pl.DataFrame) -> str:
    """The digest of a table from its shoes' digests (``shoe_digests`` rows, any order)."""
    ordered = shoes.sort("table_id", "shoe_id")
    lines = ordered.select(pl.concat_str("table_id", "shoe_id", "digest", separator="\t")
                           ).to_series().to_list()
    data, ends = _joined([f"{line}\n" for line in lines])
    sha = hashlib.sha256
    return sha(b"".join([sha(data[ends[i]: ends[i + 1]]).digest()
                         for i in range(len(lines))])).hexdigest()


def coups_digest(coups: pl.DataFrame) -> str:
    """The content digest of canonical coups."""
    return combine(shoe_digests(coups))


SHOES_TAG = b"roads-shoes-3\0"
NULL_FIELD = r"\N"


def _field(name: str, dtype: pl.DataType) -> pl.Expr:
    """One shoes column as its text in a shoe line (see the module docstring)."""
    col = pl.col(name)
    if isinstance(dtype, pl.List):
        text = col.cast(pl.List(pl.String)).list.join(",")
    elif isinstance(dtype, pl.Datetime):
        text = col.dt.epoch("us").cast(pl.String)
    elif isinstance(dtype, pl.String | pl.Enum):
        text = (col.cast(pl.String).str.replace_all("\\", "\\\\", literal=True)
                .str.replace_all("\t", "\\t", literal=True)
                .str.replace_all("\n", "\\n", literal=True))
    else:
        text = col.cast(pl.String)
    return text.fill_null(NULL_FIELD)


def shoes_digest(shoes: pl.DataFrame) -> str:
    """The content digest of canonical shoe rows: one text line per shoe, hashed once
    (a stable sort: equal keys keep their order, as a part's writer digests them)."""
    frame = conform(shoes, "shoes").sort("table_id", "shoe_id", maintain_order=True)
    return lines_digest(shoe_lines(frame))


def shoe_lines(shoes: pl.DataFrame) -> pl.Series:
    """Each canonical shoe row's line (see the module docstring), in the rows' order."""
    return shoes.select(pl.concat_str([_field(n, d) for n, d in shoes.schema.items()],
                                      separator="\t") + "\n").to_series()


def lines_digest(lines: pl.Series) -> str:
    """The content digest of shoe rows from their lines in (table_id, shoe_id) order."""
    if not lines.len():
        return hashlib.sha256(SHOES_TAG).hexdigest()
    return hashlib.sha256(SHOES_TAG + lines.str.join("").item().encode()).hexdigest()


def table_digest(frame: pl.DataFrame, table: str) -> str:
    return coups_digest(frame) if table == "coups" else shoes_digest(frame)

