"""A shoe is sealed once, whoever else seals it at the same moment: a recovery of the
pending seal racing the normal close, or a second service on the same store. Each race is
made to happen deterministically: the other seal runs, whole, between this seal's look at
the journal and the transaction that would journal it."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from roads import faults
from roads.store import Event, Store
from roads.store.journal import Action
from roads.store.layout import data_files, temporary_files
from roads.store.verify import verify
from roads.tables import TableService
from tests.floor import DEALER, Floor


@pytest.fixture
def floor(tmp_path: Path) -> Floor:
    """A store with one open shoe, T1/S1, of four coups."""
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPPT")
    floor.coup("T1", player=("9h", "Kd"), banker=("5s", "2c"))
    return floor


def _seals(store: Store) -> list[Event]:
    return store.journal.of_kinds(("shoe_sealed",))


def _assert_sealed_once(store: Store, first: Event) -> None:
    """One seal event, ``first``; its files are the only ones, byte for byte as it
    journaled them; every coup and the shoe row read once; verify clean."""
    assert [e.seq for e in _seals(store)] == [first.seq]
    files = {f["path"]: f["sha256"] for f in first.payload["files"]}
    assert data_files(store.root) == sorted(files)
    for path, sha in files.items():
        assert hashlib.sha256((store.root / path).read_bytes()).hexdigest() == sha
    assert store.read.coups()["coup"].to_list() == [1, 2, 3, 4, 5]
    assert store.read.shoes()["open"].to_list() == [False]
    report = verify(store, deep=True)
    assert report.ok, report.problems


def test_a_second_service_sealing_meanwhile_makes_this_seal_a_no_op(floor: Floor) -> None:
    store = floor.store
    store.journal.run(lambda tx: tx.append("shoe_closed", "T1", "S1", {}, "dealer"))
    other = Store.open(store.root)  # its own connections: another process, in effect
    theirs: list[Event] = []

    def run(action: Action) -> Event:  # between this seal's look and its commit
        theirs.append(other.seal("T1", "S1", "system"))
        return store.journal.run(action)

    mine = store.seal("T1", "S1", "dealer", run)
    [first] = theirs
    assert mine == first and first.actor == "system"
    _assert_sealed_once(store, first)


def test_a_recovery_racing_the_close_is_the_only_seal(floor: Floor,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The close's transactions are the close and then the seal: the recovery of a second
    service (a worker starting up) runs just before the second."""
    store = floor.store
    recovering = TableService(Store.open(store.root))
    recovered: list[tuple[str, str]] = []
    transactions: list[Action] = []
    commit = store.journal.run

    def run(action: Action) -> Event:
        transactions.append(action)
        if len(transactions) == 2:
            recovered.extend(recovering.recover())
        return commit(action)

    monkeypatch.setattr(store.journal, "run", run)
    closed, sealed = floor.service.close_shoe(DEALER, "T1")
    assert len(transactions) == 2 and recovered == [("T1", "S1")]
    assert closed.kind == "shoe_closed" and sealed.actor == "system"  # the recovery's
    _assert_sealed_once(store, sealed)
    assert recovering.recover() == [] and floor.service.recover() == []


def test_seals_sharing_one_commit_journal_one(floor: Floor) -> None:
    """Two seals of the shoe in one transaction (a shared commit carries both): the
    second sees the first's event, inserted before it looks."""
    store = floor.store
    store.journal.run(lambda tx: tx.append("shoe_closed", "T1", "S1", {}, "dealer"))
    pending: list[Action] = []

    def hold(action: Action) -> Event:  # each seal's action, kept for one transaction
        pending.append(action)
        if len(pending) == 1:
            return store.seal("T1", "S1", "second", hold)  # (looks before the first commits)
        with store.journal.transaction() as tx:
            events = [a(tx) for a in pending]
        assert events[0] == events[1]
        return events[0]

    first = store.seal("T1", "S1", "first", hold)
    assert first.actor == "first"  # the outer seal's action ran first in the transaction
    _assert_sealed_once(store, first)


