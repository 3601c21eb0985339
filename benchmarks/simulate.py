"""Engine speed: coups per second in memory and end to end into Parquet, and peak memory.

Run: .venv/bin/python -m benchmarks.simulate [SHOES]
Targets (issue 2): >= 10 million coups/s in memory, >= 2 million coups/s into Parquet with
every card, on this 2-core machine; peak memory must not grow with the number of shoes.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from roads.engine import deal_batch, shoe_seeds
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store


def in_memory(shoes: int, batch: int = 8192) -> float:
    rules = get_rules("standard-8")
    deal_batch(rules, shoe_seeds(0, 0, 64))
    coups = 0
    start = time.perf_counter()
    for first in range(0, shoes, batch):
        coups += len(deal_batch(rules, shoe_seeds(3, first, min(batch, shoes - first))).cards)
    return coups / (time.perf_counter() - start)


def _cpu_seconds() -> float:
    """This process's CPU time so far, every thread's (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def to_parquet(shoes: int) -> tuple[float, int, float]:
    """Coups a second into a fresh store, the bytes written and the CPU-seconds a coup
    (what ``roads simulate`` does: every card dealt, written, journaled and checkpointed;
    a warm-up run first, as a prepared install has its kernels loaded)."""
    rules = get_rules("standard-8")
    out = Path(tempfile.mkdtemp(prefix="roads-bench-"))
    try:
        write_simulation(Simulation(rules, shoes=200, seed=1), Store.create(out / "warm"))
        run = Store.create(out / "run")
        start, cpu = time.perf_counter(), _cpu_seconds()
        _, coups = write_simulation(Simulation(rules, shoes=shoes, seed=5, tables=8), run)
        elapsed, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
        size = sum(f.stat().st_size for f in (out / "run").rglob("*.parquet"))
        return coups / elapsed, size, cpu / coups
    finally:
        shutil.rmtree(out)


def peak_rss_mb(shoes: int) -> float:
    """Peak resident memory of a fresh process that writes ``shoes`` shoes to Parquet."""
    code = (
        "import resource, sys; from benchmarks.simulate import to_parquet; "
        f"to_parquet({shoes}); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.simulate",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("shoes", nargs="?", type=int, default=200_000)
    shoes = parser.parse_args().shoes
    rate = in_memory(shoes)
    print(f"in memory:  {rate / 1e6:6.2f} million coups/s ({shoes:,} eight-deck shoes)")
    rate, size, cpu = to_parquet(shoes)
    print(f"to Parquet: {rate / 1e6:6.2f} million coups/s ({shoes:,} shoes, every card; "
          f"{size / 1e6:.0f} MB on disk; {cpu * 1e6:.2f} µs of CPU a coup)")
    for n in (shoes // 8, shoes // 2, shoes * 2):
        print(f"peak RSS writing {n:>9,} shoes to Parquet: {peak_rss_mb(n):6.0f} MB")


if __name__ == "__main__":
    main()
