"""The store's lock files are its owner's only (0600), those an earlier version made 0644
included: anyone who can open a lock can hold it exclusively and stall every writer."""

from __future__ import annotations

import os
import stat
from datetime import date
from pathlib import Path

import pytest

from roads.store import Store, journal_queue
from roads.store.layout import BULK_LOCK, WRITERS_LOCK
from tests.floor import Floor

LOCKS = (BULK_LOCK, WRITERS_LOCK, "journal.sqlite.lock")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _written(floor: Floor) -> None:
    """A seal (the writers' lock, the journal's queue) and a bulk run (the bulk lock)."""
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPB")
    floor.close("T1")
    floor.store.compact(date(2030, 1, 1))


def test_new_lock_files_are_the_owners_only(tmp_path: Path) -> None:
    floor = Floor(tmp_path / "store")
    _written(floor)
    assert {name: _mode(floor.store.root / name) for name in LOCKS} == \
        dict.fromkeys(LOCKS, 0o600)


def test_lock_files_an_earlier_version_left_0644_are_made_0600(tmp_path: Path) -> None:
    root = tmp_path / "store"
    Store.create(root)
    for name in LOCKS:  # as b59cfcd's code left them (its fixture's .bulk.lock is 0644)
        (root / name).touch()
        os.chmod(root / name, 0o644)
    _written(Floor(Store.open(root)))
    assert {name: _mode(root / name) for name in LOCKS} == dict.fromkeys(LOCKS, 0o600)


def test_a_lock_file_of_another_owner_is_left_as_it_is(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "x.lock"
    lock.touch()
    os.chmod(lock, 0o644)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(lock).st_uid + 1)  # not ours
    os.close(journal_queue.open_lock(lock))
    assert _mode(lock) == 0o644
    monkeypatch.undo()
    os.close(journal_queue.open_lock(lock))  # ours again
    assert _mode(lock) == 0o600
