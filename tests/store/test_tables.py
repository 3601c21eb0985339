"""The live-table service: statuses, the policy, idempotent posts, corrections."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.ingest.entry import CoupEntry
from roads.store import Selection
from roads.tables import Actor, CoupConflict, Forbidden, LiveError
from tests.floor import DEALER, SUPERVISOR, Floor

KEY = Actor.key("k1", "T1")


def test_statuses_follow_the_table(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    service = floor.service
    assert service.table_state("T1").status == "idle"
    floor.open_shoe("T1", "S1")
    with pytest.raises(LiveError, match="close it first"):
        service.close_table(DEALER, "T1")
    floor.coup("T1", "B")
    state = service.table_state("T1")
    assert (state.status, state.shoe_id, state.shoe_number, len(state.coups)) == \
        ("open", "S1", 1, 1)
    floor.close("T1")
    assert service.table_state("T1").status == "between_shoes"
    service.close_table(DEALER, "T1")
    closed = service.table_state("T1")
    assert (closed.status, closed.coups) == ("closed", [])
    floor.open_shoe("T1", "S2")
    assert service.table_state("T1").shoe_number == 2


def test_posting_a_named_coup_is_idempotent_and_one_definition_says_what_is_the_same(
        tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    service = floor.service
    floor.open_shoe("T1", "S1", who=KEY)
    entry = CoupEntry(player_cards=("9h", "Kd"), banker_cards=("2c", "3c"))
    event, created = service.enter_coup(KEY, "T1", entry, "S1", 1)
    again, created_again = service.enter_coup(KEY, "T1", entry, "S1", 1)
    assert created and not created_again and again.seq == event.seq
    # The same coup given only by its outcome is another coup (no cards): a conflict, as
    # an import of it would be.
    with pytest.raises(CoupConflict):
        service.enter_coup(KEY, "T1", CoupEntry(outcome="P"), "S1", 1)
    with pytest.raises(CoupConflict):
        service.enter_coup(KEY, "T1", CoupEntry(outcome="B"), "S1", 1)
    with pytest.raises(LiveError, match="not open"):
        service.enter_coup(KEY, "T1", CoupEntry(outcome="B"), "S0", 1)
    with pytest.raises(LiveError, match="next coup of shoe S1 is 2"):
        service.enter_coup(KEY, "T1", CoupEntry(outcome="B"), "S1", 3)


def test_the_policy_separates_keys_dealers_supervisors_and_viewers(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    service = floor.service
    other_key = Actor.key("k2", "T2")
    with pytest.raises(Forbidden, match="this key is for table T2"):
        service.open_shoe(other_key, "T1", "S1")
    with pytest.raises(Forbidden, match="role viewer may not open shoe"):
        service.open_shoe(Actor.user("val", "viewer"), "T1", "S1")
    floor.open_shoe("T1", "S1", who=KEY)
    floor.coup("T1", "B", who=KEY)
    with pytest.raises(Forbidden, match="may not request correction"):
        service.request_correction(KEY, "T1", "S1", 1, "typo")
    request = service.request_correction(DEALER, "T1", "S1", 1, "typo")
    with pytest.raises(Forbidden, match="role dealer may not decide correction"):
        service.decide_correction(DEALER, request.seq, True)
    with pytest.raises(LiveError, match="other than the person who asked"):
        service.decide_correction(Actor.user("dealer", "supervisor"), request.seq, True)
    service.decide_correction(SUPERVISOR, request.seq, True)
    with pytest.raises(LiveError, match="already decided"):
        service.decide_correction(SUPERVISOR, request.seq, False)


def test_a_correction_request_changes_nothing_until_approved(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    service = floor.service
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPB")
    with pytest.raises(LiveError, match="no coup 9"):
        service.request_correction(DEALER, "T1", "S1", 9, "typo")
    with pytest.raises(Exception, match="needs a reason"):
        service.request_correction(DEALER, "T1", "S1", 1, "  ")
    req = service.request_correction(DEALER, "T1", "S1", 1, "void it")
    state = service.table_state("T1")
    assert [c["outcome"] for c in state.coups] == ["B", "P", "B"]
    assert [p["request"] for p in state.pending_corrections] == [req.seq]
    with pytest.raises(LiveError, match="no correction request"):
        service.decide_correction(SUPERVISOR, req.seq - 1, True)
    service.decide_correction(SUPERVISOR, req.seq, True)
    after = service.table_state("T1")
    assert [c["outcome"] for c in after.coups] == ["P", "B"] and not after.pending_corrections


def test_corrections_reach_sealed_and_imported_coups(tmp_path: Path) -> None:
    from roads.ingest.readers import ReadOptions
    from roads.ingest.run import ingest
    from roads.rules import get_rules

    floor = Floor(tmp_path / "store")
    csv = tmp_path / "a.csv"
    csv.write_text("table,shoe,coup,result\nT9,H1,1,B\nT9,H1,2,P\n")
    ingest([csv], floor.store, ReadOptions(), get_rules("standard-8"))
    floor.amend("T9", "H1", 2, CoupEntry(outcome="T", method="keypad"), "video review")
    assert floor.store.read.coups(Selection("T9"))["outcome"].to_list() == ["B", "T"]
    assert floor.store.read.coups(Selection("T9"), originals=True)["outcome"].to_list() == \
        ["B", "P"]
    floor.void("T9", "H1", 1)
    assert floor.store.read.coups(Selection("T9"))["coup"].to_list() == [2]


def test_a_live_shoe_cannot_take_the_id_of_a_stored_shoe(tmp_path: Path) -> None:
    from roads.ingest.readers import ReadOptions
    from roads.ingest.run import ingest
    from roads.rules import get_rules

    floor = Floor(tmp_path / "store")
    csv = tmp_path / "a.csv"
    csv.write_text("table,shoe,coup,result\nT1,S1,1,B\n")
    ingest([csv], floor.store, ReadOptions(), get_rules("standard-8"))
    with pytest.raises(LiveError, match="already stored at table T1"):
        floor.open_shoe("T1", "S1")
    floor.open_shoe("T2", "S1")  # the same id at another table is another shoe


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("BPT"), st.booleans()), min_size=1, max_size=30),
       st.data())
def test_state_equals_entries_minus_approved_voids(coups: list[tuple[str, bool]],
                                                   data: st.DataObject) -> None:
    """Invariant: the state's coups are the entered coups without the approved voids, in
    order, whatever mix of voids is requested, approved or rejected — and the read port
    gives the same coups."""
    with tempfile.TemporaryDirectory() as tmp:
        floor = Floor(Path(tmp))
        service = floor.service
        floor.open_shoe("T1", "S1")
        for outcome, _ in coups:
            floor.coup("T1", outcome)
        kept = []
        for number, (outcome, void) in enumerate(coups, start=1):
            if void:
                req = service.request_correction(DEALER, "T1", "S1", number, "x")
                approve = data.draw(st.booleans())
                service.decide_correction(SUPERVISOR, req.seq, approve)
                if approve:
                    continue
            kept.append((number, outcome))
        state = service.table_state("T1")
        assert [(c["coup"], c["outcome"]) for c in state.coups] == kept
        assert state.pending_corrections == []
        read = floor.store.read.coups(Selection("T1", "S1"))
        assert list(zip(read["coup"], read["outcome"], strict=True)) == kept


def test_a_listed_floor_takes_a_new_table_only_from_a_supervisor(tmp_path: Path) -> None:
    from roads.tables import Settings, TableService

    store = Floor(tmp_path).store
    service = TableService(store, Settings(tables=frozenset({"T01"})))
    service.open_shoe(DEALER, "T01", "S1")
    with pytest.raises(Forbidden, match="table T02 is not on this floor's list"):
        service.open_shoe(DEALER, "T02", "S1")
    assert store.journal.table_head("T02") == 0
    service.open_shoe(Actor.key("k9", "T03"), "T03", "S1")  # a key was issued for its table
    service.open_shoe(SUPERVISOR, "T02", "S1")
    service.close_shoe(SUPERVISOR, "T02")
    service.open_shoe(DEALER, "T02", "S2")  # the journal knows T02 now


@pytest.mark.parametrize("typed", ["t01", "\uff34\uff10\uff11", "T\uff101"])
def test_a_table_id_that_reads_as_a_known_one_is_refused(tmp_path: Path, typed: str) -> None:
    floor = Floor(tmp_path)
    floor.open_shoe("T01", "S1")
    for who in (DEALER, SUPERVISOR):
        with pytest.raises(LiveError, match="looks like table 'T01'"):
            floor.service.open_shoe(who, typed, "S1")
    assert floor.store.journal.table_head(typed) == 0
    floor.open_shoe("T011", "S1")  # a different id is a different table
