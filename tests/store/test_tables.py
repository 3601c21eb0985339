"""A live table's state from the journal: statuses, corrections, idempotent posts."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.store.live import (
    CoupConflict,
    CoupEntry,
    LiveError,
    LiveTables,
    close_table,
    decide_correction,
    post_coup,
    request_correction,
)
from roads.store.store import Store
from roads.store.tables import table_state


def test_statuses_follow_the_table(tmp_path: Path) -> None:
    store = Store(tmp_path)
    live = LiveTables(store.journal)
    assert table_state(store, "T1").status == "idle"
    live.open_shoe("T1", "S1", "standard-8", "ana")
    with pytest.raises(LiveError, match="close it first"):
        store.journal.run(close_table("T1", "ana"))
    live.enter_coup("T1", CoupEntry(outcome="B"), "ana")
    state = table_state(store, "T1")
    assert (state.status, state.shoe_id, state.shoe_number, len(state.coups)) == \
        ("open", "S1", 1, 1)
    live.close_shoe("T1", "ana")
    assert table_state(store, "T1").status == "between_shoes"
    store.journal.run(close_table("T1", "ana"))
    closed = table_state(store, "T1")
    assert (closed.status, closed.coups) == ("closed", [])
    live.open_shoe("T1", "S2", "standard-8", "ana")
    assert table_state(store, "T1").shoe_number == 2


def test_post_coup_is_idempotent_by_shoe_and_number(tmp_path: Path) -> None:
    store = Store(tmp_path)
    LiveTables(store.journal).open_shoe("T1", "S1", "standard-8", "ana")
    entry = CoupEntry(player_cards=("9h", "Kd"), banker_cards=("2c", "3c"))
    event, created = post_coup(store.journal, "T1", entry, "key:1", "S1", 1)
    again, created_again = post_coup(store.journal, "T1", entry, "key:1", "S1", 1)
    assert created and not created_again and again.seq == event.seq
    # The same coup given only by its outcome is the same coup.
    assert not post_coup(store.journal, "T1", CoupEntry(outcome="P"), "key:1", "S1", 1)[1]
    with pytest.raises(CoupConflict):
        post_coup(store.journal, "T1", CoupEntry(outcome="B"), "key:1", "S1", 1)
    with pytest.raises(LiveError, match="not open"):
        post_coup(store.journal, "T1", CoupEntry(outcome="B"), "key:1", "S0", 1)


def test_a_correction_request_changes_nothing_until_approved(tmp_path: Path) -> None:
    store = Store(tmp_path)
    live = LiveTables(store.journal)
    live.open_shoe("T1", "S1", "standard-8", "ana")
    for o in "BPB":
        live.enter_coup("T1", CoupEntry(outcome=o), "ana")
    with pytest.raises(LiveError, match="no coup 9"):
        store.journal.run(request_correction("T1", "S1", 9, "ana", "typo"))
    with pytest.raises(LiveError, match="needs a reason"):
        store.journal.run(request_correction("T1", "S1", 1, "ana", "  "))
    req = store.journal.run(request_correction("T1", "S1", 1, "ana", "void it"))
    state = table_state(store, "T1")
    assert [c["outcome"] for c in state.coups] == ["B", "P", "B"]
    assert [p["request"] for p in state.pending_corrections] == [req.seq]
    with pytest.raises(LiveError, match="no correction request"):
        store.journal.run(decide_correction(req.seq - 1, "bo", True))
    store.journal.run(decide_correction(req.seq, "bo", True))
    after = table_state(store, "T1")
    assert [c["outcome"] for c in after.coups] == ["P", "B"] and not after.pending_corrections


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("BPT"), st.booleans()), min_size=1, max_size=30),
       st.data())
def test_state_equals_entries_minus_approved_voids(coups: list[tuple[str, bool]],
                                                   data: st.DataObject) -> None:
    """Invariant: the state's coups are the entered coups without the approved voids, in
    order, whatever mix of voids is requested, approved or rejected."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp))
        live = LiveTables(store.journal)
        live.open_shoe("T1", "S1", "standard-8", "ana")
        for outcome, _ in coups:
            live.enter_coup("T1", CoupEntry(outcome=outcome), "ana")
        kept = []
        for number, (outcome, void) in enumerate(coups, start=1):
            if void:
                req = store.journal.run(request_correction("T1", "S1", number, "ana", "x"))
                approve = data.draw(st.booleans())
                store.journal.run(decide_correction(req.seq, "bo", approve))
                if approve:
                    continue
            kept.append((number, outcome))
        state = table_state(store, "T1")
        assert [(c["coup"], c["outcome"]) for c in state.coups] == kept
        assert state.pending_corrections == []
