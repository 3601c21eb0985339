"""`roads store verify` with the reads its command starts before the data stack loads
(``roads.store.early``: every catalogued file's SHA-256, the catalogue's shoe tables and
each coups file's distinct keys):
the report is the one verify gives reading everything itself, tampered or not, and a read
that failed ahead is done again."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store, catalog
from roads.store.early import SHOE_TABLES, EarlyReads
from roads.store.verify import verify


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("early") / "store"
    write_simulation(Simulation(get_rules("standard-8"), shoes=12, seed=5, tables=2,
                                batch_shoes=4), Store.create(root))
    return root


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    shutil.copytree(pristine, tmp_path / "store")
    return tmp_path / "store"


def _a_coups_file(root: Path) -> Path:
    return sorted((root / "coups").rglob("part-*.parquet"))[0]


def _flip_a_byte(root: Path) -> None:
    path = _a_coups_file(root)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _an_extra_file(root: Path) -> None:
    shutil.copy(_a_coups_file(root), _a_coups_file(root).with_name("part-extra.parquet"))


def _sql(sql: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        db = Store.open(root).journal.connection()
        with db:
            db.execute(sql)
    return change


TAMPERINGS: dict[str, Callable[[Path], None]] = {
    "nothing": lambda root: None,
    "a flipped byte": _flip_a_byte,
    "a deleted file": lambda root: _a_coups_file(root).unlink(),
    "an extra file": _an_extra_file,
    "a shoe dropped from a file's list": _sql(
        "DELETE FROM catalog_shoes WHERE (table_id, shoe_id, path) IN "
        "(SELECT table_id, shoe_id, path FROM catalog_shoes ORDER BY path LIMIT 1)"),
    "an altered shoe index row": _sql(
        "UPDATE shoe_index SET coups = coups + 1 WHERE (table_id, shoe_id, path) IN "
        "(SELECT table_id, shoe_id, path FROM shoe_index ORDER BY path LIMIT 1)"),
}


@pytest.mark.parametrize("tampering", list(TAMPERINGS))
def test_the_report_is_the_same_with_the_reads_started_ahead(root: Path,
                                                             tampering: str) -> None:
    TAMPERINGS[tampering](root)
    early = EarlyReads(root)
    early.read_keys()
    with_early = verify(Store.open(root), early=early)
    alone = verify(Store.open(root))
    early.close()
    assert with_early.problems == alone.problems
    assert with_early.to_json() == alone.to_json()
    assert with_early.ok == (tampering == "nothing")
    # the reads were made ahead: a hash for every catalogued file, both shoe tables
    assert set(early.shoe_tables) == set(SHOE_TABLES)
    coups_files = {e.path for e in catalog.files(Store.open(root).journal.connection(), "coups")}
    assert set(early.keys) == coups_files
    for rel, future in early.hashes.items():
        path = root / rel
        assert future.result() == (hashlib.sha256(path.read_bytes()).hexdigest()
                                   if path.is_file() else None)


def _failed() -> Future[Any]:
    future: Future[Any] = Future()
    future.set_exception(OSError("read failed ahead"))
    return future


def test_reads_that_failed_ahead_are_read_again(root: Path) -> None:
    _flip_a_byte(root)
    early = EarlyReads(root)
    early.read_keys()
    for reads in (early.hashes, early.shoe_tables, early.keys):
        for name in reads:
            reads[name] = _failed()
    assert verify(Store.open(root), early=early).problems == verify(Store.open(root)).problems
    assert [p["kind"] for p in verify(Store.open(root), early=early).problems] == ["altered"]


def test_no_store_is_read_and_nothing_is_made(tmp_path: Path) -> None:
    early = EarlyReads(tmp_path / "none")
    assert early.hashes == {} and early.shoe_tables == {}
    assert not (tmp_path / "none").exists()
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "journal.sqlite").write_bytes(b"")  # not a store's journal
    early = EarlyReads(tmp_path / "empty")
    assert early.hashes == {} and early.shoe_tables == {}
    assert (tmp_path / "empty" / "journal.sqlite").read_bytes() == b""


def test_a_store_named_by_a_relative_path_is_read_ahead(root: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """(`roads store verify --store data/store`, as README has it.)"""
    monkeypatch.chdir(root.parent)
    early = EarlyReads(Path(root.name))
    early.read_keys()
    assert early.hashes and early.keys and set(early.shoe_tables) == set(SHOE_TABLES)
    report = verify(Store.open(Path(root.name)), early=early)
    assert report.ok and report.to_json() == verify(Store.open(root)).to_json()


def test_the_shoe_index_checks_beside_the_coups_checks_keep_their_place(root: Path) -> None:
    """The shoes files are checked against the shoe index on a thread of their own, beside
    the coups files' checks: their problems still come after the coups files' (and before
    a live shoe's copy), as they did when the checks ran one after the other."""
    for change in ("a shoe dropped from a file's list", "an altered shoe index row"):
        TAMPERINGS[change](root)
    dropped_from = {e.path for e in catalog.files(Store.open(root).journal.connection(), "coups")}
    report = verify(Store.open(root))
    places = [(p["kind"], p["where"].split("/")[0]) for p in report.problems]
    assert places == [("catalogue", "coups"), ("catalogue", "shoes")]
    assert report.problems[0]["where"] in dropped_from
    assert "shoe index" in report.problems[1]["detail"]
