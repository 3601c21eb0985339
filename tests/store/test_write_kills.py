"""Sealing, compaction and purge killed inside each stage: what every reader sees of the
partial state (the read port, `roads store verify`, the journal's chain), and the state the
documented recovery leaves — reopening the service (a seal), running the compaction or the
purge again — against the same operation run whole on a copy (the oracle)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store
from roads.store.layout import data_files, temporary_files, temporary_target
from roads.store.verify import verify
from roads.tables import TableService
from tests.floor import DEALER, Floor

#: Every coup and every shoe row as read (:func:`_reads`).
Reads = tuple[pl.DataFrame, pl.DataFrame]
#: An operation run whole: the reads after it, the data files, the paths it journaled.
Whole = tuple[Reads, list[str], list[str]]
#: Purged: the first imported day (``--before`` 2026-01-02), as journaled until now.
PURGE_BEFORE = date(2026, 1, 2)

RUN = """
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from roads.store import Store
from roads.tables import Actor, TableService
what, store = sys.argv[1], Store.open(Path(sys.argv[2]))
if what == "close":
    TableService(store).close_shoe(Actor.user("dealer", "dealer"), "L2")
elif what == "recover":
    TableService(store).recover()
elif what == "compact":
    store.compact(date(2100, 1, 1))
else:
    store.purge(date.fromisoformat(sys.argv[3]), datetime.now(UTC), "admin", "default")
"""


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three import runs over two days (three coups files and three shoes files a day),
    two sealed live shoes of today (L1), and an open live shoe (L2/S1) with five coups."""
    root = tmp_path_factory.mktemp("pristine") / "store"
    floor = Floor(root)
    for i in range(3):
        csv = root.parent / f"day{i}.csv"
        rows = [f"T{i},S{j},{k},{'BPT'[(i + j + k) % 3]},2026-01-0{1 + j % 2}T10:0{k}:00Z"
                for j in range(3) for k in range(1, 4)]
        csv.write_text("table,shoe,coup,result,time\n" + "\n".join(rows) + "\n")
        ingest([csv], floor.store, ReadOptions(), get_rules("standard-8"))
    for shoe in ("S1", "S2"):
        floor.open_shoe("L1", shoe)
        floor.coups("L1", "BPB")
        floor.close("L1")
    floor.open_shoe("L2", "S1")
    floor.coups("L2", "PBBT")
    floor.coup("L2", player=("9h", "Kd"), banker=("5s", "2c"))
    assert verify(floor.store).ok
    floor.store.journal.close()
    return root


def _copy(pristine: Path, to: Path) -> Store:
    shutil.copytree(pristine, to)
    return Store.open(to)


