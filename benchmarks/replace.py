"""Re-import cost: ``roads ingest --replace`` turning an outcome-only import into a card-level
one, and what its amendments cost every later read.

Run: .venv/bin/python -m benchmarks.replace [COUPS]   (default 100,000)

A card-level export whose card columns have unfamiliar headers is ingested (stored
outcome-only, with a warning), then ingested again with ``--replace`` and ``--map``: every
coup differs, so every coup becomes one ``coup_amended`` event in the run's commit. Printed:
the plain ingest, the replace (amendments journaled), and a whole read of the store before
and after (the read port applies the amendments), each the median of three.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store

RULES = get_rules("standard-8")
CARDS = ReadOptions(mapping={"player_cards": "Cards P", "banker_cards": "Cards B"})


def export(coups: int, path: Path) -> int:
    tmp = path.parent / "sim"
    write_simulation(Simulation(RULES, shoes=coups // 81 + 1, seed=31, tables=20),
                     Store.create(tmp))
    frame = Store.open(tmp).read.coups().head(coups)
    frame.select(
        pl.col("table_id").alias("Table"), pl.col("shoe_id").alias("Shoe"),
        pl.col("coup").alias("Coup"), pl.col("outcome").cast(pl.String).alias("Winner"),
        pl.col("player_cards").cast(pl.List(pl.String)).list.join(" ").alias("Cards P"),
        pl.col("banker_cards").cast(pl.List(pl.String)).list.join(" ").alias("Cards B"),
        pl.col("dealt_at").dt.to_string("%Y-%m-%dT%H:%M:%SZ").alias("Dealt"),
    ).write_csv(path)
    shutil.rmtree(tmp)
    return frame.height


def _read(store: Store) -> float:
    """Seconds to read every coup of the store (corrections applied)."""
    start = time.perf_counter()
    store.read.coups()
    return time.perf_counter() - start


def main(coups: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="replace-bench-"))
    try:
        source = work / "export.csv"
        n = export(coups, source)
        plain, replaced, before, after = [], [], [], []
        for i in range(3):
            store = Store.create(work / f"store{i}")
            start = time.perf_counter()
            ingest([source], store, ReadOptions(), RULES)
            plain.append(time.perf_counter() - start)
            before.append(_read(store))
            start = time.perf_counter()
            report = ingest([source], store, CARDS, RULES, replace=True).report
            replaced.append(time.perf_counter() - start)
            assert report["totals"]["replaced"] == n, report["totals"]
            after.append(_read(store))
        med = statistics.median
        print(f"{n:,} coups: ingest (outcome-only) {med(plain):.2f} s; --replace with the "
              f"cards ({n:,} amendments journaled) {med(replaced):.2f} s "
              f"({n / med(replaced):,.0f} amendments/s); whole read of the store "
              f"{med(before):.3f} s before, {med(after):.3f} s after (medians of 3)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
