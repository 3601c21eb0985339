"""``roads batch``: roads, statistics and simulation on the local engine or on Spark.

Both engines call the functions of :mod:`roads.scale.jobs` (and the engine kernel), so a
result cannot depend on where it was computed: the tests hold Spark's output equal to the
local one. Spark is optional (``pip install ".[spark]"``); it is imported only here.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from roads.board.board import LeadingTies
from roads.board.bulk import SHOE_ROADS, store_roads
from roads.board.bulk import _file_roads as file_roads
from roads.engine import deal_batch, shoe_seeds
from roads.errors import InputError
from roads.files import publish, publish_text
from roads.store.parquet import AtomicParquetWriter, parts, scan
from roads.scale.jobs import (
    RESULT_DDL,
    STATS_ROWS,
    from_blobs,
    partial_from_rows,
    roads_job,
    stats_file,
    stats_job,
    to_blob,
)
from roads.schema import COUPS
from roads.simulate import Simulation, batch_tables, write_simulation
from roads.stats.randomness import randomness_tests
from roads.stats.report import store_partial
from roads.stats.partials import Partial, finalize, in_shoe_order


@dataclass(frozen=True)
class SparkOptions:
    master: str = "local[2]"
    partitions: int = 8
    max_partition_bytes: int | None = None  # Spark's input split size (default 128 MB)


def spark_session(options: SparkOptions) -> Any:
    """A Spark session whose Python workers use this interpreter (and its packages)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError('Spark is not installed: pip install ".[spark]"') from None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (SparkSession.builder.master(options.master).appName("roads")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", str(options.partitions))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", "4g")
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
            .getOrCreate())
    session.conf.set("spark.sql.files.maxPartitionBytes",
                     str(options.max_partition_bytes or 128 * 1024 * 1024))
    return session


def _coups_paths(store: Path) -> list[str]:
    files = parts(store, "coups")
    if not files:
        raise InputError(f"{store}: no coups to process")
    return [str(f) for f in files]


def _spark_failure(exc: Exception) -> InputError:
    """A Spark job failure, reduced to the first line a user needs."""
    text = str(exc)
    for marker in ("InputError: ", "SchemaError: ", "malformed coups"):
        if marker in text:
            start = text.index(marker) + (len(marker) if marker.endswith(": ") else 0)
            return InputError(text[start:].splitlines()[0])
    return InputError(f"the Spark job failed: {text.splitlines()[0] if text else exc!r}")


# -- roads ---------------------------------------------------------------------------------
def roads_local(store: Path, out: Path, leading_ties: LeadingTies) -> pl.DataFrame:
    result = store_roads(store, leading_ties)
    _write_result(out / "roads", result.to_arrow())
    return result


def roads_spark(store: Path, out: Path, leading_ties: LeadingTies,
                options: SparkOptions) -> pl.DataFrame:
    spark = spark_session(options)

    def job(table: pa.Table) -> pa.Table:
        return roads_job(table, leading_ties)

    def per_file(path: str) -> pa.Table:
        try:
            return file_roads(Path(path), leading_ties)
        except InputError as exc:  # the same words as the per-shoe job
            raise InputError(f"malformed coups: {exc}") from None

    columns = ["table_id", "shoe_id", "coup", "outcome"]
    empty = pl.DataFrame(schema=SHOE_ROADS)
    rows = _run_per_partition(spark, store, options, per_file, empty)
    # A shoe cut across input partitions came back in pieces: recompute those whole.
    split = rows.filter(pl.struct("table_id", "shoe_id").is_duplicated())
    if not split.is_empty():
        keys = split.select("table_id", "shoe_id").unique()
        whole = _run_per_shoe(spark, store, options, columns, job, empty, keys)
        rows = pl.concat([rows.join(keys, on=["table_id", "shoe_id"], how="anti"), whole])
    rows = rows.sort("table_id", "shoe_id")
    _write_result(out / "roads", rows.to_arrow())
    return rows


# -- statistics ----------------------------------------------------------------------------
def _stats_from(part: Partial, level: float) -> dict[str, Any]:
    part = in_shoe_order(part)
    stats = finalize(part)
    return {"statistics": stats, "randomness": randomness_tests(stats, part.sequence, level)}


def stats_local(store: Path, out: Path, level: float) -> dict[str, Any]:
    result = _stats_from(store_partial(store, scan(store, "shoes").collect()), level)
    _write_json(out / "stats.json", result)
    return result


def stats_spark(store: Path, out: Path, level: float, options: SparkOptions) -> dict[str, Any]:
    spark = spark_session(options)
    columns = [c for c in COUPS if c != "source"]
    rows = _run_per_partition(spark, store, options, stats_file, STATS_ROWS)
    split = rows.filter(pl.struct("table_id", "shoe_id").is_duplicated())
    if not split.is_empty():
        # A shoe's run sums cannot be split and re-added: recompute those shoes whole, and
        # recompute the sequence sums of the partitions that held them (rare: a shoe is
        # cut only when a file is larger than a Spark split).
        keys = split.select("table_id", "shoe_id").unique()
        whole = _run_per_shoe(spark, store, options, columns, stats_job, STATS_ROWS, keys)
        rest = _run_per_shoe(spark, store, options, columns, stats_job, STATS_ROWS, keys,
                             anti=True)
        rows = pl.concat([rest, whole])
    part = partial_from_rows(rows, scan(store, "shoes").collect())
    result = _stats_from(part, level)
    _write_json(out / "stats.json", result)
    return result


