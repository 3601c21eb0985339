"""The audit trail and retention: a purge counts the journal's own time too."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from roads.audit.trail import audit_trail, purge, retention_cutoff
from roads.errors import InputError
from roads.ingest.entry import CoupEntry
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store
from tests.floor import Floor


def test_audit_lists_every_action_with_who(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    floor.open_shoe("T1", "S1")
    floor.coup("T1", "B")
    floor.amend("T1", "S1", 1, CoupEntry(outcome="P", method="keypad"), "typo")
    rows = audit_trail(floor.store, "T1")
    assert [(r["kind"], r["actor"]) for r in rows] == [
        ("shoe_opened", "dealer"), ("coup_entered", "dealer"),
        ("correction_requested", "dealer"), ("coup_amended", "dealer")]
    assert {k: rows[3]["details"][k] for k in ("coup", "reason", "approver")} == \
        {"coup": 1, "reason": "typo", "approver": "super"}
    assert audit_trail(floor.store, "T2") == []


def _old_import(tmp_path: Path) -> Store:
    """A store holding coups dealt on 2026-01-01, imported (journaled) today."""
    store = Store.create(tmp_path / "store")
    csv = tmp_path / "old.csv"
    csv.write_text("table,shoe,coup,result,time\nT1,S1,1,B,2026-01-01T10:00:00Z\n"
                   "T1,S1,2,P,2026-01-01T10:01:00Z\n")
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    return store


def test_purge_refuses_inside_retention_and_journals_deletions(tmp_path: Path) -> None:
    store = _old_import(tmp_path)
    assert retention_cutoff("nebraska", date(2033, 6, 1)) == date(2026, 6, 1)
    with pytest.raises(InputError, match="refused: 2026-02-01 is inside the nebraska"):
        purge(store, date(2026, 2, 1), "admin", "nebraska", today=date(2030, 1, 1))
    assert store.read.coups().height == 2
    later = datetime.now(UTC).date() + timedelta(days=5 * 366 + 30)
    removed = purge(store, date(2026, 2, 1), "admin", "nevada", today=later)
    assert removed == ["coups/date=2026-01-01", "shoes/date=2026-01-01"]
    assert store.read.coups().is_empty() and store.info()["problems"] == []
    last = audit_trail(store)[-1]
    assert last["kind"] == "data_purged" and last["actor"] == "admin"
    assert last["details"]["partitions"] == removed
    assert store.journal.verify().ok
    with pytest.raises(InputError, match="unknown retention profile"):
        retention_cutoff("atlantis")


def test_backdated_data_cannot_be_purged_before_its_journal_time_ages(tmp_path: Path) -> None:
    """Coups dated 2026-01-01 but received today stay as long as the period counts from
    today: an old date on a record never lets it be deleted early."""
    store = _old_import(tmp_path)
    soon = datetime.now(UTC).date() + timedelta(days=5 * 365 - 30)
    with pytest.raises(InputError, match=r"journaled on .* inside the nevada retention"):
        purge(store, date(2026, 2, 1), "admin", "nevada", today=soon)
    assert store.read.coups().height == 2
