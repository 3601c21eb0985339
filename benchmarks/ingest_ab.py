"""Ingest speed side by side with another checkout (the pre-wave code, say), interleaved.

Run: .venv/bin/python -m benchmarks.ingest_ab OTHER [--file CSV] [--rounds 8] [--runs 3]
``OTHER``: another checkout of this project, run with this checkout's interpreter and
packages, whose kernels are prepared in its own ``.cache/roads``
(``ROADS_CACHE_DIR=OTHER/.cache/roads .venv/bin/roads prepare`` there). The file (default: a
2 M-coup card-level export, as ``benchmarks.ingest`` makes it) is ingested ``--runs`` times
in a fresh process of each checkout, the two taking turns to go first, ``--rounds`` times;
each process is first warmed by a one-row ingest (kernels loaded). Printed: the median time
of all runs, of the warm runs (each process's second and later) and of each process's first
run, for both, and this checkout's time over the other's. Issues 14 and 15 ask for README's
ingest figure within 10 % of the pre-wave code's; on a shared 2-core machine single runs
spread ±15 %, hence interleaving and medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.ingest import card_level_csv

HERE = Path(__file__).resolve().parents[1]

#: One process: a warm-up ingest, then RUNS timed ingests of FILE into fresh stores.
RUNNER = """
import json, shutil, sys, tempfile, time
from pathlib import Path
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store
source, runs = Path(sys.argv[1]), int(sys.argv[2])
work = Path(tempfile.mkdtemp(prefix="ab-"))
warm = work / "warm.csv"
warm.write_text("table,shoe,coup,player_cards,banker_cards,time\\n"
                "W,S,1,9h Kd,5s 2c,2026-01-01T00:00:00Z\\n")
ingest([warm], Store.create(work / "warm"), ReadOptions(), get_rules("standard-8"))
times = []
for i in range(runs):
    start = time.perf_counter()
    ingest([source], Store.create(work / str(i)), ReadOptions(), get_rules("standard-8"))
    times.append(time.perf_counter() - start)
    shutil.rmtree(work / str(i))
shutil.rmtree(work)
print(json.dumps(times))
"""


def _process(tree: Path, source: Path, runs: int) -> list[float]:
    """The timed runs of one fresh process of ``tree``'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree), "ROADS_CACHE_DIR": str(tree / ".cache/roads")}
    done = subprocess.run([sys.executable, "-c", RUNNER, str(source), str(runs)], cwd=tree,
                          env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: the ingest process exited {done.returncode}:\n{done.stderr}")
    times: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return times


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: at least 1")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ingest_ab",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="another checkout, kernels prepared")
    parser.add_argument("--file", type=Path, help="the CSV (default: a 2 M-coup export)")
    parser.add_argument("--rounds", type=_positive, default=8)
    parser.add_argument("--runs", type=_positive, default=3, help="timed ingests per process")
    args = parser.parse_args()
    trees = {"this": HERE, "other": args.other.resolve()}
    work = Path(tempfile.mkdtemp(prefix="roads-ab-"))
    try:
        source = args.file
        if source is None:
            source = work / "export.csv"
            card_level_csv(2_000_000, source)
        seen: dict[str, list[list[float]]] = {name: [] for name in trees}
        for round_ in range(args.rounds):  # (which goes first alternates)
            for name, tree in list(trees.items())[::1 if round_ % 2 == 0 else -1]:
                seen[name].append(_process(tree, source, args.runs))
                print(f"round {round_ + 1} {name}: "
                      + " ".join(f"{t:.2f}" for t in seen[name][-1]), flush=True)
        medians = {}
        for name, runs in seen.items():
            medians[name] = (statistics.median(t for r in runs for t in r),
                             statistics.median(t for r in runs for t in r[1:])
                             if args.runs > 1 else float("nan"),
                             statistics.median(r[0] for r in runs))
            print(f"{name} ({trees[name]}): median {medians[name][0]:.2f} s of "
                  f"{args.rounds * args.runs} runs; warm runs {medians[name][1]:.2f} s; "
                  f"first run of a process {medians[name][2]:.2f} s")
        ratio = [a / b for a, b in zip(medians["this"], medians["other"], strict=True)]
        print(f"this / other: {ratio[0]:.3f} (warm runs {ratio[1]:.3f}, first runs "
              f"{ratio[2]:.3f})")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
