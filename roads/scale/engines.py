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

from roads.analysis import statistics_partial, store_roads
from roads.board.board import LeadingTies
from roads.board.bulk import SHOE_ROADS
from roads.engine import deal_batch, shoe_seeds
from roads.errors import InputError
from roads.files import publish, publish_text
from roads.ingest.engine_batches import batch_frames
from roads.scale.jobs import (
    RESULT_DDL,
    STATS_ROWS,
    from_blobs,
    partial_from_rows,
    roads_file,
    stats_file,
    stats_frame,
    to_blob,
)
from roads.simulate import Simulation, write_simulation
from roads.stats.report import report_of_partial
from roads.store import ALL, Selection, Store, Written, write_part


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


def _spark_failure(exc: Exception) -> InputError:
    """A Spark job failure, reduced to the first line a user needs."""
    text = str(exc)
    for marker in ("StoreReadError: ", "InputError: ", "SchemaError: ", "malformed coups"):
        if marker in text:
            start = text.index(marker) + (len(marker) if marker.endswith(": ") else 0)
            return InputError(text[start:].splitlines()[0])
    return InputError(f"the Spark job failed: {text.splitlines()[0] if text else exc!r}")


# -- roads ---------------------------------------------------------------------------------
def roads_local(store: Store, out: Path, leading_ties: LeadingTies) -> pl.DataFrame:
    result = store_roads(store, leading_ties)
    _write_result(out / "roads", result.to_arrow())
    return result


def _split(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.filter(pl.struct("table_id", "shoe_id").is_duplicated()).select(
        "table_id", "shoe_id").unique()


def roads_spark(store: Store, out: Path, leading_ties: LeadingTies,
                options: SparkOptions) -> pl.DataFrame:
    """The bulk roads with the clean files read and computed on the executors; the coups
    the read port already holds (corrected files, journaled shoes) computed here."""
    from roads.board.bulk import shoe_roads

    spark = spark_session(options)
    paths, frames = store.read.outcome_sources(ALL)

    def per_file(path: str) -> pa.Table:
        try:
            return roads_file(path, leading_ties)
        except InputError as exc:  # the same words as the per-shoe job
            raise InputError(f"malformed coups: {exc}") from None

    empty = pl.DataFrame(schema=SHOE_ROADS)
    rows = _run_per_partition(spark, paths, options, per_file, empty)
    rows = pl.concat([rows, *(shoe_roads(f, leading_ties) for f in frames if f.height)])
    # A shoe cut across files came back in pieces: recompute those whole, from the port.
    split = _split(rows)
    if not split.is_empty():
        whole = shoe_roads(store.read.coups(Selection(shoes=frozenset(split.iter_rows()))),
                           leading_ties)
        rows = pl.concat([rows.join(split, on=["table_id", "shoe_id"], how="anti"), whole])
    rows = rows.sort("table_id", "shoe_id")
    _write_result(out / "roads", rows.to_arrow())
    return rows


# -- statistics ----------------------------------------------------------------------------
def stats_local(store: Store, out: Path, level: float) -> dict[str, Any]:
    result = report_of_partial(statistics_partial(store), level)
    _write_json(out / "stats.json", result)
    return result


def stats_spark(store: Store, out: Path, level: float, options: SparkOptions) -> dict[str, Any]:
    """Statistics with the clean files summarised on the executors. A shoe's run sums
    cannot be split and re-added, so when a shoe is cut across files (rare: an import in
    pieces) the whole statistics are computed here through the read port instead."""
    spark = spark_session(options)
    paths, frames = store.read.statistics_sources(ALL)
    rows = _run_per_partition(spark, paths, options, stats_file, STATS_ROWS)
    extra = [pl.DataFrame(pl.from_arrow(stats_frame(f))) for f in frames if f.height]
    if extra:
        rows = pl.concat([rows, *extra], how="vertical_relaxed")
    if _split(rows).is_empty():
        part = partial_from_rows(rows, store.read.shoes())
    else:
        part = statistics_partial(store)
    result = report_of_partial(part, level)
    _write_json(out / "stats.json", result)
    return result


def _collect(frame: Any, empty: pl.DataFrame) -> pl.DataFrame:
    try:
        table = frame.toArrow()
    except Exception as exc:
        raise _spark_failure(exc) from None
    return from_blobs(table, empty)


def _run_per_partition(spark: Any, files: list[str], options: SparkOptions, per_file: Any,
                       empty: pl.DataFrame) -> pl.DataFrame:
    """Run ``per_file`` on every stored file the read port named, spread over the executors.

    Spark schedules file numbers (the paths travel with the task), and each executor reads
    its files with the store's read functions, as the local engine does (no JVM-to-Arrow
    conversion of the rows, no shuffle). Paths are strings, so object-storage URLs work
    where the executors can read them.
    """
    if not files:
        return empty

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield to_blob(per_file(files[index]))

    # File numbers from spark.range are split into partitions where they are generated;
    # a DataFrame of paths would need a shuffle to spread (~0.5 s a job here).
    numbers = spark.range(0, len(files), numPartitions=min(len(files),
                                                            max(1, options.partitions)))
    return _collect(numbers.mapInArrow(run, RESULT_DDL), empty)


# -- simulation ----------------------------------------------------------------------------
def simulate_local(sim: Simulation, store: Store) -> int:
    return write_simulation(sim, store)[1]


def simulate_spark(sim: Simulation, store: Store, options: SparkOptions) -> int:
    """Shoes dealt on executors: shoe ``i`` always draws from stream ``(seed, i)``, so the
    records are those of the local engine whatever the partitioning. Executors write the
    part files; the driver journals them in one event, so the run appears whole."""
    spark = spark_session(options)
    rules, seed, tables, start = sim.rules, sim.seed, sim.tables, sim.start
    root = str(store.root.resolve())

    def deal(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        local = Simulation(rules, shoes=sim.shoes, seed=seed, tables=tables, start=start)
        for record in batches:
            ids = record.column(0).to_numpy()
            for first, count in _runs(ids):
                for lo in range(first, first + count, local.batch_shoes):
                    n = min(local.batch_shoes, first + count - lo)
                    dealt = deal_batch(rules, shoe_seeds(seed, lo, n))
                    coups, shoes = batch_frames(local, lo, dealt)
                    for table_name, frame in (("coups", coups), ("shoes", shoes)):
                        done = write_part(Path(root), local.part(table_name, lo, n, frame),
                                          "engine")
                        yield pa.record_batch([pa.array([json.dumps(done.to_json())])],
                                              names=["written"])

    with store.bulk_lock():
        store.sweep(("engine",))
        ids = spark.range(0, sim.shoes, numPartitions=max(1, options.partitions))
        try:
            done = ids.mapInArrow(deal, "written string").toArrow()
        except Exception as exc:
            raise _spark_failure(exc) from None
        written = [Written.from_json(json.loads(w)) for w in done.column("written").to_pylist()]
        written.sort(key=lambda w: w.entry.path)
        coups = sum(w.entry.rows for w in written if w.entry.table == "coups")
        store.commit("files_published", written, {"run": sim.metadata(), "coups": coups},
                     "engine")
    return coups


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
