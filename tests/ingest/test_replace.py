"""``ingest --replace``: a file imported again amends what differs, through the journal.

The amendments are ``coup_amended`` events journaled in the run's commit transaction, so
every reader applies them like any correction, the old rows stay as the originals, and a
run killed anywhere shows none of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roads.ingest.readers import ReadOptions
from roads.ingest.run import LIVE_SHOE, IngestResult, ingest
from roads.rules import get_rules
from roads.store import Selection, Store
from roads.store.verify import verify
from tests.floor import Floor

HEADER = "Table,Shoe,Hand No,Result,Hand A,Hand B\n"
#: Three coups of T1/S1 with their hands, under headers ingest does not know as cards.
ROWS = ["T1,S1,1,P,9h Kd,5s 2c", "T1,S1,2,B,\"10h,Qc,5d\",\"7s,Kh\"", "T1,S1,3,T,4d 3c,2h 5s"]
CARDS = {"player_cards": "Hand A", "banker_cards": "Hand B"}


def _file(tmp_path: Path, rows: list[str], name: str = "export.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def _ingest(store: Store, path: Path, replace: bool = False, actor: str = "ana",
            **options: Any) -> IngestResult:
    return ingest([path], store, ReadOptions(**options), get_rules("standard-8"), actor=actor,
                  replace=replace)


def _content(store: Store, originals: bool = False) -> list[tuple[Any, ...]]:
    return [(r["coup"], r["outcome"], r["player_cards"], r["banker_cards"]) for r in
            store.read.coups(Selection("T1"), originals=originals).iter_rows(named=True)]


def test_a_file_stored_outcome_only_is_re_imported_with_its_cards(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    path = _file(tmp_path, ROWS)
    first = _ingest(store, path)
    assert first.report["files"][0]["warnings"]  # it said the cards were not read
    assert [c[2] for c in _content(store)] == [None, None, None]
    again = _ingest(store, path, mapping=CARDS)  # the same file, without --replace
    assert again.report["files"][0]["skipped"] == (
        f"already ingested (run {first.report['run']}; --replace imports it again)")
    replaced = _ingest(store, path, replace=True, mapping=CARDS)
    f = replaced.report["files"][0]
    assert (f["replaced"], f["accepted"], f["already_stored"], f["warnings"]) == (3, 0, 0, [])
    assert replaced.report["totals"]["replaced"] == 3
    assert _content(store) == [(1, "P", ["9h", "Kd"], ["5s", "2c"]),
                               (2, "B", ["Th", "Qc", "5d"], ["7s", "Kh"]),
                               (3, "T", ["4d", "3c"], ["2h", "5s"])]
    assert [c[2] for c in _content(store, originals=True)] == [None, None, None]
    # Journaled like a correction, by the importer, and said to be a re-import.
    run = replaced.report["run"]
    amended = store.journal.of_kinds(("coup_amended",))
    assert [e.payload["coup"] for e in amended] == [1, 2, 3]
    for e in amended:
        assert (e.table_id, e.shoe_id, e.actor, e.payload["approver"]) == ("T1", "S1", "ana",
                                                                            "ana")
        assert e.payload["replace"] is True and e.payload["run"] == run
        assert e.payload["reason"] == f"re-import of export.csv with --replace (run {run})"
    # In the run's commit, before its import_committed event, which is the run's last.
    commit = next(e for e in store.journal.of_kinds(("import_committed",))
                  if e.payload["run"] == run)
    assert [e.seq for e in amended] == [commit.seq - 3, commit.seq - 2, commit.seq - 1]
    assert store.journal.head()[0] == commit.seq
    assert verify(store).ok
    # Once more: nothing differs, nothing is journaled.
    still = _ingest(store, path, replace=True, mapping=CARDS).report["files"][0]
    assert (still["replaced"], still["already_stored"]) == (0, 3)
    assert len(store.journal.of_kinds(("coup_amended",))) == 3


def test_an_edited_file_amends_what_differs_adds_what_is_new_and_leaves_the_rest(
        tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    _ingest(store, _file(tmp_path, ROWS), mapping=CARDS)
    edited = _file(tmp_path, [ROWS[0], "T1,S1,2,P,9h Kd,5s 2c", "T1,S1,4,B,4h 3c,Kd 9s"],
                   "edited.csv")  # coup 2 changed, coup 3 not in it, coup 4 new
    plain = _ingest(store, edited, mapping=CARDS).report["files"][0]
    assert (plain["conflicts"], plain["accepted"], plain["quarantined"]) == (1, 1, 1)
    store = Store.create(tmp_path / "fresh")  # the same, with --replace, on a fresh store
    _ingest(store, _file(tmp_path, ROWS), mapping=CARDS)
    f = _ingest(store, edited, replace=True, mapping=CARDS).report["files"][0]
    assert (f["replaced"], f["accepted"], f["already_stored"], f["quarantined"],
            f["conflicts"]) == (1, 1, 1, 0, 0)
    assert _content(store) == [(1, "P", ["9h", "Kd"], ["5s", "2c"]),
                               (2, "P", ["9h", "Kd"], ["5s", "2c"]),
                               (3, "T", ["4d", "3c"], ["2h", "5s"]),
                               (4, "B", ["4h", "3c"], ["Kd", "9s"])]
    assert _content(store, originals=True)[1] == (2, "B", ["Th", "Qc", "5d"], ["7s", "Kh"])


def test_replace_of_a_file_never_ingested_is_an_ordinary_ingest(tmp_path: Path) -> None:
    path = _file(tmp_path, ROWS)
    plain, replaced = Store.create(tmp_path / "a"), Store.create(tmp_path / "b")
    one = _ingest(plain, path, mapping=CARDS).report["files"][0]
    two = _ingest(replaced, path, replace=True, mapping=CARDS).report["files"][0]
    assert two.pop("replace") is True and two.pop("kept_void") == 0
    assert one == two
    assert _content(plain) == _content(replaced)
    assert replaced.journal.of_kinds(("coup_amended",)) == []


def test_a_voided_coup_stays_void_and_a_live_shoe_is_never_amended(tmp_path: Path) -> None:
    floor = Floor(tmp_path / "store")
    _ingest(floor.store, _file(tmp_path, ROWS), mapping=CARDS)
    floor.void("T1", "S1", 2)
    floor.open_shoe("T1", "L1")
    floor.coup("T1", "B")
    edited = _file(tmp_path, ["T1,S1,2,P,9h Kd,5s 2c", "T1,L1,1,P,9h Kd,5s 2c"], "e.csv")
    f = _ingest(floor.store, edited, replace=True, mapping=CARDS).report["files"][0]
    assert (f["replaced"], f["kept_void"], f["accepted"]) == (0, 1, 0)
    assert f["quarantined_by_reason"] == {LIVE_SHOE: 1}
    stored = floor.store.read.coups(Selection("T1", "S1"))
    assert stored["coup"].to_list() == [1, 3]  # coup 2 still void
    live = floor.store.read.coups(Selection("T1", "L1"))
    assert live["outcome"].to_list() == ["B"]


RUN = """
import sys
from pathlib import Path
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store
ingest([Path(sys.argv[2])], Store.open(Path(sys.argv[1])),
       ReadOptions(mapping={"player_cards": "Hand A", "banker_cards": "Hand B"}),
       get_rules("standard-8"), replace=True)
