"""Start-up: the first run of each command after setup against its warm run, as fresh processes.

Run: .venv/bin/python -m benchmarks.startup [--rounds N] [--cold]
Targets (issue 18): each first run after setup <= 1.5x its warm time; warm ``roads odds`` and
``roads board BBPPPBPBB`` <= 0.4 s.

"After setup" is what ``make test``/``make demo`` (or ``roads prepare`` after a pip install)
leave behind: the benchmark prepares one cache directory from nothing (timed), then, for each
round, copies it into a fresh directory — a new virtualenv or clone with the same cache — and
runs every command there twice: the first run, then the warm run. Each figure is the median
over the rounds of wall-clock seconds of a fresh ``roads`` process (CPU seconds beside it: the
machine may be shared). ``--cold`` also times each command once in an empty cache directory
(what a first use cost before ``roads prepare``). ``python -X importtime`` shows where the
import time of the light commands goes.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

ROADS = str(Path(sys.executable).with_name("roads"))
Command = Callable[[Path, str], list[str]]


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    return env | {"ROADS_CACHE_DIR": str(cache)}


def timed(argv: list[str], cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process (CPU: user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=_env(cache), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def inputs(work: Path, cache: Path) -> tuple[Path, Path]:
    """A 100-row card-level CSV and a small store (20 simulated shoes) to read."""
    sim = work / "inputs-sim"
    subprocess.run([ROADS, "simulate", "--shoes", "20", "--tables", "2", "--seed", "3",
                    "--quiet", "--out", str(sim)], check=True, env=_env(cache),
                   capture_output=True)
    coups = pl.read_parquet(sorted((sim / "coups").rglob("*.parquet"))).sort(
        "table_id", "shoe_id", "coup").head(100)
    csv = work / "hundred.csv"
    coups.select(
        "table_id", "shoe_id", "coup", pl.col("outcome").cast(pl.String),
        pl.col("player_cards").cast(pl.List(pl.String)).list.join(" "),
        pl.col("banker_cards").cast(pl.List(pl.String)).list.join(" "),
        pl.col("dealt_at").dt.to_string("%Y-%m-%dT%H:%M:%SZ")).write_csv(csv)
    return csv, sim


def commands(csv: Path, store: Path) -> dict[str, Command]:
    """Each command as argv, given a scratch directory and a run tag (outputs never reused)."""
    return {
        "roads odds": lambda _w, _t: [ROADS, "odds"],
        "roads board BBPPPBPBB": lambda _w, _t: [ROADS, "board", "BBPPPBPBB"],
        "roads simulate --shoes 100": lambda w, t: [ROADS, "simulate", "--shoes", "100",
                                                    "--seed", "5", "--quiet",
                                                    "--out", str(w / f"sim-{t}")],
        "roads ingest (100 rows)": lambda w, t: [ROADS, "ingest", str(csv),
                                                 "--store", str(w / f"store-{t}")],
        "roads stats (20 shoes)": lambda _w, _t: [ROADS, "stats", "--store", str(store)],
    }


def import_times(cache: Path) -> dict[str, float]:
    """Cumulative import milliseconds of the CLI and of what its light commands load."""
    out: dict[str, float] = {}
    for module in ("roads.cli", "roads.odds", "roads.board", "numba"):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                              capture_output=True, text=True, check=True, env=_env(cache))
        for line in done.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] == module:
                out[module] = int(parts[1]) / 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (>= 3)")
    parser.add_argument("--cold", action="store_true",
                        help="also time each command once with an empty cache")
    args = parser.parse_args()
    rounds = max(3, args.rounds)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="roads-startup-") as tmp:
        work = Path(tmp)
        prepared = work / "cache-prepared"
        prepare_cold = timed([ROADS, "prepare", "--quiet"], prepared)[0]
        prepare_warm = timed([ROADS, "prepare", "--quiet"], prepared)[0]
        csv, store = inputs(work, prepared)
        cmds = commands(csv, store)
        cold: dict[str, float] = {}
        if args.cold:
            for name, argv in cmds.items():
                empty = work / f"cache-empty-{len(cold)}"
                cold[name] = timed(argv(work, f"cold{len(cold)}"), empty)[0]
        first: dict[str, list[tuple[float, float]]] = {n: [] for n in cmds}
        warm: dict[str, list[tuple[float, float]]] = {n: [] for n in cmds}
        for r in range(rounds):
            fresh = work / f"cache-round-{r}"
            shutil.copytree(prepared, fresh)
            for name, argv in cmds.items():
                first[name].append(timed(argv(work, f"{r}a"), fresh))
                warm[name].append(timed(argv(work, f"{r}b"), fresh))
        imports = import_times(prepared)

    def med(runs: list[tuple[float, float]], i: int) -> float:
        return statistics.median(run[i] for run in runs)

    print(f"start-up, medians of {rounds} rounds of fresh processes (wall s; CPU s in "
          f"brackets; machine may be shared: load average {load_before:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end)")
    print(f"roads prepare from nothing: {prepare_cold:.1f} s; again (all cached): "
          f"{prepare_warm:.1f} s")
    head = f"{'command':<28} {'first after setup':>19} {'warm':>15} {'ratio':>6}  target"
    if cold:
        head += "   (first use, no prepare)"
    print(head)
    for name in cmds:
        f_wall, f_cpu, w_wall, w_cpu = (med(first[name], 0), med(first[name], 1),
                                        med(warm[name], 0), med(warm[name], 1))
        ratios = [a[0] / b[0] for a, b in zip(first[name], warm[name], strict=True)]
        ratio = statistics.median(ratios)
        target = "<= 1.5x" + (", warm <= 0.4 s" if name.split()[1] in ("odds", "board") else "")
        ok = ratio <= 1.5 and (w_wall <= 0.4 or name.split()[1] not in ("odds", "board"))
        line = (f"{name:<28} {f_wall:7.2f} ({f_cpu:5.2f}) {w_wall:7.2f} ({w_cpu:5.2f}) "
                f"{ratio:5.2f}x  {target} {'met' if ok else 'MISSED'}")
        if cold:
            line += f"   {cold[name]:.1f} s"
        print(line)
    print("import time (python -X importtime, cumulative ms): "
          + ", ".join(f"{m} {ms:.0f}" for m, ms in imports.items()))


if __name__ == "__main__":
    main()