def _killed(root: Path, what: str, at: str, after: int = 0) -> None:
    """Run ``what`` on the store in a process of its own that SIGKILLs itself at ``at``."""
    env = {**os.environ, "ROADS_KILL_AT": at, "ROADS_KILL_AFTER": str(after)}
    done = subprocess.run([sys.executable, "-c", RUN, what, str(root),
                           PURGE_BEFORE.isoformat()], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == -9, done.stderr  # killed there, not finished nor failed


def _reads(store: Store) -> Reads:
    """Every coup and every shoe row as the read port gives them, in key order."""
    return (store.read.coups().sort("table_id", "shoe_id", "coup"),
            store.read.shoes().sort("table_id", "shoe_id"))


def _assert_reads(store: Store, expected: Reads) -> None:
    coups, shoes = _reads(store)
    assert coups.equals(expected[0]) and shoes.equals(expected[1])
    assert coups.unique(["table_id", "shoe_id", "coup"]).height == coups.height
    assert shoes.unique(["table_id", "shoe_id"]).height == shoes.height


def _leftovers(store: Store) -> dict[str, str]:
    """What `store verify` names, when all it names is files no journaled file accounts
    for (never a journaled file missing or altered, never the chain): place -> detail."""
    problems = verify(store).problems
    assert {p["kind"] for p in problems} <= {"not accounted for"}, problems
    assert store.journal.verify().ok
    return {p["where"]: p["detail"] for p in problems}


def _layout(store: Store) -> dict[tuple[str, str], int]:
    """How many files each (table, day) holds: compaction's result, whatever it names
    its merged files."""
    counts: dict[tuple[str, str], int] = {}
    for rel in data_files(store.root):
        table, day, _ = rel.split("/")
        counts[table, day] = counts.get((table, day), 0) + 1
    return counts


def _sealed(store: Store, table: str, shoe: str) -> list[str]:
    events = [e for e in store.journal.of_kinds(("shoe_sealed",))
              if (e.table_id, e.shoe_id) == (table, shoe)]
    return [f["path"] for e in events for f in e.payload["files"]]


# -- sealing ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sealed_whole(pristine: Path, tmp_path_factory: pytest.TempPathFactory) -> Whole:
    """The oracle: L2's shoe closed and sealed without a kill (reads, files, seal paths)."""
    store = _copy(pristine, tmp_path_factory.mktemp("whole") / "store")
    TableService(store).close_shoe(DEALER, "L2")
    return _reads(store), data_files(store.root), _sealed(store, "L2", "S1")


def _seal_killed(pristine: Path, root: Path, at: str) -> Store:
    """A copy of the pristine store at ``root``, its open shoe's close killed at ``at``."""
    _copy(pristine, root)
    _killed(root, "close", at)
    return Store.open(root)


def _recovered(root: Path, sealed_whole: Whole) -> None:
    """Reopening the service seals the shoe once, and the store is the oracle's."""
    store = Store.open(root)
    assert TableService(store).recover() == [("L2", "S1")]
    _recovered_clean(store, sealed_whole)


def _recovered_clean(store: Store, sealed_whole: Whole) -> None:
    """The store is the oracle's: its reads, its files, one seal of the same
    (deterministic) names, no temporary, verify clean, nothing left to recover."""
    reads, files, paths = sealed_whole
    _assert_reads(store, reads)
    assert _sealed(store, "L2", "S1") == paths
    assert data_files(store.root) == files and temporary_files(store.root) == []
    report = verify(store, deep=True)
    assert report.ok, report.problems
    assert TableService(store).recover() == []


def _hidden_only(pristine: Path, store: Store, sealed_whole: Whole, both: bool) -> None:
    """A seal killed before its commit: the shoe closed, not sealed, every reader reading
    it from the journal; nothing published (the part files are the pristine store's), and
    what it wrote is only hidden temporaries of the shoe's two names (``both``: of each,
    whole), each named by `store verify` as left by an interrupted write."""
    assert store.unsealed_closed() == [("L2", "S1")]
    _assert_reads(store, sealed_whole[0])
    assert data_files(store.root) == data_files(pristine)
    temporaries = temporary_files(store.root)
    targets = sorted(str(temporary_target(t)) for t in temporaries)
    assert targets == sealed_whole[2] if both else (
        len(temporaries) in (1, 2) and set(targets) <= set(sealed_whole[2]))
    assert _leftovers(store) == dict.fromkeys(
        temporaries, "a temporary file left by an interrupted write")


def test_a_seal_killed_after_its_files_are_written(pristine: Path, tmp_path: Path,
                                                   sealed_whole: Whole) -> None:
    root = tmp_path / "store"
    store = _seal_killed(pristine, root, "seal:files-written")
    _hidden_only(pristine, store, sealed_whole, both=True)
    _recovered(root, sealed_whole)


def test_a_seal_killed_after_publishing_before_its_commit(pristine: Path, tmp_path: Path,
                                                          sealed_whole: Whole) -> None:
    """Killed inside the commit's transaction, after its files were renamed to their names:
    the transaction is rolled back, so the shoe is closed and not sealed (read from the
    journal) while its two files stand under their names, each named by `store verify` as
    no journal event's; the recovery's seal replaces them with its own and journals them."""
    root = tmp_path / "store"
    store = _seal_killed(pristine, root, "seal:published")
    assert store.unsealed_closed() == [("L2", "S1")]
    _assert_reads(store, sealed_whole[0])
    published = sorted(set(data_files(root)) - set(data_files(pristine)))
    assert published == sealed_whole[2] and temporary_files(root) == []
    left = _leftovers(store)
    assert sorted(left) == published
    assert all("no committed journal event names this file" in d for d in left.values())
    _recovered(root, sealed_whole)


def test_a_seal_killed_while_writing_a_file(pristine: Path, tmp_path: Path,
                                            sealed_whole: Whole) -> None:
    """Killed with a file written under its temporary name (the other, on the second part
    writer, not begun, half or wholly written): the recovery's seal removes them (no later
    write would: the names are unique to the killed attempt)."""
    root = tmp_path / "store"
    store = _seal_killed(pristine, root, "store:temporary-written")
    _hidden_only(pristine, store, sealed_whole, both=False)
    _recovered(root, sealed_whole)


def test_a_recovery_killed_after_its_seal_before_its_cleanup(pristine: Path, tmp_path: Path,
                                                             sealed_whole: Whole) -> None:
    """The killed seal's temporaries outlive a recovery killed right after sealing: the
    shoe is sealed whole, and the temporaries are named until the next sweep (a start-up's
    recovery, or any bulk writer's) removes them."""
    root = tmp_path / "store"
    _seal_killed(pristine, root, "seal:files-written")
    left = temporary_files(root)
    _killed(root, "recover", "seal:recovered")
    store = Store.open(root)
    assert store.unsealed_closed() == []
    reads, files, paths = sealed_whole
    _assert_reads(store, reads)
    assert data_files(root) == files and _sealed(store, "L2", "S1") == paths
    assert temporary_files(root) == left  # (the recovery's own were published)
    assert _leftovers(store) == dict.fromkeys(
        left, "a temporary file left by an interrupted write")
    with store.bulk_lock():
        assert sorted(store.sweep(())) == left
    _recovered_clean(store, sealed_whole)


def test_a_seal_killed_after_its_commit_is_whole(pristine: Path, tmp_path: Path,
                                                 sealed_whole: Whole) -> None:
    """Killed between the seal's commit and its checkpoint: sealed, nothing to recover."""
    root = tmp_path / "store"
    store = _seal_killed(pristine, root, "store:committed")
    assert store.unsealed_closed() == []
    _assert_reads(store, sealed_whole[0])
    # Partial: the seal is whole, but no signed checkpoint covers its event yet.
    [seal] = store.journal.of_kinds(("shoe_sealed",))[-1:]
    [problem] = verify(store).problems
    assert (problem["kind"], problem["where"]) == ("checkpoint", f"event {seal.seq}")
    assert "a write killed before it signed" in problem["detail"]
    assert _sealed(store, "L2", "S1") == sealed_whole[2]
    # Repaired: the service's start-up signs it; nothing else to recover.
    assert TableService(store).recover() == []
    assert _leftovers(store) == {}


# -- compaction ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compacted_whole(pristine: Path, tmp_path_factory: pytest.TempPathFactory
                    ) -> dict[tuple[str, str], int]:
    store = _copy(pristine, tmp_path_factory.mktemp("whole") / "store")
    store.compact(date(2100, 1, 1))
    return _layout(store)


