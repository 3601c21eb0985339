"""Sequence sums (runs, serial correlation) against a direct count."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.stats.sequence import sequence_stats


@settings(deadline=None)
@given(st.lists(st.text(alphabet="BPT", max_size=30), min_size=1, max_size=6))
def test_serial_correlation_sums_match_a_direct_count(shoes: list[str]) -> None:
    codes = np.array(["BPT".index(c) for c in "".join(shoes)], dtype=np.int8)
    offsets = np.cumsum([0, *(len(s) for s in shoes)]).astype(np.int64)
    got = sequence_stats(codes, offsets, lags=5).lag_sums
    want = np.zeros((5, 4), dtype=np.int64)
    for shoe in shoes:
        x = [1 if c == "B" else -1 for c in shoe if c != "T"]
        for lag in range(1, 6):
            for t in range(len(x) - lag):
                want[lag - 1] += (1, x[t], x[t + lag], x[t] * x[t + lag])
    assert got.tolist() == want.tolist()
