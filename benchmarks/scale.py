"""Spark overhead against the local engine on the same data (local[2] on this machine).

Run: .venv/bin/python -m benchmarks.scale [COUPS]
Targets (issue 8): Spark roads + statistics on a 10-million-coup dataset no worse than 3x the
local polars path; Spark simulation throughput per core within 2x of the local engine.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from roads.rules import get_rules
from roads.scale import engines as e
from roads.simulate import Simulation
from roads.store import Store


def timed(label: str, func: object, runs: int = 1) -> float:
    """Seconds for ``func`` (the median of ``runs``: the machine has two cores and other work)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    elapsed = statistics.median(times)
    spread = f" (median of {runs}; {min(times):.2f}-{max(times):.2f})" if runs > 1 else ""
    print(f"  {label}: {elapsed:.2f} s{spread}")
    return elapsed


def main() -> None:
    coups = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    work = Path(tempfile.mkdtemp(prefix="roads-scale-"))
    options = e.SparkOptions("local[2]", partitions=2)  # one task per core
    try:
        sim = Simulation(get_rules("standard-8"), shoes=coups // 81 + 1, seed=8, tables=40)
        data, warm = Store.create(work / "data"), Store.create(work / "warm")
        e.simulate_local(sim, data)
        spark = e.spark_session(options)
        # Warm-up: JVM, and one Python worker per core with its kernels loaded (four part
        # files, so that both tasks run). A real cluster pays this once per executor.
        small = Simulation(get_rules("standard-8"), shoes=200, seed=1, batch_shoes=50)
        e.simulate_local(small, warm)
        timed("warm-up (new Spark workers: imports, compiled kernels)", lambda: (
            e.roads_spark(warm, work / "w", "first-cell", options),
            e.stats_spark(warm, work / "w", 0.99, options)))
        print(f"dataset: {sim.shoes:,} shoes (~{coups:,} coups)")
        local_roads = timed("roads, local", lambda: e.roads_local(data, work / "l",
                                                                  "first-cell"), 3)
        spark_roads = timed("roads, spark", lambda: e.roads_spark(data, work / "s",
                                                                  "first-cell", options), 3)
        local_stats = timed("stats, local", lambda: e.stats_local(data, work / "l",
                                                                  0.99), 3)
        spark_stats = timed("stats, spark", lambda: e.stats_spark(data, work / "s",
                                                                  0.99, options), 3)
        print(f"Spark / local: roads {spark_roads / local_roads:.1f}x, statistics "
              f"{spark_stats / local_stats:.1f}x, both "
              f"{(spark_roads + spark_stats) / (local_roads + local_stats):.1f}x")
        # Throughput is measured on a run long enough (~16 M coups) that Spark's fixed cost of
        # starting a job (printed below) does not stand in for its dealing speed.
        shoes = 200_000
        run = Simulation(get_rules("standard-8"), shoes=shoes, seed=5, tables=10)
        local_sim = timed("simulate, local",
                          lambda: e.simulate_local(run, Store.create(work / "sl")))
        spark_sim = timed("simulate, spark",
                          lambda: e.simulate_spark(run, Store.create(work / "ss"), options))
        print(f"simulation per core (2 cores each): local {shoes / local_sim / 2:,.0f} "
              f"shoes/s, spark {shoes / spark_sim / 2:,.0f} shoes/s -> "
              f"{spark_sim / local_sim:.1f}x slower")
        empty = spark.range(0, 2, numPartitions=2)
        timed("an empty Spark job (the fixed cost in every figure above)",
              lambda: empty.mapInArrow(lambda batches: batches, "id long").toArrow())
        spark.stop()
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
