"""``roads store verify`` beside a writer: the files of a write in flight (a seal's hidden
files, a bulk run's parts before its commit) are listed as in flight while their writer
holds its lock (``Store.writing`` / ``bulk_lock``), and the same files with no writer
running are what a kill left: problems (before, they were problems either way)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from roads.cli import main
from roads.files import temporary_name
from roads.store import Store
from roads.store.catalog import files
from roads.store.verify import verify
from tests.floor import Floor


def _sealed(root: Path) -> tuple[Store, str]:
    floor = Floor(root)
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPB")
    floor.close("T1")
    [stored] = [e.path for e in files(floor.store.journal.connection())
                if e.path.startswith("coups/")]
    return floor.store, stored


def test_a_seals_hidden_file_is_in_flight_while_its_writer_runs(tmp_path: Path) -> None:
    store, _ = _sealed(tmp_path / "store")
    hidden = temporary_name(store.root / "coups" / "date=2026-01-01" / "part-live-x.parquet")
    hidden.parent.mkdir(parents=True)
    hidden.write_bytes(b"half a seal")
    rel = hidden.relative_to(store.root).as_posix()
    with store.writing():
        report = verify(store)
        result = CliRunner().invoke(main, ["store", "verify", "--store", str(store.root),
                                           "--quiet"])
    assert report.ok and report.in_flight == [rel], report.problems
    assert result.exit_code == 0 and f"in flight (a writer is running): {rel}" in result.output
    report = verify(store)  # no writer: a kill left it
    assert [(p["kind"], p["where"]) for p in report.problems] == [("not accounted for", rel)]
    assert report.in_flight == []


def test_a_bulk_runs_part_is_in_flight_only_while_the_run_holds_its_lock(
        tmp_path: Path) -> None:
    store, stored = _sealed(tmp_path / "store")
    part = store.root / stored.rsplit("/", 1)[0] / "part-import-run-x.parquet"
    part.write_bytes((store.root / stored).read_bytes())
    rel = part.relative_to(store.root).as_posix()
    with store.writing():  # a seal running does not vouch for a bulk run's files
        assert [p["where"] for p in verify(store).problems] == [rel]
    with store.bulk_lock():
        report = verify(store)
    assert report.ok and report.in_flight == [rel], report.problems
    assert [p["where"] for p in verify(store).problems] == [rel]
