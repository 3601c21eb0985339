"""The roads core against ROADS.md: worked examples, the live-platform fixture, drawing
edge cases, every invariant as a property test, the JSON contract against the independent
reference (tests/naive_roads.py) and the live deltas."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.board import DERIVED, ROAD_NAMES, Board, CoupInfo, OutcomeError, apply_delta
from roads.errors import InputError
from tests.conftest import fixture_json
from tests.naive_roads import contract, outcome_coups

FIXTURE = fixture_json("roads_live_platform.json")


def marks(board: Board) -> tuple[str, str, str]:
    return tuple(board.mark_string(r) for r in DERIVED)  # type: ignore[return-value]


def ask_letters(board: Board, outcome: str) -> str:
    colours = board.ask(outcome).colors  # type: ignore[arg-type]
    return "".join("-" if colours[r] is None else colours[r][0].upper()  # type: ignore[index]
                   for r in DERIVED)


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ("BBPPPBPBB", ("RBBBRB", "BBB", "BR")),
        ("BPPPP", ("BRR", "", "")),  # the straight drop is red
        ("BBBBBBBPBP", ("BR", "B", "")),  # logical lengths, not the drawn tail
        ("TTBPTPBBTPB", ("BBRRB", "BBB", "R")),
    ],
)
def test_roads_md_examples(outcomes: str, expected: tuple[str, str, str]) -> None:
    assert marks(Board.from_outcomes(outcomes)) == expected


def test_roads_md_ties_and_own_column() -> None:
    board = Board.from_outcomes("TTBPTPBBTPB")
    cells = {(c.col, c.row): c.ties for c in board.big_road if c.ties}
    assert cells == {(0, 0): 2, (1, 0): 1, (2, 1): 1}
    own = Board.from_outcomes("TTBPTPBBTPB", "own-column")
    assert marks(own) == ("RBBRRB", "BBBBB", "BBR")
    first = own.big_road[0]
    assert (first.col, first.row, first.outcome, first.ties, first.tie_coups) == (0, 0, "T", 2,
                                                                                 (0, 1))


def test_nine_banker_then_ten_player() -> None:
    board = Board.from_outcomes("B" * 9 + "P" * 10)
    beb = board.marks("big_eye_boy")
    assert board.mark_string("big_eye_boy") == "RRRRRRRRB"
    # An 8-long red run with its own tail, then the blue in the next column.
    assert [(m.col, m.row) for m in beb] == [(0, r) for r in range(6)] + [(1, 5), (2, 5), (1, 0)]
    big = [(c.col, c.row) for c in board.big_road]
    assert big[:9] == [(0, r) for r in range(6)] + [(1, 5), (2, 5), (3, 5)]
    # The Player streak is blocked above the Banker tail and tails along row 4 (nested).
    assert big[9:] == [(1, r) for r in range(5)] + [(c, 4) for c in range(2, 7)]


@pytest.mark.parametrize("shoe", FIXTURE["shoes"], ids=lambda s: s["table"])
def test_live_platform_shoes(shoe: dict[str, Any]) -> None:
    board = Board.from_outcomes(shoe["outcomes"], shoe["leading_ties"])
    assert marks(board) == (shoe["big_eye_boy"], shoe["small_road"], shoe["cockroach_pig"])
    assert ask_letters(board, "B") == shoe["ask_if_banker"] * 3
    assert ask_letters(board, "P") == shoe["ask_if_player"] * 3
    if "first_cell" in shoe:
        other = Board.from_outcomes(shoe["outcomes"], "first-cell")
        expected = shoe["first_cell"]
        assert marks(other) == (expected["big_eye_boy"], expected["small_road"],
                                expected["cockroach_pig"])


def test_streak_of_seven_turns_into_a_dragon_tail() -> None:
    board = Board.from_outcomes("PBBBBBBBP")
    cells = [(c.col, c.row) for c in board.big_road]
    assert cells == [(0, 0), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (2, 5), (2, 0)]
    assert board.streaks() == {"longest_banker_run": 7, "longest_player_run": 1,
                               "columns": 3, "dragon_tails": 1}


def test_new_column_whose_top_cell_is_taken() -> None:
    board = Board.from_outcomes("BBBBBBBBPPPPPPPBBBBBPPPPBBBBBBPPBB")
    starts = [(c.col, c.row) for c in board.big_road if c.depth == 0]
    # The Player column of two tails along row 0 into column 6, so the last Banker column
    # cannot start at column 6 and skips right to column 7, then tails along row 0.
    assert starts[-2:] == [(5, 0), (7, 0)]
    assert [(c.col, c.row) for c in board.big_road][-4:] == [(5, 0), (6, 0), (7, 0), (8, 0)]


def test_shoe_of_only_ties() -> None:
    board = Board.from_outcomes("TTTT")
    assert board.big_road == [] and board.pending_ties == 4
    assert all(board.marks(r) == [] for r in DERIVED)
    assert len(board.bead_plate) == 4
    assert ask_letters(board, "B") == ask_letters(board, "P") == "---"
    own = Board.from_outcomes("TTTT", "own-column")
    assert [(c.col, c.row, c.outcome, c.ties) for c in own.big_road] == [(0, 0, "T", 4)]
    # Leading ties are counted on the first cell once it exists.
    later = Board.from_outcomes("TTTTB")
    assert [(c.outcome, c.ties, c.tie_coups) for c in later.big_road] == [("B", 4, (0, 1, 2, 3))]


def test_empty_shoe() -> None:
    board = Board.from_outcomes("")
    data = board.to_dict()
    assert data["bead_plate"] == data["big_road"] == data["big_eye_boy"] == []
    assert data["ask"]["banker"]["big_eye_boy"] is None
    assert data["ask"]["banker"]["cells"]["big_road"] == {"col": 0, "row": 0}


def test_json_contract_shape() -> None:
    data = Board.from_outcomes("BBPPPBPBB").to_dict()
    assert data["bead_plate"][0] == {"col": 0, "row": 0, "outcome": "B", "coup": 0,
                                     "player_pair": None, "banker_pair": None,
                                     "natural": None, "total": None}
    first = data["big_road"][0]
    assert {k: first[k] for k in ("col", "row", "outcome", "ties", "coup")} == {
        "col": 0, "row": 0, "outcome": "B", "ties": 0, "coup": 0}
    assert data["big_eye_boy"][0] == {"col": 0, "row": 0, "color": "red", "coup": 3, "entry": 3}
    assert set(data["ask"]) == {"banker", "player"}
    assert {k: data["ask"]["banker"][k] for k in DERIVED} == {
        "big_eye_boy": "red", "small_road": "red", "cockroach_pig": "red"}


def test_pairs_naturals_totals_ride_on_their_cells() -> None:
    board = Board()
    board.append(CoupInfo("T", player_pair=True, natural=False, player_total=5, banker_total=5))
    board.append(CoupInfo("B", banker_pair=True, natural=True, player_total=3, banker_total=9))
    assert board.bead_plate[0].info.player_pair and board.bead_plate[0].info.winning_total == 5
    cell = board.big_road[0]
    assert cell.coup == 1 and cell.info.banker_pair and cell.info.natural and cell.ties == 1
    assert board.to_dict()["bead_plate"][1]["total"] == 9


def test_invalid_outcomes_name_the_position() -> None:
    with pytest.raises(OutcomeError, match=r"invalid outcome 'X' at position 4"):
        Board.from_outcomes("BBPXP")
    assert Board.from_outcomes("bp t\n").counts()["coups"] == 3


# ---------------------------------------------------------------- properties (ROADS.md)
shoes = st.text(alphabet="BBBPPPT", max_size=110)


@settings(max_examples=200, deadline=None)
@given(shoes, st.sampled_from(["first-cell", "own-column"]))
def test_one_mark_per_entry_from_the_start_cell_on(outcomes: str, conv: str) -> None:
    board = Board.from_outcomes(outcomes, conv)  # type: ignore[arg-type]
    entries = board.big_road
    for k, road in enumerate(DERIVED, start=1):
        produced = [m.entry for m in board.marks(road)]
        starters = [i for i, e in enumerate(entries) if e.outcome != "T" and (
            (e.depth >= 1 and e.column >= k) or (e.depth == 0 and e.column >= k + 1))]
        assert produced == starters
        if starters:  # from the start cell on, every later B/P entry yields a mark
            assert starters == [i for i in range(starters[0], len(entries))]


@settings(max_examples=200, deadline=None)
@given(shoes, st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_ties_change_no_derived_road(outcomes: str, inserts: list[int]) -> None:
    stripped = outcomes.replace("T", "")
    with_ties = list(stripped)
    for pos in inserts:
        with_ties.insert(pos % (len(with_ties) + 1), "T")
    assert marks(Board.from_outcomes("".join(with_ties))) == marks(Board.from_outcomes(stripped))
    # Under own-column only leading ties matter: ties after the first B/P change nothing.
    lead = re.match(r"T*", outcomes).group(0)  # type: ignore[union-attr]
    rest = outcomes[len(lead):]
    assert marks(Board.from_outcomes(lead + rest, "own-column")) == marks(
        Board.from_outcomes(lead + rest[:1] + rest[1:].replace("T", ""), "own-column"))


@settings(max_examples=150, deadline=None)
@given(shoes, st.sampled_from(["first-cell", "own-column"]))
def test_prefix_stability_and_incremental_equals_full(outcomes: str, conv: str) -> None:
    live = Board(conv, capacity=4)  # type: ignore[arg-type]  # small: forces growth
    for i, ch in enumerate(outcomes):
        before = live.to_dict()
        live.append(ch)
        after = live.to_dict()
        for road in ("bead_plate", "big_road", *DERIVED):
            old = before[road]
            # Emitted cells never move; only the tie count of the newest cell may grow.
            assert [{**c, "ties": 0, "tie_coups": []} for c in after[road][: len(old)]] == [
                {**c, "ties": 0, "tie_coups": []} for c in old]
        if i % 7 == 0:
            assert after == Board.from_outcomes(outcomes[: i + 1], conv).to_dict()  # type: ignore[arg-type]
    assert live.to_dict() == Board.from_outcomes(outcomes, conv).to_dict()  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(shoes, st.sampled_from(["first-cell", "own-column"]))
def test_asks_are_opposite_and_predict_the_next_coup(outcomes: str, conv: str) -> None:
    board = Board.from_outcomes(outcomes, conv)  # type: ignore[arg-type]
    banker, player = board.ask("B"), board.ask("P")
    for road in DERIVED:
        b, p = banker.colors[road], player.colors[road]
        assert (b is None and p is None) or {b, p} == {"red", "blue"}
    for outcome, ask in (("B", banker), ("P", player)):
        after = Board.from_outcomes(outcomes + outcome, conv)  # type: ignore[arg-type]
        newest = after.big_road[-1]
        assert ask.big_road_cell == (newest.col, newest.row)
        for road in DERIVED:
            before_n, now = len(board.marks(road)), after.marks(road)
            if ask.colors[road] is None:
                assert len(now) == before_n
            else:
                assert len(now) == before_n + 1
                assert (now[-1].color, (now[-1].col, now[-1].row)) == (
                    ask.colors[road], ask.cells[road])


@settings(max_examples=200, deadline=None)
@given(shoes, st.sampled_from(["first-cell", "own-column"]))
def test_every_cell_used_at_most_once(outcomes: str, conv: str) -> None:
    board = Board.from_outcomes(outcomes, conv)  # type: ignore[arg-type]
    grids = {"bead_plate": [(c.col, c.row) for c in board.bead_plate],
             "big_road": [(c.col, c.row) for c in board.big_road]}
    grids.update({r: [(m.col, m.row) for m in board.marks(r)] for r in DERIVED})
    for cells in grids.values():
        assert len(cells) == len(set(cells))
        assert all(0 <= row < 6 and col >= 0 for col, row in cells)


# ---------------------------------------------------------------- the JSON contract
conventions = st.sampled_from(["first-cell", "own-column"])
flags = st.sampled_from([None, False, True])
totals = st.one_of(st.none(), st.integers(min_value=0, max_value=9))
coups = st.lists(st.tuples(st.sampled_from("BBBPPPT"), flags, flags, flags, totals, totals),
                 max_size=110)


def compact(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()


@settings(max_examples=300, deadline=None)
@given(shoes, conventions)
def test_contract_equals_the_reference(outcomes: str, conv: str) -> None:
    board = Board.from_outcomes(outcomes, conv)  # type: ignore[arg-type]
    expected = contract(outcome_coups(outcomes), conv)
    assert board.to_dict() == expected
    assert board.to_json() == compact(expected)  # same bytes, same key order


@settings(max_examples=200, deadline=None)
@given(coups, conventions)
def test_contract_with_pairs_naturals_and_totals(rows: list[Any], conv: str) -> None:
    expected = contract(rows, conv)
    live = Board(conv)  # type: ignore[arg-type]
    for row in rows:
        live.append(CoupInfo(*row))
    names = ("outcome", "player_pair", "banker_pair", "natural", "player_total",
             "banker_total")
    stored = Board.from_coups([dict(zip(names, row, strict=True)) for row in rows],
                              conv)  # type: ignore[arg-type]
    for board in (live, stored):
        assert board.to_dict() == expected
        assert board.to_json() == compact(expected)
    assert [c.info for c in live.bead_plate] == [CoupInfo(*row) for row in rows]


def test_contract_of_long_and_growing_boards() -> None:
    """Past the first capacity (the state grows), and numbers of several digits."""
    outcomes = ("BBBBBBBBBPPPT" * 40)[:500]
    small = Board(capacity=1)
    for ch in outcomes:
        small.append(ch)
    expected = contract(outcome_coups(outcomes))
    assert small.to_json() == compact(expected) == Board.from_outcomes(outcomes).to_json()


@pytest.mark.parametrize(("row", "field"), [
    ({"outcome": "B", "player_total": 10}, "player_total"),
    ({"outcome": "P", "banker_total": -1}, "banker_total"),
    ({"outcome": "P", "banker_total": True}, "banker_total"),
    ({"outcome": "X"}, "outcome"),
])
def test_bad_coup_fields_are_named(row: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError, match=field if field != "outcome" else "invalid outcome"):
        Board.from_coups([row])


# ---------------------------------------------------------------- live deltas
@settings(max_examples=150, deadline=None)
@given(coups, conventions)
def test_deltas_applied_coup_by_coup_rebuild_the_contract(rows: list[Any], conv: str) -> None:
    board = Board(conv, capacity=4)  # type: ignore[arg-type]  # small: forces growth
    screen = json.loads(board.to_json())
    for i, row in enumerate(rows):
        board.append(CoupInfo(*row))
        delta = json.loads(board.delta_json(i))
        assert (delta["since"], delta["coups"]) == (i, i + 1)
        # One coup changes at most one cell per road, wherever the shoe is.
        assert len(delta["bead_plate"]["cells"]) == 1
        assert len(delta["big_road"]["cells"]) <= 1
        assert all(len(delta[road]["cells"]) <= 1 for road in DERIVED)
        apply_delta(screen, delta)
        assert screen == board.to_dict()
    assert compact(screen) == board.to_json()


@settings(max_examples=150, deadline=None)
@given(shoes, conventions, st.data())
def test_a_delta_covers_every_coup_since(outcomes: str, conv: str, data: st.DataObject) -> None:
    """A screen that missed updates asks for the changes since the coups it has."""
    since = data.draw(st.integers(min_value=0, max_value=len(outcomes)))
    screen = Board.from_outcomes(outcomes[:since], conv).to_dict()  # type: ignore[arg-type]
    board = Board.from_outcomes(outcomes, conv)  # type: ignore[arg-type]
    assert apply_delta(screen, json.loads(board.delta_json(since))) == board.to_dict()


def test_delta_of_a_tie_replaces_the_newest_cell() -> None:
    board = Board.from_outcomes("BPP")
    board.append("T")
    delta = json.loads(board.delta_json(3))
    assert delta["big_road"]["from"] == 2
    assert [(c["ties"], c["tie_coups"]) for c in delta["big_road"]["cells"]] == [(1, [3])]
    assert all(delta[road]["cells"] == [] for road in DERIVED)
    assert set(delta) == {"since", "coups", *ROAD_NAMES, "ask", "pending_ties", "counts",
                          "streaks"}


def test_delta_since_must_be_on_the_board() -> None:
    board = Board.from_outcomes("BPB")
    for bad in (-1, 4, "2", True):
        with pytest.raises(InputError, match="since"):
            board.delta_json(bad)  # type: ignore[arg-type]
    screen = Board.from_outcomes("B").to_dict()
    with pytest.raises(InputError, match="since coup 2"):
        apply_delta(screen, json.loads(board.delta_json(2)))
