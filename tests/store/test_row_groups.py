"""A part file of several row groups streams whole: pyarrow cannot make one batch of the cards
(lists of dictionary values) from two row groups, and a 1 M-coup export failed on it."""

from __future__ import annotations

from functools import partialmethod
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest

from roads.audit.bundle import Slice, export_bundle
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """Six shoes written in row groups of 50 rows, as a large part is written in many."""
    write = pq.write_table

    def small_groups(*args: Any, **kwargs: Any) -> None:
        write(*args, **{**kwargs, "row_group_size": 50})

    with monkeypatch.context() as patch:
        patch.setattr(pl.DataFrame, "write_parquet",
                      partialmethod(pl.DataFrame.write_parquet, row_group_size=50))
        patch.setattr(pq, "write_table", small_groups)
        store = Store.create(tmp_path / "store")
        write_simulation(Simulation(get_rules("standard-8"), shoes=6, seed=8, tables=1), store)
    return store


@pytest.mark.parametrize("rows", [7, 64, 250_000])
def test_chunks_across_row_groups_equal_the_read_port(store: Store, rows: int) -> None:
    parts = list((store.root / "coups").rglob("*.parquet"))
    assert parts and all(pq.ParquetFile(p).num_row_groups > 2 for p in parts)
    streamed = pl.concat(list(store.read.chunks(rows=rows)))
    assert streamed.sort("shoe_id", "coup").equals(store.read.coups().sort("shoe_id", "coup"))


def test_an_export_of_many_row_groups_holds_every_coup(store: Store, tmp_path: Path) -> None:
    manifest = export_bundle(store, Slice(table_id="SIM-01"), tmp_path / "bundle", "auditor")
    assert manifest["files"]["coups.parquet"]["rows"] == store.read.coups().height > 400
