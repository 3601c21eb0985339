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
canonical JSON lines of the rows in (table_id, shoe_id) order.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import polars as pl

from roads.schema import SHOE_KEY, conform, grouped_by_shoe

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


def _slots(frame: pl.DataFrame, side: str) -> np.ndarray:
    col = pl.col(f"{side}_cards")
    slots = frame.select(
        col.list.get(i, null_on_oob=True).to_physical().fill_null(EMPTY_SLOT).cast(pl.UInt8)
        .alias(f"c{i}") for i in range(3)).to_numpy(writable=True)  # a view can be read-only
    slots[frame[f"{side}_cards"].is_null().to_numpy()] = NO_LIST
    return slots


def _flag(series: pl.Series) -> np.ndarray:
    return series.cast(pl.UInt8).fill_null(UNKNOWN).to_numpy()


def coup_records(frame: pl.DataFrame) -> tuple[np.ndarray, pl.Series]:
    """The fixed-width records of canonical coups (in the given order) and their
    ``entered_by`` texts."""
    n = frame.height
    rec = np.zeros(n, dtype=RECORD)
    rec["coup"] = frame["coup"].to_numpy()
    rec["outcome"] = frame["outcome"].to_physical().to_numpy()
    rec["player"] = _slots(frame, "player")
    rec["banker"] = _slots(frame, "banker")
    for side in ("player", "banker"):
        rec[f"{side}_total"] = frame[f"{side}_total"].fill_null(-1).to_numpy()
    for flag in ("natural", "player_pair", "banker_pair"):
        rec[flag] = _flag(frame[flag])
    rec["dealt_at"] = frame["dealt_at"].dt.epoch("us").fill_null(NULL_TIME).to_numpy()
    rec["source"] = frame["source"].to_physical().fill_null(255).to_numpy()
    rec["entry"] = frame["entry"].to_physical().fill_null(255).to_numpy()
    who = frame["entered_by"]
    rec["entered_by_bytes"] = who.str.len_bytes().fill_null(NULL_TEXT).to_numpy()
    return rec, who


def shoe_digests(coups: pl.DataFrame) -> pl.DataFrame:
    """``table_id, shoe_id, digest`` of every shoe of canonical coups (a shoe's coups in
    rising coup order; the shoes in the order they come)."""
    frame, runs = grouped_by_shoe(conform(coups, "coups"))
    if frame.is_empty():
        return pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String,
                                    "digest": pl.String})
    starts = np.flatnonzero(runs)
    bounds = np.r_[starts, frame.height]
    rec, who = coup_records(frame)
    raw = rec.tobytes()
    text = who.fill_null("").str.join("").item().encode() if who.null_count() < len(who) \
        else b""
    text_ends = np.r_[0, np.cumsum(who.str.len_bytes().fill_null(0).to_numpy())]
    keys = frame.select(*SHOE_KEY)[starts]
    digests = []
    for i, (table_id, shoe_id) in enumerate(keys.iter_rows()):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        h = hashlib.sha256(COUPS_TAG)
        h.update(f"{table_id}\0{shoe_id}\0".encode())
        h.update(raw[lo * RECORD.itemsize: hi * RECORD.itemsize])
        h.update(text[int(text_ends[lo]): int(text_ends[hi])])
        digests.append(h.hexdigest())
    return keys.with_columns(pl.Series("digest", digests, dtype=pl.String))


def leaf(table_id: str, shoe_id: str, digest: str) -> str:
    """One shoe's leaf of a table digest: the SHA-256 of ``table_id\tshoe_id\tdigest\n``
    (an export can show another table's shoe as its leaf alone)."""
    return hashlib.sha256(f"{table_id}\t{shoe_id}\t{digest}\n".encode()).hexdigest()


def combine_leaves(leaves: list[str]) -> str:
    """A table digest from its shoes' leaves in (table_id, shoe_id) order."""
    return hashlib.sha256(b"".join(bytes.fromhex(x) for x in leaves)).hexdigest()


def combine(shoes: pl.DataFrame) -> str:
    """The digest of a table from its shoes' digests (``shoe_digests`` rows, any order)."""
    return combine_leaves([leaf(t, s, d) for t, s, d in
                           shoes.sort("table_id", "shoe_id").iter_rows()])


def coups_digest(coups: pl.DataFrame) -> str:
    """The content digest of canonical coups."""
    return combine(shoe_digests(coups))


def _json_value(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def shoes_digest(shoes: pl.DataFrame) -> str:
    """The content digest of canonical shoe rows."""
    frame = conform(shoes, "shoes").sort("table_id", "shoe_id")
    h = hashlib.sha256(b"roads-shoes-2\0")
    for row in frame.with_columns(pl.col("source").cast(pl.String)).iter_rows(named=True):
        h.update(json.dumps({k: _json_value(v) for k, v in row.items()}, sort_keys=True,
                            separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


def table_digest(frame: pl.DataFrame, table: str) -> str:
    return coups_digest(frame) if table == "coups" else shoes_digest(frame)

