"""``roads store verify`` beside a live server: a seal committed while verify reads is not
a problem. The catalogue and the journal's file events were read at different moments, so
a seal in between made them "disagree about this file" (found running verify against a
soak's live store: 6-16 false problems a run)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from roads.store import catalog
from roads.store.verify import verify
from tests.floor import Floor


def _shoe(floor: Floor, shoe: str) -> None:
    floor.open_shoe("T1", shoe)
    floor.coups("T1", "BPBT")
    floor.close("T1")


def test_a_seal_committed_while_verify_reads_is_no_problem(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    floor = Floor(tmp_path / "store")
    _shoe(floor, "S1")
    files = catalog.files
    calls = 0

    def files_then_a_seal(db: Any) -> list[catalog.FileEntry]:
        nonlocal calls
        calls += 1
        listed = files(db)
        if calls == 1:  # verify has its list; a server seals the next shoe now
            sealing = threading.Thread(target=_shoe, args=(floor, "S2"))
            sealing.start()
            sealing.join()
        return listed

    monkeypatch.setattr(catalog, "files", files_then_a_seal)
    report = verify(floor.store)
    assert calls >= 1
    assert report.ok, report.problems
    monkeypatch.undo()
    after = verify(floor.store)  # and the new shoe's files are checked by the next run
    assert after.ok and after.files > report.files, after.problems


def test_a_seal_after_the_reads_ahead_is_no_problem(tmp_path: Path) -> None:
    """``store verify`` starts reading the catalogue's shoe tables before it imports the
    checks; a seal between then and verify's own snapshot left those tables without the
    new shoe's rows ("the shoes this file holds are not the shoes the catalogue lists")."""
    from roads.store import EarlyReads

    floor = Floor(tmp_path / "store")
    _shoe(floor, "S1")
    early = EarlyReads(floor.store.root)
    try:
        for table in early.shoe_tables.values():
            table.result()  # read ahead, as the command does while it imports
        _shoe(floor, "S2")  # then a live server seals the next shoe
        report = verify(floor.store, early=early)
    finally:
        early.close()
    assert report.ok, report.problems
    assert report.sealed_shoes == 2
