"""Ingest speed: card-level CSV -> validated -> Parquet, against a bare polars round trip;
and the peak memory of a fresh ``roads ingest`` process by file size.

Run: .venv/bin/python -m benchmarks.ingest [COUPS [RSS_SIZES]]
(``COUPS`` 0: no throughput; ``RSS_SIZES``: comma-separated coup counts, default
``1000000,4000000``; ``0``: none.)
Target (issue 4): >= 1 million coups/s, and no more than 3x a bare
``pl.read_csv`` + ``write_parquet`` of the same file in the same run. Target (issue 18):
``roads ingest`` of a 4 M-coup file peak RSS <= 1 GB at >= 1 M coups/s, memory flat in the
file's size; a file larger than one chunk (``roads.ingest.chunks.CHUNK_BYTES``) is read in
chunks, and the same file read whole in the same run gives the cost of chunking.

The export is plain (no quoting, ASCII), so it takes the clean-CSV front end; the same coups
with the Result column quoted (as some systems write every text field) take the general
path, measured too so both figures are on record.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

from benchmarks.fresh import ROADS, launch
from roads.ingest import chunks
from roads.ingest.fastcsv import parse_csv
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store


def card_level_csv(coups: int, path: Path) -> int:
    """A realistic export: table, shoe, hand number, cards as "9h 4s", result, totals, time."""
    tmp = path.parent / "sim"
    write_simulation(Simulation(get_rules("standard-8"), shoes=coups // 81 + 1, seed=21,
                                tables=20), Store.create(tmp))
    frame = Store.open(tmp).read.coups().head(coups)
    frame.select(
        pl.col("table_id").alias("Table"), pl.col("shoe_id").alias("Shoe"),
        pl.col("coup").alias("Hand"),
        pl.col("player_cards").cast(pl.List(pl.String)).list.join(" ").alias("Player Cards"),
        pl.col("banker_cards").cast(pl.List(pl.String)).list.join(" ").alias("Banker Cards"),
        pl.col("outcome").cast(pl.String).replace({"B": "Banker", "P": "Player", "T": "Tie"})
        .alias("Result"),
        pl.col("player_total").alias("Player Total"), pl.col("banker_total").alias("Banker Total"),
        pl.col("dealt_at").dt.to_string("%Y-%m-%dT%H:%M:%SZ").alias("Time"),
    ).write_csv(path)
    shutil.rmtree(tmp)
    return frame.height


def _cpu() -> float:
    """CPU seconds of this process so far, every thread (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(source: Path, work: Path, name: str) -> tuple[float, list[float], dict[str, object]]:
    """Median and all of three ingests of ``source``, each into a new store; the report.
    Prints the median CPU seconds too: on a shared machine the wall time says more about
    the other work than about this one."""
    runs, cpus = [], []
    result = None
    for i in range(3):  # a new store each time: every run does the whole work
        store = Store.create(work / f"{name}{i}")
        start, cpu = time.perf_counter(), _cpu()
        result = ingest([source], store, ReadOptions(), get_rules("standard-8"))
        runs.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    assert result is not None
    print(f"  ({name}: CPU {statistics.median(cpus):.2f} s median of 3, user + system, "
          "all threads)")
    return statistics.median(runs), runs, result.report["files"][0]


def _fresh_process(source: Path, store: Path) -> tuple[float, int, float]:
    """Wall time, peak RSS (bytes) and CPU seconds of one ``roads ingest`` process."""
    wall, peak, code, error, cpu = launch([str(ROADS), "ingest", str(source), "--store",
                                           str(store)])
    if code != 0:
        raise SystemExit(f"roads ingest {source} exited {code}: {error}")
    return wall, peak, cpu


def peak_memory(sizes: list[int], work: Path) -> None:
    """Median peak RSS and wall time of three fresh ``roads ingest`` processes per size."""
    for n in sizes:
        source = work / f"rss-{n}.csv"
        n = card_level_csv(n, source)
        runs = [_fresh_process(source, work / f"rss-{n}-{i}") for i in range(3)]
        walls, peaks, cpus = zip(*runs, strict=True)
        wall, peak = statistics.median(walls), statistics.median(peaks)
        print(f"roads ingest, fresh process, {n:,} coups ({source.stat().st_size / 1e6:.0f} "
              f"MB): peak RSS {peak / 1e6:.0f} MB (median of 3: {min(peaks) / 1e6:.0f}-"
              f"{max(peaks) / 1e6:.0f}), {wall:.2f} s wall with start-up "
              f"({n / wall / 1e6:.2f} M coups/s), CPU {statistics.median(cpus):.2f} s")
        source.unlink()


def throughput(coups: int, work: Path) -> None:
    """Ingest speed in this process: the plain path (chunked when the file is larger than
    a chunk, and then whole too), the general path and a bare polars round trip."""
    source = work / "export.csv"
    n = card_level_csv(coups, source)
    bares = []
    for _ in range(3):
        start = time.perf_counter()
        pl.read_csv(source).write_parquet(work / "bare.parquet")
        bares.append(time.perf_counter() - start)
    bare = statistics.median(bares)
    warm = work / "warm.csv"
    warm.write_text("table,shoe,coup,player_cards,banker_cards,time\n"
                    "W,S,1,9h Kd,5s 2c,2026-01-01T00:00:00Z\n")
    start = time.perf_counter()
    ingest([warm], Store.create(work / "warm"), ReadOptions(), get_rules("standard-8"))
    cold = time.perf_counter() - start  # loading the compiled kernels, once per process
    assert parse_csv(source, ReadOptions()).parsed is not None  # the clean-CSV front end
    ours, runs, report = _timed(source, work, "store")
    assert report["accepted"] == n and report["quarantined"] == 0
    print(f"card-level CSV ({n:,} coups, {source.stat().st_size / 1e6:.0f} MB) -> validated "
          f"-> Parquet: {n / ours / 1e6:.2f} M coups/s ({ours:.2f} s, median of 3: "
          f"{min(runs):.2f}-{max(runs):.2f}); bare polars read_csv + write_parquet "
          f"{bare:.2f} s (median of 3) -> ratio {ours / bare:.2f}x; "
          f"flags raised: {report['flagged']}; one-off kernel load per process {cold:.2f} s")
    if chunks.chunked(source, "csv"):  # the same file whole, for the cost of chunking
        size, chunks.CHUNK_BYTES = chunks.CHUNK_BYTES, 1 << 40
        try:
            whole, runs, _ = _timed(source, work, "whole")
        finally:
            chunks.CHUNK_BYTES = size
        print(f"the same file read whole (no chunks): {n / whole / 1e6:.2f} M coups/s "
              f"({whole:.2f} s, median of 3: {min(runs):.2f}-{max(runs):.2f}) -> "
              f"chunked/whole time {ours / whole:.2f}x")
    quoted = work / "quoted.csv"
    pl.read_csv(source, infer_schema=False).write_csv(quoted, quote_style="non_numeric")
    assert parse_csv(quoted, ReadOptions()).parsed is None  # quotes: the general path
    general, runs, report = _timed(quoted, work, "general")
    assert report["accepted"] == n
    print(f"the same coups with quoted text fields (general path): "
          f"{n / general / 1e6:.2f} M coups/s ({general:.2f} s, median of 3: "
          f"{min(runs):.2f}-{max(runs):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ingest",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("coups", nargs="?", type=int, default=2_000_000,
                        help="coups of the throughput file (0: no throughput)")
    parser.add_argument("sizes", nargs="?", default="1000000,4000000",
                        help="comma-separated coup counts of the peak-RSS runs (0: none)")
    args = parser.parse_args()
    coups = args.coups
    sizes = [int(v) for v in args.sizes.split(",") if int(v)]
    work = Path(tempfile.mkdtemp(prefix="roads-ingest-"))
    try:
        if coups:
            throughput(coups, work)
        peak_memory(sizes, work)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