@pytest.mark.parametrize(("at", "after", "left_old"), [
    ("store:temporary-written", 0, 0),  # the merged file, under its temporary name
    ("compact:merged-written", 0, 0),   # the merged file, not journaled
    ("compact:committed", 0, 3),        # journaled: the three files it replaced are left
    ("compact:old-removed", 0, 2),      # one of them deleted
    ("compact:committed", 1, 3),        # the second merge's (the second day's coups files)
])
def test_a_compaction_killed_inside_a_stage(pristine: Path, tmp_path: Path, at: str,
                                            after: int, left_old: int,
                                            compacted_whole: dict[tuple[str, str], int]
                                            ) -> None:
    root = tmp_path / "store"
    store = _copy(pristine, root)
    before = _reads(store)
    _killed(root, "compact", at, after)
    store = Store.open(root)
    # Partial: every reader reads what it read before; only files no journaled file
    # accounts for are named, the ones a committed merge removed as such.
    _assert_reads(store, before)
    left = _leftovers(store)
    journaled = {f["path"] for e in store.journal.of_kinds(("store_compacted",))
                 for f in e.payload["files"]}
    if left_old:
        day = "2026-01-02" if after else "2026-01-01"
        old = [p for p in data_files(pristine) if p.startswith(f"coups/date={day}/")]
        assert set(left) <= set(old) and len(left) == left_old
        assert all("removed, left by an interrupted deletion" in d for d in left.values())
        assert len(journaled) == after + 1
    else:
        assert len(left) == 1 and journaled == set()
        [(where, detail)] = left.items()
        assert where.startswith("coups/date=2026-01-01/") and "part-compact-" in where
        assert detail in ("no committed journal event names this file",
                          "a temporary file left by an interrupted write")
    # Repaired: running the compaction again ends what the killed one began.
    store.compact(date(2100, 1, 1))
    _assert_reads(store, before)
    assert _layout(store) == compacted_whole and temporary_files(root) == []
    report = verify(store, deep=True)
    assert report.ok, report.problems


