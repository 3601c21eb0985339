"""The one-pass statistics and checks of a store's files (arrays straight from the Arrow
buffers) against the whole-slice report (polars frames and the original kernels' callers),
on files a surveillance team would worry about: broken rules, missing values, a card
dealt too often, coups without cards or without times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.analysis import statistics
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.stats.columns import NotInRuns, ShoeColumns, columns_of
from roads.stats.report import report
from roads.store import Store, statistics_columns
from roads.store.buffers import part_columns


def _store(tmp_path: Path, shoes: int = 24) -> tuple[Store, Path]:
    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=shoes, seed=5, tables=3), store)
    [path] = sorted((tmp_path / "store" / "coups").rglob("part-*.parquet"))
    return store, path


def _rewrite(path: Path, frame: pl.DataFrame, row_group_size: int = 300) -> None:
    """The file rewritten in place (small row groups: shoes cut across groups, and each
    group's dictionaries its own)."""
    pq.write_table(frame.to_arrow(), path, row_group_size=row_group_size)


def _nth_shoe(frame: pl.DataFrame, n: int) -> pl.Expr:
    key = frame.select("table_id", "shoe_id").unique(maintain_order=True).row(n)
    same: pl.Expr = (pl.col("table_id") == key[0]) & (pl.col("shoe_id") == key[1])
    return same


def _tampered(frame: pl.DataFrame) -> pl.DataFrame:
    """Every kind of finding, and every kind of missing value, somewhere in the file."""
    row = pl.int_range(pl.len())
    return frame.with_columns(
        # a wrong total, a flipped natural flag and pair flag, a wrong outcome
        pl.when(row == 5).then((pl.col("player_total") + 1) % 10)
        .otherwise(pl.col("player_total")).alias("player_total"),
        pl.when(row == 9).then(~pl.col("natural")).otherwise(pl.col("natural")).alias("natural"),
        pl.when(row.is_in([11, 12])).then(~pl.col("banker_pair"))
        .otherwise(pl.col("banker_pair")).alias("banker_pair"),
        pl.when(row == 14).then(pl.lit("T")).otherwise(pl.col("outcome").cast(pl.String))
        .cast(frame.schema["outcome"]).alias("outcome"),
        # unknown values: a total, a pair flag, a time
        pl.when(row == 20).then(None).otherwise(pl.col("banker_total")).alias("banker_total"),
        pl.when(row == 21).then(None).otherwise(pl.col("player_pair")).alias("player_pair"),
        pl.when(row == 22).then(None).otherwise(pl.col("dealt_at")).alias("dealt_at"),
    ).with_columns(
        # a coup known only by its outcome, inside a card-level shoe
        pl.when(row == 30).then(None).otherwise(pl.col("player_cards")).alias("player_cards"),
        pl.when(row == 30).then(None).otherwise(pl.col("banker_cards")).alias("banker_cards"),
    ).with_columns(
        # the same two Player cards all through one shoe, two Banker kings in another
        pl.when(_nth_shoe(frame, 2))
        .then(pl.concat_list(pl.lit("As"), pl.lit("Ad"))
              .cast(frame.schema["player_cards"]))
        .otherwise(pl.col("player_cards")).alias("player_cards"),
    ).with_columns(
        pl.when(_nth_shoe(frame, 3) & (pl.col("coup") <= 12))
        .then(pl.concat_list(pl.lit("Kd"), pl.lit("Kd")).cast(frame.schema["banker_cards"]))
        .otherwise(pl.col("banker_cards")).alias("banker_cards"))


def test_a_tampered_file_gives_the_whole_slice_report(tmp_path: Path) -> None:
    """Every figure and every finding, in order, as the whole slice computed at once."""
    store, path = _store(tmp_path)
    _rewrite(path, _tampered(pl.read_parquet(path)))
    whole = report(store.read.coups(), store.read.shoes())
    streamed = statistics(store)
    assert streamed == whole
    checks = {f["check"] for f in streamed["integrity"]}
    assert {"totals", "flags", "outcome", "inventory", "tableau"} <= checks
    assert streamed["statistics"]["pace"]["coups_per_hour"] is None  # a coup has no time


def test_no_time_missing_gives_the_pace(tmp_path: Path) -> None:
    store, _ = _store(tmp_path, shoes=6)
    streamed = statistics(store)
    assert streamed == report(store.read.coups(), store.read.shoes())
    assert streamed["statistics"]["pace"]["coups_per_hour"] > 0


def _same(a: ShoeColumns, b: ShoeColumns) -> None:
    assert a.keys.equals(b.keys)
    assert a.timed == b.timed
    for name in ("offsets", "coup", "outcome", "player_total", "banker_total", "natural",
                 "player_pair", "banker_pair", "cards", "player", "banker"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    if a.timed:  # (where a time is unknown the arrays hold any value)
        assert np.array_equal(a.dealt_at, b.dealt_at)


@pytest.mark.parametrize(("rows", "group"), [(1, 300), (700, 300), (100_000, 300),
                                             (1, 25), (100_000, 25)])
def test_the_arrow_columns_equal_the_frame_s(tmp_path: Path, rows: int, group: int) -> None:
    """Straight from the buffers (nulls, bitmaps, per-group dictionaries, shoes cut across
    row groups and pieces, a shoe over three or more row groups) as through a polars
    frame; pieces hold whole shoes."""
    _, path = _store(tmp_path)
    _rewrite(path, _tampered(pl.read_parquet(path)).with_columns(
        pl.when(pl.int_range(pl.len()) == 40).then(None).otherwise(pl.col("natural"))
        .alias("natural")), row_group_size=group)
    pieces = list(part_columns(path, rows))
    assert len(pieces) > 1 if rows < 100_000 else len(pieces) == 1
    keys = pl.concat([p.keys for p in pieces])
    assert not keys.is_duplicated().any()
    whole = columns_of(statistics_columns(path, cards=True))
    lengths = np.concatenate([np.diff(p.offsets) for p in pieces])
    joined = ShoeColumns(
        keys=keys, offsets=np.r_[0, np.cumsum(lengths)],
        **{name: np.concatenate([getattr(p, name) for p in pieces]) for name in (
            "coup", "outcome", "player_total", "banker_total", "natural", "player_pair",
            "banker_pair", "cards", "player", "banker", "dealt_at")},
        timed=all(p.timed for p in pieces))
    _same(joined, whole)
    assert not whole.timed and (whole.cards == -1).sum() == 1


def test_a_file_not_in_runs_is_noticed_and_read_another_way(tmp_path: Path) -> None:
    """Shoes spread over the file, coups out of order in a shoe, or a shoe's last coups at
    the end of the file (each run in rising order, the shoe in two runs of one piece): the
    arrays say so before a piece is handed on, and the store's statistics and integrity
    checks read the file through a frame, with the same report."""
    store, path = _store(tmp_path)
    frame = pl.read_parquet(path)
    expected = statistics(store)
    tail = frame.filter(_nth_shoe(frame, 0)).tail(5)
    for bad in (frame.sample(fraction=1.0, shuffle=True, seed=3),
                frame.sort("table_id", "shoe_id", pl.col("coup") % 7),
                pl.concat([frame.join(tail, on=["table_id", "shoe_id", "coup"], how="anti"),
                           tail])):
        _rewrite(path, bad)
        with pytest.raises(NotInRuns):
            list(part_columns(path, 500))
        assert statistics(store) == expected


def _fingerprint(window: int) -> int:
    """MurmurHash3's finaliser in Python integers (the oracle of the kernel's ``_mix``)."""
    mask = (1 << 64) - 1
    window ^= window >> 33
    window = (window * 0xFF51AFD7ED558CCD) & mask
    window ^= window >> 33
    window = (window * 0xC4CEB9FE1A85EC53) & mask
    return window ^ (window >> 33)


@settings(max_examples=40, deadline=None)
@given(shoes=st.lists(st.lists(st.integers(0, 51), min_size=0, max_size=400), min_size=1,
                      max_size=4))
def test_a_shoe_s_sketch_is_its_smallest_distinct_sampled_windows(shoes: list[list[int]]
                                                                   ) -> None:
    """The shoe pass keeps, per shoe, the SKETCH smallest distinct fingerprints of its
    8-card windows whose fingerprint is a multiple of 8, ascending: against Python."""
    from roads.stats.integrity import SKETCH, _shoe_pass

    coups = [[cards[i:i + 4] for i in range(0, len(cards) - 3, 4)] for cards in shoes]
    rows = [c for shoe in coups for c in shoe]
    p = np.full((len(rows), 3), 255, dtype=np.uint8)
    b = np.full((len(rows), 3), 255, dtype=np.uint8)
    for r, (p1, b1, p2, b2) in enumerate(rows):  # dealt P, B, P, B
        p[r, :2], b[r, :2] = (p1, p2), (b1, b2)
    offsets = np.r_[0, np.cumsum([len(c) for c in coups])].astype(np.int64)
    n = len(coups)
    none = np.full(n, -1, dtype=np.int64)
    sketch = np.zeros((n, SKETCH), dtype=np.uint64)
    size = np.zeros(n, dtype=np.int64)
    _shoe_pass(p, b, offsets, np.full(n, 8, dtype=np.int64), none + 1, none, none,
               np.zeros((n, 2), dtype=np.int64), np.zeros((n, 2), dtype=np.int64),
               np.zeros(n, dtype=np.int64), sketch, size)
    for s, shoe in enumerate(coups):
        seq = [card for c in shoe for card in c]
        windows = {_fingerprint(int("".join(f"{c:06b}" for c in seq[t - 7:t + 1]), 2))
                   for t in range(7, len(seq))}
        expected = sorted(h for h in windows if h % 8 == 0)[:SKETCH]
        assert sketch[s, :size[s]].tolist() == expected
