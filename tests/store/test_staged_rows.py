"""A bulk run's shoe rows staged as its files are written: the one commit must leave the
catalogue's shoe tables exactly as the rows handed to it whole would, keep the newest-first
index whether it rebuilt it or not, and show nothing of a run that never committed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store, catalog
from roads.store.catalog import INDEX_SCHEMA, KEYS, FileEntry

_ROW = st.tuples(st.sampled_from(["T1", "T2", "tå"]), st.sampled_from(["S1", "S2", "S10"]),
                 st.integers(0, 9))
_FILES = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.lists(_ROW, max_size=8),
                         max_size=3)


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    catalog.install(db)
    return db


def _entries(files: dict[str, Any]) -> list[FileEntry]:
    return [FileEntry(f"{table}/{name}", table, "0" * 64, 1, 1, "0" * 64, "undated", "engine")
            for name in files for table in ("coups", "shoes")]


def _frames(rows: list[tuple[str, str, int]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    keys = pl.DataFrame([r[:2] for r in rows], schema=KEYS, orient="row")
    index = pl.DataFrame([(t, s, "standard-8", 8, n, f"2026-01-0{n % 9 + 1}", None, "engine")
                          for t, s, n in rows], schema=INDEX_SCHEMA, orient="row")
    return keys, index


def _tables(db: sqlite3.Connection) -> list[list[tuple[Any, ...]]]:
    return [db.execute(f"SELECT * FROM {t} ORDER BY table_id, shoe_id, path").fetchall()
            for t in ("catalog_shoes", "shoe_index")]


@settings(max_examples=60, deadline=None)
@given(_FILES, _FILES)
def test_staged_rows_commit_what_the_whole_rows_would(
        before: dict[str, list[tuple[str, str, int]]],
        files: dict[str, list[tuple[str, str, int]]]) -> None:
    """Duplicates within and across files, a store already holding rows or none (the
    newest-first index rebuilt or kept): the same rows, once each, the first of equal keys
    kept, and the index there afterwards."""
    whole, staged_db = _db(), _db()
    for db in (whole, staged_db):  # rows already stored, committed whole
        frames = {name: _frames(rows) for name, rows in before.items()}
        entries = [FileEntry(f"{t}/old-{name}", t, "0" * 64, 1,
                             len(before[name]), "0" * 64, "undated", "engine")
                   for name in before for t in ("coups", "shoes")]
        catalog.record(db, 1, "2026-01-01", entries, catalog.shoe_rows(
            entries, {f"coups/old-{n}": k for n, (k, _) in frames.items()},
            {f"shoes/old-{n}": i for n, (_, i) in frames.items()}))
    frames = {name: _frames(rows) for name, rows in files.items()}
    entries = _entries(files)
    catalog.record(whole, 2, "2026-01-02", entries, catalog.shoe_rows(
        entries, {f"coups/{n}": k for n, (k, _) in frames.items()},
        {f"shoes/{n}": i for n, (_, i) in frames.items()}))
    staged = catalog.StagedRows(staged_db)
    for name, (keys, index) in frames.items():
        staged.add(f"coups/{name}", keys, None)
        staged.add(f"shoes/{name}", None, index)
    staged_db.execute("BEGIN")
    catalog.record(staged_db, 2, "2026-01-02", entries, staged)
    staged_db.execute("COMMIT")
    staged.close()
    assert _tables(staged_db) == _tables(whole)
    assert staged_db.execute("SELECT count(*) FROM sqlite_master WHERE name = "
                             "'shoe_index_newest'").fetchone()[0] == 1
    assert staged_db.execute("SELECT count(*) FROM sqlite_temp_master").fetchone()[0] == 0


def test_engine_runs_page_newest_first_with_the_index_rebuilt_or_kept(tmp_path: Path) -> None:
    """The first run into a store rebuilds the newest-first index (its rows outnumber the
    stored ones), a small second run keeps it: the history page is the shoes newest first
    either way, by the index."""
    store = Store.create(tmp_path / "s")
    rules = get_rules("standard-8")
    write_simulation(Simulation(rules, shoes=40, seed=1, tables=3, batch_shoes=16), store)
    write_simulation(Simulation(rules, shoes=6, seed=2, tables=2, table_prefix="B"), store)
    shoes = store.read.shoes()
    assert shoes.height == 46
    page, total = store.read.shoe_page(limit=100)
    expected = shoes.sort(["started_at", "table_id", "shoe_id"],
                          descending=[True, False, False])
    assert total == 46
    assert page.select("table_id", "shoe_id").rows() == \
        expected.select("table_id", "shoe_id").rows()
    plan = " ".join(str(r) for r in store.journal.connection().execute(
        "EXPLAIN QUERY PLAN SELECT * FROM shoe_index ORDER BY started_at DESC LIMIT 5"))
    assert "shoe_index_newest" in plan
    assert store.info()["problems"] == []
