"""The content digest against an independent implementation of its written definition
(docs/store.md, "Content digests"): plain Python, one coup at a time, struct-packed."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.cards import CARD_CODES
from roads.rules import get_rules
from roads.schema import ENTRY_METHODS, SOURCES, conform
from roads.simulate import Simulation, write_simulation
from roads.store import Store, digest
from roads.store.digest import coups_digest, shoe_digests, shoes_digest


def _card_bytes(hand: list[str] | None) -> bytes:
    if hand is None:
        return bytes([254, 254, 254])
    codes = [CARD_CODES.index(c) for c in hand] + [255] * (3 - len(hand))
    return bytes(codes)


def _flag(value: bool | None) -> int:
    return 2 if value is None else int(value)


def _record(row: dict[str, Any]) -> bytes:
    who = row["entered_by"]
    dealt = row["dealt_at"]
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    micros = -(2**63) if dealt is None else (dealt - epoch) // timedelta(microseconds=1)
    return (struct.pack("<iB", row["coup"], "BPT".index(row["outcome"]))
            + _card_bytes(row["player_cards"]) + _card_bytes(row["banker_cards"])
            + struct.pack("<bbBBBqBBI", -1 if row["player_total"] is None
                          else row["player_total"],
                          -1 if row["banker_total"] is None else row["banker_total"],
                          _flag(row["natural"]), _flag(row["player_pair"]),
                          _flag(row["banker_pair"]), micros, SOURCES.index(row["source"]),
                          ENTRY_METHODS.index(row["entry"]),
                          0xFFFFFFFF if who is None else len(who.encode()))
            + b"\0\0")


def reference(rows: list[dict[str, Any]]) -> tuple[dict[tuple[str, str], str], str]:
    """Per-shoe digests and the table digest, exactly as docs/store.md words them."""
    shoes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        shoes.setdefault((row["table_id"], row["shoe_id"]), []).append(row)
    digests = {}
    for (table, shoe), coups in shoes.items():
        coups.sort(key=lambda r: r["coup"])
        h = hashlib.sha256(b"roads-coups-2\0" + table.encode() + b"\0" + shoe.encode() + b"\0")
        for r in coups:
            h.update(_record(r))
        for r in coups:
            h.update((r["entered_by"] or "").encode())
        digests[(table, shoe)] = h.hexdigest()
    leaves = b"".join(hashlib.sha256(f"{t}\t{s}\t{d}\n".encode()).digest()
                      for (t, s), d in sorted(digests.items(),
                                              key=lambda kv: (kv[0][0].encode(),
                                                              kv[0][1].encode())))
    return digests, hashlib.sha256(leaves).hexdigest()


HANDS = [(["9h", "Kd"], ["5s", "2c"]), (["2h", "3d", "4c"], ["9c", "Kd"]), (None, None)]
coup = st.fixed_dictionaries({
    "table_id": st.sampled_from(["T1", "T2", "桌3"]),
    "shoe_id": st.sampled_from(["S1", "S2", "Шуз-1"]),
    "outcome": st.sampled_from("BPT"),
    "hands": st.sampled_from(HANDS),
    "player_total": st.one_of(st.none(), st.integers(0, 9)),
    "banker_total": st.one_of(st.none(), st.integers(0, 9)),
    "natural": st.one_of(st.none(), st.booleans()),
    "player_pair": st.one_of(st.none(), st.booleans()),
    "banker_pair": st.one_of(st.none(), st.booleans()),
    "dealt_at": st.one_of(st.none(), st.datetimes(min_value=datetime(2000, 1, 1),
                                                   max_value=datetime(2100, 1, 1))
                          .map(lambda d: d.replace(tzinfo=UTC))),
    "source": st.sampled_from(SOURCES),
    "entry": st.sampled_from(ENTRY_METHODS),
    "entered_by": st.one_of(st.none(), st.text(max_size=12)),
})


def _frame(draws: list[dict[str, Any]]) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    numbers: dict[tuple[str, str], int] = {}
    for d in draws:
        key = (d["table_id"], d["shoe_id"])
        numbers[key] = numbers.get(key, 0) + 1
        p, b = d.pop("hands")
        rows.append({**d, "coup": numbers[key], "player_cards": p, "banker_cards": b})
    frame = conform(pl.DataFrame(rows, schema_overrides={
        "player_cards": pl.List(pl.String), "banker_cards": pl.List(pl.String),
        "dealt_at": pl.Datetime("us", "UTC")}, infer_schema_length=None), "coups")
    return frame, rows


@settings(max_examples=150, deadline=None)
@given(st.lists(coup, min_size=1, max_size=40))
def test_the_digest_is_what_its_definition_says(draws: list[dict[str, Any]]) -> None:
    frame, rows = _frame(draws)
    shoes, table = reference(rows)
    ours = {(t, s): d for t, s, d in shoe_digests(frame.sample(fraction=1.0, shuffle=True,
                                                               seed=1)).iter_rows()}
    assert ours == shoes
    assert coups_digest(frame) == table


def _shoe_field(value: Any) -> str:
    """One field of a shoe line, as docs/store.md words it."""
    if value is None:
        return "\\N"
    if isinstance(value, datetime):
        return str((value - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1))
    if isinstance(value, list):
        return ",".join(value)
    if isinstance(value, str):
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return str(value)


SHOE_COLUMNS = ["table_id", "shoe_id", "rules", "decks", "burn_cards", "cut_card_index",
                "coups", "cards_dealt", "started_at", "ended_at", "seed", "source"]
text = st.text(alphabet=st.sampled_from("aZ9-\\\t\n桌"), min_size=1, max_size=6)
times = st.one_of(st.none(), st.datetimes(min_value=datetime(1960, 1, 1),
                                          max_value=datetime(2100, 1, 1))
                  .map(lambda d: d.replace(tzinfo=UTC)))
shoe_row = st.fixed_dictionaries({
    "table_id": text, "shoe_id": text, "rules": st.one_of(st.none(), text),
    "decks": st.one_of(st.none(), st.integers(1, 8)),
    "burn_cards": st.one_of(st.none(), st.lists(st.sampled_from(CARD_CODES), max_size=10)),
    "cut_card_index": st.one_of(st.none(), st.integers(-5, 416)),
    "coups": st.one_of(st.none(), st.integers(0, 104)),
    "cards_dealt": st.one_of(st.none(), st.integers(0, 416)),
    "started_at": times, "ended_at": times,
    "seed": st.one_of(st.none(), st.integers(0, 2**64 - 1)),
    "source": st.sampled_from(SOURCES),
})


@settings(max_examples=150, deadline=None)
@given(st.lists(shoe_row, max_size=12, unique_by=lambda r: (r["table_id"], r["shoe_id"])))
def test_the_shoes_digest_is_what_its_definition_says(rows: list[dict[str, Any]]) -> None:
    ordered = sorted(rows, key=lambda r: (r["table_id"].encode(), r["shoe_id"].encode()))
    lines = "".join("\t".join(_shoe_field(r[c]) for c in SHOE_COLUMNS) + "\n" for r in ordered)
    expected = hashlib.sha256(b"roads-shoes-3\0" + lines.encode()).hexdigest()
    frame = conform(pl.DataFrame(rows, schema_overrides={
        "burn_cards": pl.List(pl.String), "started_at": pl.Datetime("us", "UTC"),
        "ended_at": pl.Datetime("us", "UTC"), "seed": pl.UInt64}, infer_schema_length=None)
        if rows else pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String}),
        "shoes")
    assert shoes_digest(frame.reverse()) == expected


def test_shoe_rows_of_one_key_digest_in_the_order_they_come() -> None:
    """Two rows of one shoe (which no writer makes, but a file could hold) are digested in
    the order the rows come, as a part's writer digests them: the digest of a file does
    not depend on how a sort breaks ties (polars' default sort reorders equal keys once
    there are about a thousand rows)."""
    rng = np.random.default_rng(7)
    rows: list[dict[str, Any]] = [
        {"table_id": f"T{i % 7}", "shoe_id": f"S{int(rng.integers(0, 300))}", "coups": i,
         "source": "import"} for i in range(3000)]
    ordered = sorted(rows, key=lambda r: (r["table_id"].encode(), r["shoe_id"].encode()))
    frame = conform(pl.DataFrame(rows), "shoes")
    lines = "".join("\t".join(_shoe_field(r.get(c)) for c in SHOE_COLUMNS) + "\n"
                    for r in ordered)
    expected = hashlib.sha256(b"roads-shoes-3\0" + lines.encode()).hexdigest()
    assert shoes_digest(frame) == expected


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.integers(0, 51), max_size=3)), max_size=40))
def test_the_compiled_and_the_numpy_slot_fillers_write_the_same_bytes(
        hands: list[list[int] | None]) -> None:
    """Large frames fill card slots with the compiled kernel, small ones with numpy."""
    from roads.store.digest import _fill_slots_numpy, _slot_kernel

    lengths = [0 if h is None else len(h) for h in hands]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = np.array([c for h in hands if h for c in h], dtype=np.uint8)
    null = np.array([h is None for h in hands], dtype=bool)
    compiled, vectorised = (np.full((len(hands), 8), 7, np.uint8) for _ in range(2))
    _slot_kernel()(offsets, flat, null, compiled, 2)
    _fill_slots_numpy(offsets, flat, null, vectorised, 2)
    assert np.array_equal(compiled, vectorised)


@settings(max_examples=60, deadline=None)
@given(st.lists(coup, min_size=1, max_size=40), st.integers(1, 12))
def test_shoes_digested_a_slice_at_a_time_get_the_same_digests(
        draws: list[dict[str, Any]], rows_at_a_time: int) -> None:
    """A large frame's records are built for whole shoes of about DIGEST_ROWS rows at a
    time: the digests must be the definition's whatever the slice size."""
    frame, rows = _frame(draws)
    shoes, _ = reference(rows)
    ordered = frame.sort("table_id", "shoe_id", "coup")
    with patch.object(digest, "DIGEST_ROWS", rows_at_a_time):
        for one in (ordered, frame):
            got = {(t, s): d for t, s, d in shoe_digests(one).iter_rows()}
            assert got == shoes


PREPARED_THEN_STORED = """
import sys
from pathlib import Path
from roads.store import digest
from roads.store.read import _batches
import polars as pl, pyarrow.parquet as pq
digest.prepare_kernels()
prepared = set(digest._slot_kernel().signatures)
digest.COMPILED_FROM = 0  # the compiled filler even for this small file
for batch in _batches(pq.ParquetFile(sys.argv[1]), 1000):
    digest.shoe_digests(pl.from_arrow(batch))
print(sorted(map(str, set(digest._slot_kernel().signatures) - prepared)))
"""


def test_roads_prepare_compiles_what_a_stored_files_digest_runs(tmp_path: Path) -> None:
    """A file read back from the store hands the slot filler read-only Arrow buffers, which
    numba compiles apart from writable arrays: ``roads prepare`` must have compiled that
    variant too, or the first large export or verify compiles inside its run."""
    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=2, seed=3, tables=1), store)
    part = next((store.root / "coups").rglob("*.parquet"))
    run = subprocess.run([sys.executable, "-c", PREPARED_THEN_STORED, str(part)],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "ROADS_CACHE_DIR": str(tmp_path / "cache")})
    assert run.stdout.strip() == "[]", run.stdout
