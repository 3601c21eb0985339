"""Spark local mode gives exactly the local engine's results (and fails clearly)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import polars as pl
import pytest

from roads.errors import InputError
from roads.rules import get_rules
from roads.scale import engines as e
from roads.schema import COUPS
from roads.simulate import Simulation
from roads.store.parquet import AtomicParquetWriter, scan

OPTIONS = e.SparkOptions("local[2]", partitions=3)


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    session = e.spark_session(OPTIONS)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    sim = Simulation(get_rules("standard-6"), shoes=60, seed=44, tables=4, batch_shoes=16)
    e.simulate_local(sim, root)
    return root


def test_seeded_simulation_is_identical(spark: object, tmp_path: Path) -> None:
    sim = Simulation(get_rules("casino-6"), shoes=37, seed=9, tables=3, batch_shoes=8)
    local = e.simulate_local(sim, tmp_path / "local")
    remote = e.simulate_spark(sim, tmp_path / "spark", OPTIONS)
    assert local == remote
    for table in ("coups", "shoes"):
        key = ["table_id", "shoe_id", *(["coup"] if table == "coups" else [])]
        a = scan(tmp_path / "local", table).collect().sort(key)
        b = scan(tmp_path / "spark", table).collect().sort(key)
        assert a.equals(b)
    # Other partitionings give the same shoes too.
    e.simulate_spark(sim, tmp_path / "one", e.SparkOptions("local[1]", partitions=1))
    assert scan(tmp_path / "one", "coups").collect().sort("table_id", "shoe_id", "coup").equals(
        scan(tmp_path / "local", "coups").collect().sort("table_id", "shoe_id", "coup"))


def test_roads_are_identical(spark: object, dataset: Path, tmp_path: Path) -> None:
    ties: Literal["first-cell", "own-column"]
    for ties in ("first-cell", "own-column"):
        local = e.roads_local(dataset, tmp_path / f"l-{ties}", ties)
        remote = e.roads_spark(dataset, tmp_path / f"s-{ties}", ties, OPTIONS)
        assert remote.height == 60
        assert remote.sort("table_id", "shoe_id").equals(local.sort("table_id", "shoe_id"))
        written = pl.read_parquet(tmp_path / f"s-{ties}" / "roads" / "part-0.parquet")
        assert written.height == 60


def test_statistics_are_identical(spark: object, dataset: Path, tmp_path: Path) -> None:
    local = e.stats_local(dataset, tmp_path / "l", 0.99)
    remote = e.stats_spark(dataset, tmp_path / "s", 0.99, OPTIONS)
    assert remote == local  # counts summed exactly, floats in the same order
    assert local["statistics"]["coups"] == scan(dataset, "coups").collect().height
    assert (tmp_path / "s" / "stats.json").exists()


def test_a_malformed_partition_fails_clearly(spark: object, dataset: Path,
                                             tmp_path: Path) -> None:
    bad_store = tmp_path / "bad"
    bad = scan(dataset, "coups").collect().head(30).with_columns(
        pl.lit("BAD").alias("shoe_id"),
        pl.col("outcome").cast(pl.String).str.replace("B", "X").alias("outcome"))
    path = bad_store / "coups" / "part-bad.parquet"
    path.parent.mkdir(parents=True)
    bad.write_parquet(path)  # an outcome no canonical writer would produce
    with pytest.raises(InputError, match="malformed coups: shoe SIM-01/BAD"):
        e.stats_spark(bad_store, tmp_path / "out", 0.99, OPTIONS)
    with pytest.raises(InputError, match="malformed coups"):
        e.roads_spark(bad_store, tmp_path / "out", "first-cell", OPTIONS)
    # A canonical file still works beside it once the bad one is gone.
    path.unlink()
    with AtomicParquetWriter(path.parent / "part-ok.parquet", "coups", {}) as writer:
        writer.write(scan(dataset, "coups").collect().head(200).select(list(COUPS)).to_arrow())
    assert e.stats_spark(bad_store, tmp_path / "out", 0.99, OPTIONS)["statistics"]["coups"] \
        == 200


def test_shoes_cut_across_partitions_are_repaired(spark: object, dataset: Path,
                                                  tmp_path: Path) -> None:
    from roads.store import Store

    store = Store.create(tmp_path / "store")
    coups = scan(dataset, "coups").collect()
    store.append(coups, scan(dataset, "shoes").collect(), {"source": "engine"}, name="all")
    shoe = coups.filter(pl.col("shoe_id") == coups["shoe_id"][0]).with_columns(
        pl.lit("CUT").alias("shoe_id"))
    store.append(shoe.head(25), None, {"source": "import"}, name="cut-a")
    store.append(shoe.tail(shoe.height - 25), None, {"source": "import"}, name="cut-b")
    small = e.SparkOptions("local[2]", partitions=3, max_partition_bytes=1024)
    try:
        remote_roads = e.roads_spark(store.root, tmp_path / "s", "first-cell", small)
        remote_stats = e.stats_spark(store.root, tmp_path / "s", 0.99, small)
    finally:
        e.spark_session(OPTIONS)  # restore the default split size for the other tests
    local_roads = e.roads_local(store.root, tmp_path / "l", "first-cell")
    assert remote_roads.filter(pl.col("shoe_id") == "CUT")["coups"].to_list() == [shoe.height]
    assert remote_roads.equals(local_roads.sort("table_id", "shoe_id"))
    assert remote_stats == e.stats_local(store.root, tmp_path / "l", 0.99)
