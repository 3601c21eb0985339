"""The incremental read model of live tables against the full rebuild from the journal.

:func:`roads.tables.state.table_state` (every event of the table read again, the open shoe's
coups converted and corrected through polars) is the oracle: after any mix of operations on
several tables, the model's state of each table equals it, whether the model followed
every event, was built in the middle, or fell behind by more than its backlog.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.board import Board
from roads.engine import deal_shoe
from roads.errors import InputError
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.tables import state as live_state
from roads.tables.state import LiveTables, table_state
from tests.floor import DEALER, SUPERVISOR, Floor

TABLES = ("T1", "T2")
RULES = get_rules("standard-8")

_COUP = st.tuples(st.just("coup"), st.sampled_from(TABLES), st.sampled_from("BPT"),
                  st.booleans())
_REQUEST = st.tuples(st.just("request"), st.sampled_from(TABLES), st.integers(1, 6),
                     st.sampled_from(["void", "B", "P", "T"]))
_DECIDE = st.tuples(st.just("decide"), st.integers(0, 5), st.booleans())
#: Mostly coups and corrections (what changes an open board), now and then a shoe or the
#: table closing and a new shoe opening.
_OPS = st.one_of(
    *[_COUP] * 6, *[_REQUEST] * 3, *[_DECIDE] * 3,
    *[st.tuples(st.just("cards"), st.sampled_from(TABLES), st.integers(0, 2**32))] * 2,
    st.tuples(st.just("open"), st.sampled_from(TABLES)),
    st.tuples(st.just("close"), st.sampled_from(TABLES)),
    st.tuples(st.just("close_table"), st.sampled_from(TABLES)),
)


class _Dealing:
    """Drives the floor; refused operations (no open shoe, no such coup) are part of the mix."""

    def __init__(self, floor: Floor) -> None:
        self.floor, self.shoes, self.requests = floor, 0, []  # type: ignore[var-annotated]

    def do(self, op: tuple[object, ...]) -> None:
        floor, service = self.floor, self.floor.service
        kind, *args = op
        try:
            if kind == "coup":
                table, outcome, natural = args
                floor.coup(str(table), str(outcome), natural=bool(natural))
            elif kind == "cards":
                table, seed = args
                shoe = deal_shoe(RULES, int(str(seed)))
                player, banker = shoe.coups[0]
                floor.coup(str(table), player=tuple(player), banker=tuple(banker))
            elif kind == "open":
                self.shoes += 1
                floor.open_shoe(str(args[0]), f"S{self.shoes}")
            elif kind == "close":
                floor.close(str(args[0]))
            elif kind == "close_table":
                service.close_table(DEALER, str(args[0]))
            elif kind == "request":
                table, pick, what = args
                now = service.table_state(str(table))
                coup = 1 + int(str(pick)) % max(1, len(now.coups))  # mostly a coup it has
                amended = None if what == "void" else CoupEntry(outcome=str(what),
                                                                  method="keypad")
                self.requests.append(service.request_correction(
                    DEALER, str(table), now.shoe_id or "S0", coup, "review", amended).seq)
            elif kind == "decide" and self.requests:
                pick, approve = args
                request = self.requests[-1 - int(str(pick)) % len(self.requests)]
                service.decide_correction(SUPERVISOR, request, bool(approve))
        except InputError:
            pass


def _assert_same(model: LiveTables, floor: Floor, table: str) -> None:
    kept = model.table(table)
    assert kept.state == table_state(floor.service.journal, table)
    if kept.state.status == "open":
        assert kept.board is not None
        assert kept.board.to_dict() == Board.from_coups(kept.state.coups).to_dict()
    else:
        assert kept.board is None


@settings(max_examples=30, deadline=None)
@given(st.lists(_OPS, min_size=20, max_size=60), st.integers(0, 40))
def test_the_model_equals_the_rebuild_after_every_operation(
        ops: list[tuple[object, ...]], late: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        floor = Floor(Path(tmp))
        dealing = _Dealing(floor)
        for table in TABLES:
            dealing.do(("open", table))
        following = LiveTables(floor.service.journal)
        joined: LiveTables | None = None
        for i, op in enumerate(ops):
            dealing.do(op)
            if i == late:  # a model that starts in the middle (a server started mid-shoe)
                joined = LiveTables(floor.service.journal)
            for table in TABLES:
                _assert_same(following, floor, table)
                if joined is not None:
                    _assert_same(joined, floor, table)


def test_a_live_coup_is_the_record_the_store_makes_of_it(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    floor.open_shoe("T1", "S1")
    shoe = deal_shoe(RULES, 5)
    for player, banker in shoe.coups[:3]:
        floor.coup("T1", player=tuple(player), banker=tuple(banker))
    floor.coup("T1", "T", player_pair=True)
    events = [e for e in floor.service.journal.events("T1") if e.kind == "coup_entered"]
    through_polars = table_state(floor.service.journal, "T1").coups
    direct = [live_state.live_coup(e) for e in events]
    assert direct == through_polars
    assert [list(c) for c in direct] == [list(c) for c in through_polars]  # key order too
    assert [repr(c["dealt_at"]) for c in direct] == [repr(c["dealt_at"]) for c in through_polars]


def test_a_coup_extends_the_board_and_a_correction_rebuilds_that_shoe_only(
        tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    model = LiveTables(floor.service.journal)
    for table in TABLES:
        floor.open_shoe(table, f"S-{table}")
        floor.coups(table, "BPB")
    boards = {t: model.table(t).board for t in TABLES}
    floor.coup("T1", "P")
    assert model.table("T1").board is boards["T1"] and len(boards["T1"] or ()) == 4
    floor.void("T1", "S-T1", 2)
    assert model.table("T1").board is not boards["T1"]  # rebuilt
    assert model.table("T2").board is boards["T2"]  # untouched
    assert [c["outcome"] for c in model.state("T1").coups] == ["B", "B", "P"]
    assert model.refresh() == set()


def test_refresh_names_the_tables_that_changed(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    model = LiveTables(floor.service.journal)
    for table in TABLES:
        model.table(table)
    floor.open_shoe("T1", "S1")
    floor.open_shoe("T3", "S1")  # not followed: built when first asked for
    assert model.refresh() == {"T1"}
    floor.coup("T1", "B")
    floor.coup("T3", "B")
    assert model.refresh() == {"T1"}
    assert model.state("T3").coups[0]["outcome"] == "B"
    assert model.refresh() == set()


def test_a_model_far_behind_starts_again_instead_of_loading_the_backlog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_state, "BACKLOG", 5)
    floor = Floor(tmp_path)
    model = LiveTables(floor.service.journal)
    floor.open_shoe("T1", "S1")
    old = model.table("T1")
    floor.coups("T1", "BPBPBPBP")
    assert model.refresh() == {"T1"}
    assert model.tracked() == []  # dropped; rebuilt when asked for
    _assert_same(model, floor, "T1")
    assert model.table("T1") is not old
