"""``roads store verify`` beside a writer: a file found while a writer holds its lock
(``Store.writing``; a bulk run holds it too) is looked at again until it is published, gone
or its writers have ended, for ``SETTLE_SECONDS`` at most. One still there is a problem all
the same: holding the lock (any reader can) must not let a planted file pass (review6:
the first version listed such files as in flight and passed)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.files import temporary_name
from roads.store import Store
from roads.store import verify as verify_module
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


def _hidden(store: Store) -> tuple[Path, str]:
    hidden = temporary_name(store.root / "coups" / "date=2026-01-01" / "part-live-x.parquet")
    hidden.parent.mkdir(parents=True, exist_ok=True)
    hidden.write_bytes(b"half a seal")
    return hidden, hidden.relative_to(store.root).as_posix()


@pytest.fixture
def short_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_module, "SETTLE_SECONDS", 0.2)


@pytest.mark.usefixtures("short_settle")
def test_a_planted_file_beside_a_held_lock_is_named(tmp_path: Path) -> None:
    store, _ = _sealed(tmp_path / "store")
    _, rel = _hidden(store)
    with store.writing():  # a writer that never ends (or a tamperer holding the lock)
        report = verify(store)
        result = CliRunner().invoke(main, ["store", "verify", "--store", str(store.root),
                                           "--quiet"])
    assert not report.ok and report.in_flight == [rel]
    assert [(p["kind"], p["where"]) for p in report.problems] == [("in flight", rel)]
    assert result.exit_code == 1 and f"FAILED in flight: {rel}" in result.output
    report = verify(store)  # no writer: a kill left it
    assert [(p["kind"], p["where"]) for p in report.problems] == [("not accounted for", rel)]
    assert report.in_flight == []


def test_verify_json_with_problems_is_one_json_document(tmp_path: Path) -> None:
    """The problems' FAILED lines were printed after the JSON too (review6), so a
    compliance job's parser failed on a store with a problem."""
    store, _ = _sealed(tmp_path / "store")
    _, rel = _hidden(store)
    result = CliRunner().invoke(main, ["store", "verify", "--store", str(store.root),
                                       "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["first_of_each_kind"][0]["where"] == rel


@pytest.mark.usefixtures("short_settle")
def test_a_bulk_runs_unnamed_part_is_named_when_its_run_does_not_commit_it(
        tmp_path: Path) -> None:
    store, stored = _sealed(tmp_path / "store")
    part = store.root / stored.rsplit("/", 1)[0] / "part-import-run-x.parquet"
    part.write_bytes((store.root / stored).read_bytes())
    rel = part.relative_to(store.root).as_posix()
    with store.bulk_lock():
        report = verify(store)
    assert [(p["kind"], p["where"]) for p in report.problems] == [("in flight", rel)]
    assert [(p["kind"], p["where"]) for p in verify(store).problems] == [
        ("not accounted for", rel)]


def test_a_write_that_ends_while_verify_waits_is_no_problem(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer finishes its write (its hidden file renamed away) once verify has found
    the file beside it and waits: verify then passes, with nothing named."""
    store, _ = _sealed(tmp_path / "store")
    hidden, rel = _hidden(store)
    held, release = threading.Event(), threading.Event()
    waited: list[list[str]] = []
    settled = verify_module._settled

    def writer() -> None:
        with store.writing():
            held.set()
            release.wait(30)
            hidden.unlink()

    def settling(store_: Store, waiting: dict[str, str], report: verify_module.Report,
                 settle: float) -> None:
        waited.append(sorted(waiting))
        release.set()  # the write ends now, while verify looks again
        settled(store_, waiting, report, settle)

    monkeypatch.setattr(verify_module, "_settled", settling)
    thread = threading.Thread(target=writer)
    thread.start()
    held.wait(30)
    report = verify(store)
    thread.join()
    assert waited == [[rel]] and report.ok, report.problems
    assert report.in_flight == []