"""


@pytest.mark.parametrize("at", ["ingest:before-commit", "store:committing"])
def test_a_replace_killed_before_or_inside_its_commit_amends_nothing(tmp_path: Path,
                                                                     at: str) -> None:
    store = Store.create(tmp_path / "store")
    path = _file(tmp_path, ROWS)
    _ingest(store, path)
    before = _content(store)
    env = {**os.environ, "ROADS_KILL_AT": at}
    done = subprocess.run([sys.executable, "-c", RUN, str(store.root), str(path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == -9, done.stderr
    store = Store.open(store.root)
    assert store.journal.of_kinds(("coup_amended",)) == []
    assert _content(store) == before and len(store.journal.of_kinds(("import_committed",))) == 1
    rerun = _ingest(store, path, replace=True, mapping=CARDS).report["files"][0]
    assert rerun["replaced"] == 3 and len(store.journal.of_kinds(("coup_amended",))) == 3
    assert verify(store).ok


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from("BPT"), min_size=1, max_size=12), st.data())
def test_after_a_replace_the_store_reads_as_the_file_over_what_it_held(
        first: list[str], data: st.DataObject) -> None:
    """Invariant: a shoe re-imported with --replace reads as the old coups overwritten by
    the file's (coups missing from the file unchanged, new ones added); the originals are
    the old coups plus the new ones; the report counts exactly the coups that changed."""
    edits = data.draw(st.lists(st.sampled_from(["keep", "drop", "B", "P", "T"]),
                               min_size=len(first), max_size=len(first)))
    extra = data.draw(st.lists(st.sampled_from("BPT"), max_size=4))
    second = {n: (o if e == "keep" else e) for n, (o, e) in enumerate(zip(first, edits,
                                                                         strict=True), 1)
              if e != "drop"}
    second.update({len(first) + i: o for i, o in enumerate(extra, 1)})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = Store.create(root / "store")
        old = root / "old.csv"
        old.write_text("table,shoe,coup,result\n" + "".join(
            f"T1,S1,{n},{o}\n" for n, o in enumerate(first, 1)))
        new = root / "new.csv"
        new.write_text("table,shoe,coup,result\n" + "".join(
            f"T1,S1,{n},{o}\n" for n, o in second.items()))
        _ingest(store, old)
        report = _ingest(store, new, replace=True).report["files"][0]
        expected = {**dict(enumerate(first, 1)), **second}
        assert [(c[0], c[1]) for c in _content(store)] == sorted(expected.items())
        originals = {**{n: o for n, o in second.items() if n > len(first)},
                     **dict(enumerate(first, 1))}
        assert [(c[0], c[1]) for c in _content(store, originals=True)] == \
            sorted(originals.items())
        changed = sum(1 for n, o in second.items() if n <= len(first) and first[n - 1] != o)
        assert report["replaced"] == changed and report["accepted"] == len(extra)


def test_the_command_takes_replace_and_says_how_many_were_replaced(tmp_path: Path) -> None:
    path = _file(tmp_path, ROWS)
    store = tmp_path / "store"
    cmd = [sys.executable, "-m", "roads.cli", "ingest", str(path), "--store", str(store)]
    assert subprocess.run(cmd, capture_output=True, timeout=300).returncode == 0
    done = subprocess.run([*cmd, "--replace", "--map", "player_cards=Hand A", "--map",
                           "banker_cards=Hand B"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert ": 3 rows read, 0 stored, 3 replaced, 0 already stored" in done.stdout
    entries = Store.open(store).journal.of_kinds(("coup_amended",))
    assert len(entries) == 3 and entries[0].actor == os.environ.get("USER", "cli")


def test_a_file_given_twice_in_one_run_is_read_once(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    path = _file(tmp_path, ROWS)
    result = ingest([path, path], store, ReadOptions(mapping=CARDS), get_rules("standard-8"),
                    replace=True)
    assert result.report["files"][1]["skipped"] == "listed twice in this run"
    assert len(_content(store)) == 3


def test_two_files_of_one_run_store_a_shared_coup_and_shoe_once(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    a = _file(tmp_path, ROWS[:2], "a.csv")
    b = _file(tmp_path, [ROWS[1], "T1,S1,3,P,9h Kd,5s 2c"], "b.csv")
    result = ingest([a, b], store, ReadOptions(mapping=CARDS), get_rules("standard-8"))
    assert [f["already_stored"] for f in result.report["files"]] == [0, 1]
    assert [c[0] for c in _content(store)] == [1, 2, 3]
    assert store.read.shoes(Selection("T1")).height == 1 and verify(store).ok
    changed = _file(tmp_path, ["T1,S1,2,P,9h Kd,5s 2c"], "c.csv")  # differs from a.csv's
    both = ingest([a, changed], Store.create(tmp_path / "two"), ReadOptions(mapping=CARDS),
                  get_rules("standard-8"))
    assert both.report["files"][1]["conflicts"] == 1


def test_an_export_lists_the_re_import_as_corrections_and_verifies(tmp_path: Path) -> None:
    from roads.audit.bundle import Slice, export_bundle
    from roads.audit.bundle import verify as verify_bundle

    store = Store.create(tmp_path / "store")
    path = _file(tmp_path, ROWS)
    _ingest(store, path)
    _ingest(store, path, replace=True, mapping=CARDS)
    out = tmp_path / "bundle"
    export_bundle(store, Slice(table_id="T1"), out, "auditor")
    assert verify_bundle(out)["files"]["corrections.csv"]["rows"] == 3
    corrections = pl.read_parquet(out / "corrections.parquet")
    assert corrections["kind"].to_list() == ["coup_amended"] * 3
    assert set(corrections["requested_by"]) == set(corrections["approved_by"]) == {"ana"}
    assert corrections["reason"][0].startswith("re-import of export.csv with --replace")
