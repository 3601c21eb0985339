"""The store's own figures: verifying every byte against the journal, and sealing a shoe.

Run: .venv/bin/python -m benchmarks.store [COUPS]
Targets (issue 15): `roads store verify` over a 10-million-coup store >= 5 M coups/s;
closing and sealing an 80-coup live shoe (file write, journal event, signed checkpoint)
< 50 ms. Each verify run is a fresh `roads store verify` process (its peak memory is
printed too); the store holds an engine run plus live shoes sealed through the service.
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from roads.engine import deal_shoe
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store
from roads.tables import Actor, TableService

ROADS = Path(sys.executable).with_name("roads")
DEALER = Actor.user("dealer", "dealer")


def _seal_times(store: Store, shoes: int) -> list[float]:
    service = TableService(store)
    times = []
    for n in range(shoes):
        service.open_shoe(DEALER, "L1", f"live-{n}")
        for player, banker in deal_shoe(get_rules("standard-8"), n).coups[:80]:
            service.enter_coup(DEALER, "L1", CoupEntry(player_cards=player, banker_cards=banker,
                                                       method="cards"))
        start = time.perf_counter()
        service.close_shoe(DEALER, "L1")
        times.append(time.perf_counter() - start)
    return times


def _verify(root: Path, deep: bool) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one `roads store verify` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run([str(ROADS), "store", "verify", "--store", str(root), "--quiet",
                           *(["--deep"] if deep else [])], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"verify failed: {done.stdout}{done.stderr}")
    peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    return elapsed, peak


def main() -> None:
    coups_target = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    work = Path(tempfile.mkdtemp(prefix="roads-store-"))
    try:
        store = Store.create(work / "store")
        _, coups = write_simulation(Simulation(get_rules("standard-8"),
                                               shoes=coups_target // 81 + 1, seed=15,
                                               tables=40), store)
        seals = _seal_times(store, 30)
        total = coups + 30 * 80
        print(f"store: {total:,} coups ({coups:,} from the engine, 30 live shoes sealed)")
        print(f"closing and sealing an 80-coup live shoe: median "
              f"{statistics.median(seals) * 1e3:.1f} ms, p95 "
              f"{sorted(seals)[int(0.95 * len(seals))] * 1e3:.1f} ms, max "
              f"{max(seals) * 1e3:.1f} ms over {len(seals)} shoes (target < 50 ms)")
        from roads.store.verify import verify

        verify(store)  # warm
        inside = []
        for _ in range(3):
            start = time.perf_counter()
            assert verify(store).ok
            inside.append(time.perf_counter() - start)
        print(f"store verify in a running process: {total / statistics.median(inside) / 1e6:.1f}"
              f" M coups/s (median of 3: {statistics.median(inside):.2f} s)")
        for deep in (False, True):
            runs = [_verify(store.root, deep) for _ in range(3)]
            seconds = statistics.median(r[0] for r in runs)
            label = "store verify --deep (every row decoded)" if deep else "store verify"
            print(f"{label}: {total / seconds / 1e6:.1f} M coups/s (median of 3 fresh "
                  f"processes: {seconds:.2f} s; {min(r[0] for r in runs):.2f}-"
                  f"{max(r[0] for r in runs):.2f}); peak RSS {max(r[1] for r in runs):.0f} MB"
                  + ("  (target >= 5 M coups/s)" if not deep else ""))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
