"""`roads store verify` against the catalogue's derived shoe tables: the shoes each coups
file holds (``catalog_shoes``) and the shoe index (``shoe_index``) are compared with the
files, whatever characters a tampered row holds."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store, catalog
from roads.store.verify import verify


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalogue") / "store"
    store = Store.create(root)
    write_simulation(Simulation(get_rules("standard-8"), shoes=12, seed=3, tables=2,
                                batch_shoes=4), store)
    assert verify(store).ok
    return root


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Store:
    shutil.copytree(pristine, tmp_path / "store")
    return Store.open(tmp_path / "store")


def _problems(store: Store) -> list[tuple[str, str]]:
    return [(p["kind"], p["where"]) for p in verify(store).problems]


def _one(store: Store, table: str) -> tuple[str, str, str]:
    row = store.journal.connection().execute(
        f"SELECT table_id, shoe_id, path FROM {table} ORDER BY path, shoe_id LIMIT 1"
    ).fetchone()
    return str(row[0]), str(row[1]), str(row[2])


@pytest.mark.parametrize("forged", ['x", "y', "line\nbreak", "é–ß", "", "\x1f\x00tail"])
def test_a_renamed_shoe_in_the_file_list_is_named(store: Store, forged: str) -> None:
    table_id, shoe_id, path = _one(store, "catalog_shoes")
    db = store.journal.connection()
    with db:
        db.execute("UPDATE catalog_shoes SET shoe_id = ? WHERE table_id = ? AND shoe_id = ? "
                   "AND path = ?", (forged, table_id, shoe_id, path))
    assert _problems(store) == [("catalogue", path)]


@pytest.mark.parametrize(("table", "change"), [
    ("catalog_shoes", "DELETE FROM catalog_shoes"),  # a shoe dropped from a file's list
    ("shoe_index", "UPDATE shoe_index SET coups = coups + 1, source = NULL"),  # altered
    ("shoe_index", "INSERT INTO shoe_index SELECT table_id, shoe_id || ' ', path, rules, "
                   "decks, coups, started_at, ended_at, source FROM shoe_index"),  # a row more
])
def test_a_changed_catalogue_row_is_named(store: Store, table: str, change: str) -> None:
    table_id, shoe_id, path = _one(store, table)
    db = store.journal.connection()
    with db:
        db.execute(f"{change} WHERE table_id = ? AND shoe_id = ? AND path = ?",
                   (table_id, shoe_id, path))
    assert _problems(store) == [("catalogue", path)]


@pytest.mark.parametrize(("table", "other"), [("catalog_shoes", "shoes"),
                                              ("shoe_index", "coups"), ("catalog_shoes", None)])
def test_shoe_rows_naming_a_file_of_another_kind_or_none_are_named(
        store: Store, table: str, other: str | None) -> None:
    """A shoe-table row pointing at a shoes file (for the coups list), at a coups file (for
    the index) or at no file of the journal would send readers to the wrong file: named."""
    db = store.journal.connection()
    path = "coups/date=2026-01-01/part-forged.parquet" if other is None else db.execute(
        "SELECT path FROM catalog WHERE tbl = ? ORDER BY path LIMIT 1", (other,)).fetchone()[0]
    columns = "table_id, shoe_id, path" if table == "catalog_shoes" else \
        "table_id, shoe_id, path, rules, decks, coups, started_at, ended_at, source"
    source = "table_id, shoe_id, ?" if table == "catalog_shoes" else \
        "table_id, shoe_id, ?, rules, decks, coups, started_at, ended_at, source"
    with db:
        db.execute(f"INSERT INTO {table} ({columns}) SELECT {source} FROM {table} LIMIT 1",
                   (path,))
    assert ("catalogue", path) in _problems(store)


_KEYS = st.tuples(st.sampled_from(["T1", "T2", "tå"]), st.sampled_from(["S1", "S2", "S10"]),
                  st.integers(0, 9))


@settings(deadline=None)  # (no timing assert: a loaded machine took 0.4 s)
@given(st.dictionaries(st.sampled_from(["coups/a", "coups/b", "shoes/c"]),
                       st.lists(_KEYS, max_size=6), max_size=3))
def test_a_small_file_event_lists_its_shoe_rows_as_a_large_one_does(
        files: dict[str, list[tuple[str, str, int]]]) -> None:
    """Sorted in Python (a seal's few rows) or by polars (an ingest's many), the rows a
    file event adds to the shoe tables are the same, once each, in the same order."""
    frames = {path: pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String,
                                               "coups": pl.Int64}, orient="row")
              for path, rows in files.items()}
    columns = ("table_id", "shoe_id", "coups")
    small = list(catalog._sorted(frames, columns))
    if not small:
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(catalog, "SMALL", 0)
        assert list(catalog._sorted(frames, columns)) == small
    keys = [(t, s, p) for t, s, p, _ in small]
    assert keys == sorted(set(keys))
