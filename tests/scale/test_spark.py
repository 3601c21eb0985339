"""Spark local mode gives exactly the local engine's results (and fails clearly)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import polars as pl
import pytest

from roads.errors import InputError
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.scale import engines as e
from roads.simulate import Simulation
from roads.store import Store
from tests.floor import Floor

OPTIONS = e.SparkOptions("local[2]", partitions=3)


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    session = e.spark_session(OPTIONS)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store.create(tmp_path_factory.mktemp("data"))
    sim = Simulation(get_rules("standard-6"), shoes=60, seed=44, tables=4, batch_shoes=16)
    e.simulate_local(sim, store)
    return store


def test_seeded_simulation_is_identical(spark: object, tmp_path: Path) -> None:
    sim = Simulation(get_rules("casino-6"), shoes=37, seed=9, tables=3, batch_shoes=8)
    local, remote = Store.create(tmp_path / "local"), Store.create(tmp_path / "spark")
    assert e.simulate_local(sim, local) == e.simulate_spark(sim, remote, OPTIONS)
    assert local.read.coups().equals(remote.read.coups())
    assert local.read.shoes().sort("table_id", "shoe_id").equals(
        remote.read.shoes().sort("table_id", "shoe_id"))
    assert remote.info()["problems"] == []  # the executors' files are journaled
    # Other partitionings give the same shoes too.
    one = Store.create(tmp_path / "one")
    e.simulate_spark(sim, one, e.SparkOptions("local[1]", partitions=1))
    assert one.read.coups().equals(local.read.coups())


def test_roads_are_identical(spark: object, dataset: Store, tmp_path: Path) -> None:
    ties: Literal["first-cell", "own-column"]
    for ties in ("first-cell", "own-column"):
        local = e.roads_local(dataset, tmp_path / f"l-{ties}", ties)
        remote = e.roads_spark(dataset, tmp_path / f"s-{ties}", ties, OPTIONS)
        assert remote.height == 60
        assert remote.sort("table_id", "shoe_id").equals(local.sort("table_id", "shoe_id"))
        written = pl.read_parquet(tmp_path / f"s-{ties}" / "roads" / "part-0.parquet")
        assert written.height == 60


def test_statistics_are_identical(spark: object, dataset: Store, tmp_path: Path) -> None:
    local = e.stats_local(dataset, tmp_path / "l", 0.99)
    remote = e.stats_spark(dataset, tmp_path / "s", 0.99, OPTIONS)
    assert remote == local  # counts summed exactly, floats in the same order
    assert local["statistics"]["coups"] == dataset.read.coups().height
    assert (tmp_path / "s" / "stats.json").exists()


def test_a_damaged_file_fails_clearly(spark: object, dataset: Store, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "bad"
    shutil.copytree(dataset.root, root)
    store = Store.open(root)
    path = sorted((root / "coups").rglob("part-*.parquet"))[0]
    bad = pl.read_parquet(path).with_columns(
        pl.col("outcome").cast(pl.String).str.replace("B", "X").alias("outcome"))
    bad.write_parquet(path)  # an outcome no canonical writer would produce
    with pytest.raises(InputError, match=path.name):
        e.stats_spark(store, tmp_path / "out", 0.99, OPTIONS)
    with pytest.raises(InputError, match="malformed coups"):
        e.roads_spark(store, tmp_path / "out", "first-cell", OPTIONS)


def test_corrected_open_and_cut_shoes_give_the_local_results(spark: object, dataset: Store,
                                                             tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "store"
    shutil.copytree(dataset.root, root)
    store = Store.open(root)
    coups = store.read.coups()
    shoe = coups.filter(pl.col("shoe_id") == coups["shoe_id"][0]).sort("coup")
    for n, part in enumerate((shoe.head(25), shoe.tail(shoe.height - 25))):  # cut in two
        csv = tmp_path / f"cut{n}.csv"
        part.select(pl.lit("CUT").alias("table"), "shoe_id", "coup",
                    pl.col("outcome").cast(pl.String)).write_csv(csv)
        ingest([csv], store, ReadOptions(), get_rules("standard-6"))
    floor = Floor(store)
    floor.void(str(coups["table_id"][0]), str(coups["shoe_id"][0]), 3)  # a corrected file
    floor.open_shoe("L1", "open")  # an open shoe, read from the journal
    floor.coups("L1", "BPPBT")
    remote_roads = e.roads_spark(store, tmp_path / "s", "first-cell", OPTIONS)
    remote_stats = e.stats_spark(store, tmp_path / "s", 0.99, OPTIONS)
    local_roads = e.roads_local(store, tmp_path / "l", "first-cell")
    assert remote_roads.filter(pl.col("table_id") == "CUT")["coups"].to_list() == [shoe.height]
    assert remote_roads.filter(pl.col("table_id") == "L1")["coups"].to_list() == [5]
    assert remote_roads.equals(local_roads.sort("table_id", "shoe_id"))
    assert remote_stats == e.stats_local(store, tmp_path / "l", 0.99)
    assert remote_stats["statistics"]["coups"] == coups.height - 1 + shoe.height + 5


def test_a_file_without_times_gives_the_local_pace(spark: object, dataset: Store,
                                                   tmp_path: Path) -> None:
    """One imported file whose coups carry no times: the local engine reports no pace for
    the whole store (a rate over part of it would read as the floor's), so Spark must too."""
    import shutil

    root = tmp_path / "store"
    shutil.copytree(dataset.root, root)
    store = Store.open(root)
    csv = tmp_path / "untimed.csv"
    pl.DataFrame({"table": ["U1"] * 6, "shoe": ["u"] * 6, "coup": list(range(1, 7)),
                  "outcome": list("BPBBTP")}).write_csv(csv)
    ingest([csv], store, ReadOptions(), get_rules("standard-6"))
    local = e.stats_local(store, tmp_path / "l", 0.99)
    assert local["statistics"]["pace"]["coups_per_hour"] is None
    assert e.stats_spark(store, tmp_path / "s", 0.99, OPTIONS) == local
