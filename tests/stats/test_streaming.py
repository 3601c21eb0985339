"""The statistics and integrity checks of a store, file by file in bounded memory, against
the same report computed on the whole slice at once; the fixed-size window table against
a brute-force oracle of what it promises."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.analysis import statistics
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.stats.integrity import IntegrityScan, WindowTable
from roads.stats.report import report
from roads.store import Store
from tests.floor import Floor
from tests.stats import import_cards


def test_the_store_read_file_by_file_gives_the_whole_slice_report(tmp_path: Path) -> None:
    """Every figure, test, flag and finding of `roads stats` equals the report of all the
    store's coups at once: many files, a shoe imported in two pieces, a shoe dealt twice
    (three times, with the pieces), most of a shoe again, live shoes and corrections."""
    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=60, seed=78, tables=5,
                                batch_shoes=16), store)
    coups = store.read.coups()
    first = coups.filter(pl.col("shoe_id") == coups["shoe_id"][0]).sort("coup")
    for n, piece in enumerate((first.head(30), first.tail(first.height - 30))):
        import_cards(store, piece, "SPLIT", tmp_path / f"piece{n}.csv", "PIECES")
    import_cards(store, first, "COPY", tmp_path / "again.csv", "AGAIN")
    last = coups.filter(pl.col("shoe_id") == coups["shoe_id"][-1]).sort("coup")
    import_cards(store, last.head(last.height * 8 // 10), "COPY", tmp_path / "near.csv",
                 "MOSTLY")
    floor = Floor(store)
    floor.open_shoe("L1", "sealed")
    floor.coup("L1", player=("9h", "Kd"), banker=("5s", "2c"))
    floor.coup("L1", player=("Th", "Qc", "5d"), banker=("7s", "Kh"))
    floor.close("L1")
    floor.open_shoe("L2", "open-shoe")
    floor.coups("L2", "BBPT")
    floor.amend("SIM-01", first["shoe_id"][0], 1, CoupEntry(outcome="T", method="keypad"))
    floor.void("SIM-02", coups.filter(pl.col("table_id") == "SIM-02")["shoe_id"][0], 2)

    assert store.read.split_shoes() == {("SPLIT", "PIECES")}
    whole = report(store.read.coups(), store.read.shoes())
    streamed = statistics(store)
    assert streamed == whole  # floats, flags, findings and their order included
    repeats = [f["explanation"] for f in streamed["integrity"]
               if f["check"] == "repeated shoe"]
    assert len(repeats) == 4  # AGAIN, PIECES and the original pairwise; MOSTLY with its own
    assert sum("MOSTLY" in r for r in repeats) == 1
    assert streamed["statistics"]["coups"] == (coups.height + 2 * first.height
                                               + last.height * 8 // 10 + 2 + 4 - 1)


def test_an_overfull_window_table_still_finds_a_shoe_dealt_twice(tmp_path: Path) -> None:
    """Two buckets (16 fingerprints) for a store's worth of sketches: most are left out,
    the repeat is still reported, as the same card sequence."""
    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-6"), shoes=20, seed=4, tables=2), store)
    coups, shoes = store.read.coups(), store.read.shoes()
    again = coups.filter(pl.col("shoe_id") == coups["shoe_id"][0]).with_columns(
        pl.lit("AGAIN").alias("shoe_id"))
    scan = IntegrityScan(shoes, bucket_bits=1)
    scan.add(coups)
    scan.add(again)
    assert scan.windows.left_out > 0
    found = [f for f in scan.findings() if f["check"] == "repeated shoe"]
    assert len(found) == 1 and "the same card sequence" in found[0]["explanation"]


_POOL = [random.Random(7).getrandbits(64) for _ in range(48)]
sketches = st.lists(st.sets(st.sampled_from(_POOL), max_size=24), min_size=1, max_size=12)


def _table(shoes: list[set[int]], bits: int, order: list[int]) -> WindowTable:
    table = WindowTable(bits)
    for s in order:
        h = np.array(sorted(shoes[s]), dtype=np.uint64)
        table.add(h, np.full(len(h), s, dtype=np.uint32))
    return table


def _pairs(table: WindowTable, n: int) -> tuple[dict[tuple[int, int], int], list[int]]:
    pairs, kept = table.shared(n)
    return ({(a, b): c for a, b, c in pairs.iter_rows()}, kept.tolist())


@settings(max_examples=60, deadline=None)
@given(shoes=sketches, bits=st.sampled_from([1, 2, 12]), seed=st.integers(0, 1000))
def test_the_window_table_keeps_what_it_promises(shoes: list[set[int]], bits: int,
                                                  seed: int) -> None:
    """What is kept: in each bucket (the top ``bits`` of a fingerprint) its 8 smallest
    fingerprints; shared counts are exact over those, whatever order shoes come in."""
    order = list(range(len(shoes)))
    random.Random(seed).shuffle(order)
    table = _table(shoes, bits, order)
    pairs, kept = _pairs(table, len(shoes))
    assert (pairs, kept) == _pairs(_table(shoes, bits, sorted(order)), len(shoes))
    everything = set().union(*shoes)
    buckets: dict[int, list[int]] = {}
    for h in everything:
        buckets.setdefault(h >> (64 - bits), []).append(h)
    kept_set = {h for hs in buckets.values() for h in sorted(hs)[:8]}
    assert kept == [len(s & kept_set) for s in shoes]
    expected = {(a, b): len(shoes[a] & shoes[b] & kept_set)
                for a in range(len(shoes)) for b in range(a + 1, len(shoes))}
    assert pairs == {k: v for k, v in expected.items() if v}
    if all(len(hs) <= 8 for hs in buckets.values()):
        assert table.left_out == 0 and kept == [len(s) for s in shoes]


def test_a_file_read_in_pieces_gives_whole_shoes_and_the_same_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of a few row groups: every shoe whole in one piece, the pieces together the
    file; a file whose shoes are not runs of rows (rewritten shuffled) is read whole, and
    the report is the same either way."""
    from roads.store import read

    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=30, seed=12, tables=3), store)
    [path] = sorted((tmp_path / "store" / "coups").rglob("part-*.parquet"))
    whole = read.statistics_columns(path, cards=True)
    expected = statistics(store)
    for shuffled in (False, True):
        frame = pl.read_parquet(path)
        if shuffled:  # every shoe's rows spread over the file
            frame = frame.sample(fraction=1.0, shuffle=True, seed=1)
        pq.write_table(frame.to_arrow(), path, row_group_size=100)
        assert pq.ParquetFile(path).num_row_groups > 10
        pieces = list(read.statistics_pieces(path, cards=True, rows=250))
        assert len(pieces) > 5
        keys = [p.select("table_id", "shoe_id").unique() for p in pieces]
        if not shuffled:
            assert pl.concat(pieces).equals(whole)
            assert pl.concat(keys).height == whole.select("table_id", "shoe_id").n_unique()
        else:  # some shoe comes back in two pieces: the reader of the store notices
            assert pl.concat(keys).height > whole.select("table_id", "shoe_id").n_unique()
        monkeypatch.setattr(read, "PIECE_ROWS", 250)
        assert statistics(store) == expected
