"""Exact-odds speed: one composition (fast engine vs a naive nested loop) and batch mode.

Run: .venv/bin/python -m benchmarks.odds
Targets (issue 2): <= 100 us per composition with exact integers, >= 500x the naive
enumeration, >= 20,000 compositions per second in batch mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from roads.engine import deal_batch, shoe_seeds
from roads.odds import Composition, exact_odds, ways, ways_batch
from roads.rules import get_rules
from tests.naive_odds import naive_ways


def _per_call(call: Callable[[], object], repeat: int) -> float:
    """Best of five timings of ``repeat`` calls, per call."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def compositions_of_real_shoes(shoes: int) -> np.ndarray:
    """The composition before every coup of simulated 8-deck shoes (what batch mode serves)."""
    rules = get_rules("standard-8")
    batch = deal_batch(rules, shoe_seeds(1, 0, shoes))
    points = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0], dtype=np.int64)
    rows = []
    full = np.bincount(np.repeat(points, 4 * rules.decks), minlength=10)
    for k in range(shoes):
        coups, burned = int(batch.info[k, 0]), int(batch.info[k, 1])
        values = points[batch.shoes[k] // 4]
        seen = np.zeros(10, dtype=np.int64)
        np.add.at(seen, values[:burned], 1)
        pos = burned
        offset = int(batch.info[:k, 0].sum())
        for c in range(coups):
            rows.append(full - seen)
            used = int((batch.cards[offset + c] != 255).sum())
            np.add.at(seen, values[pos : pos + used], 1)
            pos += used
    return np.array(rows)


def main() -> None:
    comp = Composition.full(8)
    values = comp.values.tolist()
    ways(values)  # compile / warm the cache
    fast = _per_call(lambda: ways(values), 2000)
    full = _per_call(lambda: exact_odds(comp), 1000)
    naive = _per_call(lambda: naive_ways(values), 1)
    assert ways(values)["banker"] == naive_ways(values)["banker"] == 2292252566437888
    print(f"exact odds, one 8-deck composition (core ways, exact ints): {fast * 1e6:8.1f} us")
    print(f"exact odds incl. pairs/probabilities object (exact_odds):   {full * 1e6:8.1f} us")
    print(f"naive nested-loop enumeration (tests/naive_odds.py):        {naive * 1e3:8.1f} ms")
    print(f"speed-up over the naive enumeration:                        {naive / fast:8.0f} x")
    rows = compositions_of_real_shoes(400)
    ways_batch(rows[:100])
    start = time.perf_counter()
    out = ways_batch(rows)
    elapsed = time.perf_counter() - start
    assert out[7].tolist() == list(ways(rows[7].tolist()).values())
    print(f"batch mode: {len(rows):,} compositions (every coup of 400 shoes) in "
          f"{elapsed:.3f} s = {len(rows) / elapsed:,.0f} compositions/s")


if __name__ == "__main__":
    main()
