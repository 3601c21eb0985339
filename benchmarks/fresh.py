"""One fresh ``roads`` process at a time: its wall time, its CPU time (user + system: what a
shared machine's load does not stretch, so runs of two trees can be compared side by side)
and its own peak RSS (``wait4`` gives each child's rusage, where ``RUSAGE_CHILDREN`` keeps
the largest child so far; the child is started from a small launcher, see
:data:`LAUNCHER`), and the stores the whole-store benchmarks run on."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store

ROADS = Path(sys.executable).with_name("roads")

#: Starts ``ARGV`` and prints its wall time, peak RSS, exit code and CPU time. A child's
#: ``ru_maxrss`` counts the image it was forked from (the old memory map's high-water mark
#: at ``exec``), so the command is started from this small process, not from a benchmark
#: holding a store.
LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status),
      usage.ru_utime + usage.ru_stime)
"""


def launch(argv: list[str]) -> tuple[float, int, int, str, float]:
    """Seconds, peak RSS (bytes), exit code, standard error and CPU seconds of one fresh
    ``ARGV``."""
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *argv], capture_output=True,
                          text=True, check=True)
    wall, peak, code, cpu = done.stdout.split()
    return float(wall), int(peak), int(code), done.stderr, float(cpu)


def run(*argv: str) -> tuple[float, float, float]:
    """Seconds, peak RSS (MB) and CPU seconds of ``roads ARGV``; exit 0 or 1 (a finding)
    only."""
    elapsed, peak, code, error, cpu = launch([str(ROADS), *argv])
    if code not in (0, 1):
        raise SystemExit(f"roads {' '.join(argv)} exited {code}: {error}")
    return elapsed, peak / 2**20, cpu


def runs(label: str, coups: int, argv: list[str], times: int = 3) -> None:
    """Print the median of ``times`` fresh runs: coups/s, seconds, CPU seconds, the peak
    RSS, and the load average (figures on a loaded machine are not an idle one's)."""
    done = [run(*argv) for _ in range(times)]
    seconds = statistics.median(d[0] for d in done)
    print(f"{label} over {coups:,} coups: {coups / seconds / 1e6:.2f} M coups/s (median of "
          f"{times} fresh processes {seconds:.2f} s, {min(d[0] for d in done):.2f}-"
          f"{max(d[0] for d in done):.2f}; CPU {statistics.median(d[2] for d in done):.2f} s);"
          f" peak RSS {max(d[1] for d in done):.0f} MB; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)


def simulated(root: Path, coups: int, seed: int) -> tuple[Store, int]:
    """A store of about ``coups`` engine coups over 20 tables (reused when ``root`` has
    one), and how many coups it holds."""
    if (root / "journal.sqlite").is_file():
        store = Store.open(root)
    else:
        store = Store.create(root)
        write_simulation(Simulation(get_rules("standard-8"), shoes=coups // 81 + 1,
                                    seed=seed, tables=20), store)
    return store, int(store.read.shoes()["coups"].sum())