def test_a_close_whose_temporary_a_recovery_removed_returns_the_recovery_seal(
        floor: Floor, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recovery removes a killed seal's temporaries of the shoe's names; a seal of the
    shoe still writing one (this close, in another worker) then finds it gone, and answers
    with the recovery's seal instead of an error."""
    store = floor.store
    recovering = TableService(Store.open(store.root))
    recovered: list[tuple[str, str]] = []
    once = threading.Lock()  # (the close writes its two files on two threads)
    real = faults.point

    def point(name: str) -> None:  # the close's first file written under its temporary name
        if name == "store:temporary-written" and once.acquire(blocking=False):
            recovered.extend(recovering.recover())  # (its own files pass the point)
        real(name)

    monkeypatch.setattr(faults, "point", point)
    closed, sealed = floor.service.close_shoe(DEALER, "T1")
    assert recovered == [("T1", "S1")] and closed.kind == "shoe_closed"
    assert sealed.actor == "system"  # the recovery's
    _assert_sealed_once(store, sealed)
    assert temporary_files(store.root) == []


def test_a_seal_that_lost_never_touches_the_published_files(
        floor: Floor, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers closing one shoe: the other seal runs whole, published and journaled,
    while this one writes its first file. This one loses in its transaction and must leave
    the published files as the winner wrote them — the same inodes, not files renamed over
    them (a loser of another version would write other bytes) — and discard its own."""
    store = floor.store
    store.journal.run(lambda tx: tx.append("shoe_closed", "T1", "S1", {}, "dealer"))
    other = Store.open(store.root)  # its own connections: another worker, in effect
    theirs: list[Event] = []
    published: dict[str, tuple[int, str]] = {}
    once = threading.Lock()  # (this seal writes its two files on two threads)
    real = faults.point

    def point(name: str) -> None:  # this seal's first file written under its hidden name
        if name == "store:temporary-written" and once.acquire(blocking=False):
            theirs.append(other.seal("T1", "S1", "system"))  # (its files pass the point)
            published.update({f["path"]: _inode_and_sha(store.root / f["path"])
                              for f in theirs[0].payload["files"]})
        real(name)

    monkeypatch.setattr(faults, "point", point)
    mine = store.seal("T1", "S1", "dealer")
    [first] = theirs
    assert mine == first and first.actor == "system"
    assert {path: _inode_and_sha(store.root / path) for path in published} == published
    assert temporary_files(store.root) == []  # the loser's own files: discarded
    _assert_sealed_once(store, first)


def _inode_and_sha(path: Path) -> tuple[int, str]:
    return path.stat().st_ino, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_shoe_sealed_twice_before_the_fix_is_named(floor: Floor) -> None:
    """Stores written before the in-transaction check could journal two seals of a shoe:
    verify names the shoe."""
    store = floor.store
    floor.close("T1")
    [seal] = _seals(store)
    store.journal.run(lambda tx: tx.append("shoe_sealed", "T1", "S1", seal.payload,
                                           "system"))
    problems = [p for p in verify(store).problems if p["kind"] == "held twice"]
    assert [p["where"] for p in problems] == ["T1/S1"]
    assert str(seal.seq) in problems[0]["detail"]


def test_a_seal_s_rename_lost_to_a_power_cut_is_put_in_place(floor: Floor) -> None:
    """The journaled seal's file back under its hidden name, as a power cut that lost the
    rename (but not the commit) leaves it: the next sweep renames it into place; a hidden
    file of other bytes is removed instead."""
    store = floor.store
    _, sealed = floor.close("T1")
    coups, shoes = (store.root / f["path"] for f in sealed.payload["files"])
    hidden = coups.parent / f".tmp-{'a' * 32}-{coups.name}"
    coups.rename(hidden)
    other = shoes.parent / f".tmp-{'b' * 32}-{shoes.name}"
    other.write_bytes(b"another attempt's bytes")
    assert {p["kind"] for p in verify(store).problems} == {"missing", "not accounted for"}
    assert store.sweep_stored() == [other.relative_to(store.root).as_posix()]
    assert coups.is_file() and not hidden.exists() and not other.exists()
    _assert_sealed_once(store, sealed)
