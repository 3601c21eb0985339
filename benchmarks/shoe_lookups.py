"""A shoe's events looked up inside the write lock, on a table with a long history.

Run: .venv/bin/python -m benchmarks.shoe_lookups [SHOES]
The live actions ask the journal about one shoe inside their write-locked transaction: is
this shoe id taken (``open_shoe``), is this coup number stored (an idempotent re-post, a
correction request), was this shoe sealed meanwhile (a seal's second look). A table of
SHOES shoes of 80 coups each (default 3,000: about a hundred days of one table) is
journaled, then each lookup is timed through :class:`~roads.store.journal.Transaction`
(median of 20), with the query plan SQLite chose for it.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roads.store.journal import Journal, Transaction


def main() -> None:
    shoes = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "journal.sqlite")
        with journal.transaction() as tx:
            for s in range(shoes):
                tx.append("shoe_opened", "T1", f"S{s}", {}, "dealer")
                for c in range(1, 81):
                    tx.append("coup_entered", "T1", f"S{s}", {"coup": c}, "dealer")
                tx.append("shoe_closed", "T1", f"S{s}", {}, "dealer")
                tx.append("shoe_sealed", "T1", f"S{s}", {}, "system")
            tx.append("shoe_opened", "T1", "OPEN", {}, "dealer")
        lookups: dict[str, Callable[[Transaction], Any]] = {
            "open_shoe: is a new shoe id taken": lambda t: t.exists("T1", "NEW", "shoe_opened"),
            "re-post: is coup 81 of the newest shoe stored":
                lambda t: t.coup_entered("T1", f"S{shoes - 1}", 81),
            "seal: was the open shoe sealed meanwhile":
                lambda t: t.last("T1", ("shoe_sealed",), "OPEN"),
        }
        print(f"one table, {shoes:,} shoes of 80 coups ({shoes * 83 + 1:,} events):")
        for name, lookup in lookups.items():
            times = []
            with journal.transaction() as tx:
                for _ in range(20):
                    start = time.perf_counter()
                    lookup(tx)
                    times.append(time.perf_counter() - start)
            print(f"  {name}: median {statistics.median(times) * 1e3:,.3f} ms")


if __name__ == "__main__":
    main()
