"""The audit trail and retention."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from roads.audit.trail import audit_trail, purge, retention_cutoff
from roads.errors import InputError
from roads.store.parquet import scan
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store.live import CoupEntry, LiveTables
from roads.store import Selection, Store


def test_audit_lists_every_action_with_who(tmp_path: Path) -> None:
    store = Store.create(tmp_path)
    live = LiveTables(store.journal)
    live.open_shoe("T1", "S1", "standard-8", "dealer")
    live.enter_coup("T1", CoupEntry(outcome="B"), "dealer")
    live.amend_coup("T1", "S1", 1, CoupEntry(outcome="P"), "dealer", "typo", "super")
    rows = audit_trail(store, "T1")
    assert [(r["kind"], r["actor"]) for r in rows] == [
        ("shoe_opened", "dealer"), ("coup_entered", "dealer"), ("coup_amended", "dealer")]
    assert rows[2]["details"] == {"coup": 1, "reason": "typo", "approver": "super"}
    assert audit_trail(store, "T2") == []


def test_purge_refuses_inside_retention_and_journals_deletions(tmp_path: Path) -> None:
    store = Store.create(tmp_path)
    sim = Simulation(get_rules("standard-8"), shoes=3, seed=1)  # dealt 2026-01-01
    write_simulation(sim, tmp_path / "sim")
    store.append(scan(tmp_path / "sim", "coups").collect(), scan(tmp_path / "sim",
                                                                  "shoes").collect(),
                 {"source": "engine"})
    assert retention_cutoff("nebraska", date(2033, 6, 1)) == date(2026, 6, 1)
    with pytest.raises(InputError, match="refused: 2026-02-01 is inside the nebraska"):
        purge(store, date(2026, 2, 1), "admin", "nebraska", today=date(2030, 1, 1))
    assert store.read.coups().height > 0
    removed = purge(store, date(2026, 2, 1), "admin", "nevada", today=date(2031, 3, 1))
    assert removed == ["coups/date=2026-01-01", "shoes/date=2026-01-01"]
    assert store.read.coups().is_empty()
    last = audit_trail(store)[-1]
    assert last["kind"] == "data_purged" and last["actor"] == "admin"
    assert last["details"]["partitions"] == removed
    assert store.journal.verify().ok
    with pytest.raises(InputError, match="unknown retention profile"):
        retention_cutoff("atlantis")