# -- purge -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def purged_whole(pristine: Path, tmp_path_factory: pytest.TempPathFactory) -> Whole:
    """The oracle: the purge run whole (reads, files, the partitions it removed)."""
    store = _copy(pristine, tmp_path_factory.mktemp("whole") / "store")
    removed = store.purge(PURGE_BEFORE, datetime.now(UTC), "admin", "default")
    assert removed == ["coups/date=2026-01-01", "shoes/date=2026-01-01"]
    return _reads(store), data_files(store.root), removed


@pytest.mark.parametrize(("at", "after", "left"), [
    ("purge:committed", 0, 6), ("purge:file-removed", 0, 5),
    ("purge:file-removed", 5, 0),  # after its last deletion: the emptied partitions left
])
def test_a_purge_killed_after_its_event(pristine: Path, tmp_path: Path, at: str, after: int,
                                        left: int, purged_whole: Whole) -> None:
    root = tmp_path / "store"
    _copy(pristine, root)
    _killed(root, "purge", at, after)
    store = Store.open(root)
    reads, files, partitions = purged_whole
    # Partial: the purge is journaled, so no reader sees the purged days; the files it
    # had not deleted yet are named as left by a removal, not as journaled files.
    _assert_reads(store, reads)
    [event] = store.journal.of_kinds(("data_purged",))
    named = _leftovers(store)
    assert len(named) == left and set(named) <= set(event.payload["removed"])
    assert all("removed, left by an interrupted deletion" in d for d in named.values())
    assert all((root / p).is_dir() for p in partitions)  # (emptied or not, still there)
    assert [p for p in partitions if not any((root / p).iterdir())] == (
        partitions if left == 0 else [])
    # Repaired: the next purge deletes them first (and their emptied partitions), and
    # purges nothing more.
    assert store.purge(PURGE_BEFORE, datetime.now(UTC), "admin", "default") == []
    _assert_reads(store, reads)
    assert data_files(root) == files
    assert not any((root / p).exists() for p in partitions)
    report = verify(store, deep=True)
    assert report.ok, report.problems


def test_any_bulk_writer_removes_what_a_killed_purge_left(pristine: Path, tmp_path: Path,
                                                          purged_whole: Whole) -> None:
    """The partitions a purge killed after its last deletion left empty: an ingest's sweep
    (a writer of another kind) removes them too."""
    root = tmp_path / "store"
    _copy(pristine, root)
    _killed(root, "purge", "purge:file-removed", 5)
    store = Store.open(root)
    partitions = purged_whole[2]
    assert all((root / p).is_dir() for p in partitions)
    csv = tmp_path / "later.csv"
    csv.write_text("table,shoe,coup,result,time\nT7,S1,1,B,2026-02-01T10:00:00Z\n")
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    assert not any((root / p).exists() for p in partitions)
    report = verify(store, deep=True)
    assert report.ok, report.problems


def test_a_part_folder_removed_under_a_writer_is_made_again(tmp_path: Path) -> None:
    """A purge's sweep removes partitions it leaves empty; a seal beside it that had just
    made the same folder writes its temporary there all the same."""
    from roads.store.store import _created

    folder = tmp_path / "coups" / "date=2026-12-02"
    folder.mkdir(parents=True)
    folder.rmdir()  # the sweep, between the seal's mkdir and its open
    with _created(folder / ".tmp-x-part.parquet") as fh:
        fh.write(b"PAR1")
    assert (folder / ".tmp-x-part.parquet").read_bytes() == b"PAR1"