def _collect(frame: Any, empty: pl.DataFrame) -> pl.DataFrame:
    try:
        table = frame.toArrow()
    except Exception as exc:
        raise _spark_failure(exc) from None
    return from_blobs(table, empty)


def _run_per_partition(spark: Any, store: Path, options: SparkOptions, per_file: Any,
                       empty: pl.DataFrame) -> pl.DataFrame:
    """Run ``per_file`` on every part file, the files spread over the executors.

    Spark schedules file numbers (the paths travel with the task), and each executor reads
    its files with the same reader the local engine uses (no JVM-to-Arrow conversion of the
    rows, no shuffle). Files hold whole shoes; a shoe cut across files is detected and
    repaired by the callers. Paths are strings, so object-storage URLs work where the
    executors can read them.
    """
    files = _coups_paths(store)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield to_blob(per_file(files[index]))

    # File numbers from spark.range are split into partitions where they are generated;
    # a DataFrame of paths would need a shuffle to spread (~0.5 s a job here).
    numbers = spark.range(0, len(files), numPartitions=min(len(files),
                                                            max(1, options.partitions)))
    return _collect(numbers.mapInArrow(run, RESULT_DDL), empty)


def _run_per_shoe(spark: Any, store: Path, options: SparkOptions, columns: list[str],
                  job: Any, empty: pl.DataFrame, keys: pl.DataFrame,
                  anti: bool = False) -> pl.DataFrame:
    """``job`` over whole shoes grouped by key (only, or all but, the shoes in ``keys``)."""
    from pyspark.sql import functions as f

    frame = spark.read.parquet(*_coups_paths(store)).select(*columns)
    wanted = spark.createDataFrame(keys.to_arrow())
    frame = frame.join(f.broadcast(wanted), on=["table_id", "shoe_id"],
                       how="left_anti" if anti else "inner")
    buckets = options.partitions * 2
    grouped = frame.withColumn(
        "_bucket", f.pmod(f.xxhash64("table_id", "shoe_id"), f.lit(buckets))).groupBy("_bucket")

    def run(table: pa.Table) -> pa.Table:
        return pa.Table.from_batches([to_blob(job(table.drop(["_bucket"])))])

    return _collect(grouped.applyInArrow(run, RESULT_DDL), empty)


# -- simulation ----------------------------------------------------------------------------
def simulate_local(sim: Simulation, out: Path) -> int:
    return write_simulation(sim, out)[1]


def simulate_spark(sim: Simulation, out: Path, options: SparkOptions) -> int:
    """Shoes dealt on executors: shoe ``i`` always draws from stream ``(seed, i)``, so the
    records are those of the local engine whatever the partitioning."""
    spark = spark_session(options)
    rules, seed, tables, start = sim.rules, sim.seed, sim.tables, sim.start
    out_dir = str(out.resolve())

    def deal(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        local = Simulation(rules, shoes=sim.shoes, seed=seed, tables=tables, start=start)
        for record in batches:
            ids = record.column(0).to_numpy()
            for first, count in _runs(ids):
                for lo in range(first, first + count, local.batch_shoes):
                    n = min(local.batch_shoes, first + count - lo)
                    dealt = deal_batch(rules, shoe_seeds(seed, lo, n))
                    coups, shoes = batch_tables(local, lo, dealt)
                    name = (f"part-engine-{rules.name}-s{seed}-t{tables}-"
                            f"{lo:09d}-{lo + n:09d}.parquet")
                    for table_name, data in (("coups", coups), ("shoes", shoes)):
                        with AtomicParquetWriter(Path(out_dir) / table_name / name, table_name,
                                                 local.metadata(table_name)) as writer:
                            writer.write(data)
                    yield pa.record_batch([pa.array([coups.num_rows], pa.int64())],
                                          names=["coups"])

    ids = spark.range(0, sim.shoes, numPartitions=max(1, options.partitions))
    try:
        done = ids.mapInArrow(deal, "coups long").toArrow()
    except Exception as exc:
        raise _spark_failure(exc) from None
    return int(pa.compute.sum(done.column("coups")).as_py() or 0)


def _runs(ids: Any) -> Iterator[tuple[int, int]]:
    """Contiguous runs ``(first, count)`` in a sorted batch of shoe indices."""
    if len(ids) == 0:
        return
    start = prev = int(ids[0])
    for value in ids[1:]:
        value = int(value)
        if value != prev + 1:
            yield start, prev - start + 1
            start = value
        prev = value
    yield start, prev - start + 1


# -- output --------------------------------------------------------------------------------
def _write_result(directory: Path, table: pa.Table) -> None:
    """One Parquet file of results, published atomically."""
    import pyarrow.parquet as pq

    publish(directory / "part-0.parquet", lambda tmp: pq.write_table(table, tmp))


def _write_json(path: Path, data: dict[str, Any]) -> None:
    publish_text(path, json.dumps(data, indent=2, ensure_ascii=False))
