"""The bulk path and the bulk kernel of full boards equal the per-shoe core on every shoe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.analysis import store_roads
from roads.board import DERIVED, Board
from roads.board import machine as m
from roads.board.bulk import SHOE_ROADS, shoe_roads, shoe_roads_arrow
from roads.engine import deal_batch, shoe_seeds
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.schema import COUPS, conform
from roads.simulate import Simulation, write_simulation
from roads.store import Store
from tests.conftest import fixture_json
from tests.floor import Floor


def expected_row(outcomes: str, conv: str) -> dict[str, Any]:
    board = Board.from_outcomes(outcomes, conv)  # type: ignore[arg-type]

    def letters(outcome: str) -> str:
        colours = board.ask(outcome).colors  # type: ignore[arg-type]
        return "".join("-" if colours[r] is None else colours[r][0].upper()  # type: ignore[index]
                       for r in DERIVED)

    return {
        "coups": len(outcomes),
        "ties": outcomes.count("T"),
        "leading_tie_count": board.pending_ties,
        "columns": len(board.column_lengths),
        "column_lengths": board.column_lengths,
        "entry_ties": [c.ties for c in board.big_road],
        **{road: board.mark_string(road) for road in DERIVED},
        "ask_banker": letters("B"),
        "ask_player": letters("P"),
        **{k: v for k, v in board.streaks().items() if k != "columns"},
    }


def frame_of(shoes: dict[str, str]) -> pl.DataFrame:
    rows = [{"table_id": "T1", "shoe_id": sid, "coup": i + 1, "outcome": o}
            for sid, outcomes in shoes.items() for i, o in enumerate(outcomes)]
    return conform(pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String,
                                              "coup": pl.Int32, "outcome": pl.String}), "coups")


def assert_equal_to_core(result: pl.DataFrame, shoes: dict[str, str], conv: str) -> None:
    assert dict(result.schema) == SHOE_ROADS
    assert result.height == len([s for s in shoes.values() if s])
    for row in result.iter_rows(named=True):
        want = expected_row(shoes[row["shoe_id"]], conv)
        got = {k: row[k] for k in want}
        assert got == want, row["shoe_id"]


EDGE = {
    "empty-ish": "B", "only-ties": "TTTT", "lead-ties": "TTBPTPBBTPB", "tail": "B" * 9 + "P" * 10,
    "skip": "BBBBBBBBPPPPPPPBBBBBPPPPBBBBBBPPBB", "alternating": "BP" * 40, "tie-last": "BBPT",
}


@pytest.mark.parametrize("conv", ["first-cell", "own-column"])
def test_fixture_and_edge_cases(conv: str) -> None:
    fixture = fixture_json("roads_live_platform.json")
    shoes = {s["table"]: s["outcomes"] for s in fixture["shoes"]} | EDGE
    assert_equal_to_core(shoe_roads(frame_of(shoes), conv), shoes, conv)  # type: ignore[arg-type]


@pytest.mark.parametrize("conv", ["first-cell", "own-column"])
def test_thousands_of_simulated_shoes(conv: str) -> None:
    batch = deal_batch(get_rules("standard-8"), shoe_seeds(77, 0, 2500))
    letters = "BPT"
    shoes: dict[str, str] = {}
    start = 0
    for k, n in enumerate(batch.coups_per_shoe.tolist()):
        shoes[f"s{k:05d}"] = "".join(letters[o] for o in batch.result[start:start + n, 2])
        start += n
    # Some shoes that open with ties, to exercise both conventions.
    shoes["s00000"] = "TT" + shoes["s00000"]
    shoes["s00001"] = "T" + shoes["s00001"]
    assert_equal_to_core(shoe_roads(frame_of(shoes), conv), shoes, conv)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="BBBPPPT", min_size=1, max_size=90), min_size=1, max_size=12),
       st.sampled_from(["first-cell", "own-column"]))
def test_vectorised_equals_per_shoe(batch: list[str], conv: str) -> None:
    shoes = {f"s{i:03d}": s for i, s in enumerate(batch)}
    assert_equal_to_core(shoe_roads(frame_of(shoes), conv), shoes, conv)  # type: ignore[arg-type]


def test_rows_in_any_order_and_arrow_form() -> None:
    shoes = {"a": "BBPPTPB", "b": "TPPBB", "c": "PBPBTT"}
    frame = frame_of(shoes).sample(fraction=1.0, shuffle=True, seed=3)
    assert_equal_to_core(shoe_roads(frame), shoes, "first-cell")
    arrow = shoe_roads_arrow(frame_of(shoes).to_arrow())
    assert arrow.num_rows == 3 and arrow.column("big_eye_boy").to_pylist() is not None


def test_store_roads_and_a_shoe_split_across_files(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    sim = Simulation(rules=get_rules("standard-6"), shoes=40, seed=5, tables=3, batch_shoes=16)
    write_simulation(sim, store)
    coups = store.read.coups()
    by_shoe = {k[0]: "".join(g.sort("coup")["outcome"].cast(pl.String))
               for k, g in coups.group_by("shoe_id")}
    result = store_roads(store)
    assert result.height == 40
    assert_equal_to_core(result, by_shoe, "first-cell")
    # A shoe imported in two parts: its two halves sit in different files.
    split = coups.filter(pl.col("shoe_id") == coups["shoe_id"][0]).sort("coup")
    half = split.height // 2
    for n, part in enumerate((split[:half], split[half:])):
        csv = tmp_path / f"half{n}.csv"
        part.select(pl.lit("SPLIT").alias("table"), "shoe_id", "coup",
                    pl.col("outcome").cast(pl.String)).write_csv(csv)
        ingest([csv], store, ReadOptions(), get_rules("standard-6"))
    result = store_roads(store)
    row = result.filter(pl.col("table_id") == "SPLIT")
    assert row.height == 1 and row["coups"][0] == split.height
    assert row["big_eye_boy"][0] == result.filter(
        pl.col("shoe_id") == split["shoe_id"][0])["big_eye_boy"][0]
    # Corrections reach the bulk roads too: a voided coup is gone from them.
    floor = Floor(store)
    floor.void("SPLIT", split["shoe_id"][0], 1)
    assert store_roads(store).filter(pl.col("table_id") == "SPLIT")["coups"][0] == \
        split.height - 1


def test_empty_inputs(tmp_path: Path) -> None:
    assert shoe_roads(pl.DataFrame(schema=COUPS)).is_empty()
    assert store_roads(Store.create(tmp_path)).is_empty()


@pytest.mark.parametrize("conv", ["first-cell", "own-column"])
def test_batch_of_full_boards_equals_the_per_shoe_board(conv: str) -> None:
    """``machine.build_batch`` (the benchmark's bulk kernel) draws what ``Board`` draws."""
    batch = deal_batch(get_rules("standard-6"), shoe_seeds(5, 0, 300))
    letters = "BPT"
    shoes, start = [], 0
    for n in batch.coups_per_shoe.tolist():
        shoes.append("".join(letters[o] for o in batch.result[start:start + n, 2]))
        start += n
    shoes += list(EDGE.values())
    codes = np.array(["BPT".index(ch) for ch in "".join(shoes)], dtype=np.int64)
    offsets = np.cumsum([0] + [len(s) for s in shoes]).astype(np.int64)
    entries = np.zeros((len(codes), m.ENTRY_FIELDS), dtype=np.int32)
    marks = np.zeros((3, len(codes), m.MARK_FIELDS), dtype=np.int32)
    asks = np.zeros((len(shoes), 2, 11), dtype=np.int64)
    counts = np.zeros((len(shoes), 5), dtype=np.int64)
    m.build_batch(codes, offsets, conv == "own-column", entries, marks, asks, counts)
    for s, shoe in enumerate(shoes):
        board = Board.from_outcomes(shoe, conv)  # type: ignore[arg-type]
        lo, (n_entries, *n_marks, columns) = offsets[s], counts[s].tolist()
        assert [(c.coup, c.col, c.row, c.column, c.depth, c.ties, "BPT".index(c.outcome))
                for c in board.big_road] == [tuple(e) for e in entries[lo:lo + n_entries].tolist()]
        for k, road in enumerate(DERIVED):
            assert [(mk.entry, mk.col, mk.row, ("red", "blue").index(mk.color))
                    for mk in board.marks(road)] == [
                tuple(x) for x in marks[k, lo:lo + n_marks[k]].tolist()]
        assert columns == len(board.column_lengths)
        for a, outcome in enumerate("BP"):
            ask = board.ask(outcome)  # type: ignore[arg-type]
            row = asks[s, a].tolist()
            assert tuple(row[:2]) == ask.big_road_cell
            for k, road in enumerate(DERIVED):
                colour, col, r = row[2 + 3 * k: 5 + 3 * k]
                assert (None if colour < 0 else ("red", "blue")[colour]) == ask.colors[road]
                assert (None if colour < 0 else (col, r)) == ask.cells[road]
