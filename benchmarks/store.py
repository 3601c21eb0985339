"""The store's own figures: verifying every byte against the journal, and sealing a shoe.

Run: .venv/bin/python -m benchmarks.store [COUPS ...] [--keep DIR]
(default 10,000,000 and 30,000,000 coups; ``--keep DIR`` makes the stores under DIR once and
reuses them: run it twice for the peak-memory figures, since a child's peak RSS counts the
parent's at the fork, and a run that builds the store has a large one). Targets (issue 15):
`roads store verify` over a 10-million-coup store >= 5 M coups/s, memory not growing with
the store (issue 18); closing and sealing an 80-coup live shoe (file write, journal event,
signed checkpoint) < 50 ms. Each verify run is a fresh `roads store verify` process (its
own peak memory is printed too); the first store also holds live shoes sealed through the
service.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.fresh import runs, simulated
from roads.engine import deal_shoe
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.store import Store
from roads.tables import Actor, TableService

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


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks.store")
    parser.add_argument("coups", nargs="*", type=int, default=[10_000_000, 30_000_000])
    parser.add_argument("--keep", type=Path, help="make and reuse the stores here")
    args = parser.parse_args()
    print(f"(the machine may be shared: figures are medians of 3; load average "
          f"{os.getloadavg()[0]:.1f} at the start)")
    work = args.keep or Path(tempfile.mkdtemp(prefix="roads-store-"))
    try:
        for n, size in enumerate(args.coups):
            store, coups = simulated(work / f"store-{size}", size, seed=15)
            if n == 0 and not store.read.journal_shoes():
                seals = _seal_times(store, 30)
                print(f"closing and sealing an 80-coup live shoe: median "
                      f"{statistics.median(seals) * 1e3:.1f} ms, p95 "
                      f"{sorted(seals)[int(0.95 * len(seals))] * 1e3:.1f} ms, max "
                      f"{max(seals) * 1e3:.1f} ms over {len(seals)} shoes (target < 50 ms)")
                coups += 30 * 80
            # the fresh processes first: a child's peak RSS counts the parent's at the
            # fork (Linux carries it over exec), and the in-process runs below grow it
            runs("roads store verify (target >= 5 M coups/s)", coups,
                 ["store", "verify", "--store", str(store.root), "--quiet"])
            if n == 0:
                runs("roads store verify --deep (every row decoded)", coups,
                     ["store", "verify", "--store", str(store.root), "--quiet", "--deep"])
                from roads.store.verify import verify

                verify(store)  # warm
                inside = []
                for _ in range(3):
                    start = time.perf_counter()
                    assert verify(store).ok
                    inside.append(time.perf_counter() - start)
                print(f"store verify in a running process over {coups:,} coups: "
                      f"{coups / statistics.median(inside) / 1e6:.1f} M coups/s (median of 3: "
                      f"{statistics.median(inside):.2f} s)")
    finally:
        if args.keep is None:
            shutil.rmtree(work)


if __name__ == "__main__":
    main()
