"""Sequence statistics of Banker/Player streams, shoe by shoe, in one compiled pass.

Ties are left out (as on the Big Road). Per shoe: Banker and Player counts and the number of
runs (for the Wald-Wolfowitz runs test); over the slice: the run-length histogram per side
and the sums for lag-1..L serial correlation of the ±1-coded stream within shoes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

MAX_RUN = 25  # run lengths of 25 or more share the last bin


@nb.njit(cache=True, nogil=True)
def _pass(outcome: np.ndarray, offsets: np.ndarray, lags: int, hist: np.ndarray,
          per_shoe: np.ndarray, lag_sums: np.ndarray) -> None:
    n_shoes = offsets.shape[0] - 1
    seq = np.empty(offsets[-1] - offsets[0] + 1, dtype=np.int8)
    for s in range(n_shoes):
        m = 0
        for i in range(offsets[s], offsets[s + 1]):
            o = outcome[i]
            if o == 0:
                seq[m] = 1
                m += 1
            elif o == 1:
                seq[m] = -1
                m += 1
        n_b = 0
        runs = 0
        run = 0
        for t in range(m):
            if seq[t] == 1:
                n_b += 1
            if t > 0 and seq[t] == seq[t - 1]:
                run += 1
            else:
                if t > 0:
                    side = 0 if seq[t - 1] == 1 else 1
                    hist[side, min(run, MAX_RUN)] += 1
                    per_shoe[s, 3 + side] = max(per_shoe[s, 3 + side], run)
                run = 1
                runs += 1
        if m > 0:
            side = 0 if seq[m - 1] == 1 else 1
            hist[side, min(run, MAX_RUN)] += 1
            per_shoe[s, 3 + side] = max(per_shoe[s, 3 + side], run)
        per_shoe[s, 0] = n_b
        per_shoe[s, 1] = m - n_b
        per_shoe[s, 2] = runs
        # Lag sums: the pairs and the sums of x and y follow from the shoe's total and its
        # first/last ``lag`` values; only the products need the loop.
        total = 2 * n_b - m
        for lag in range(1, min(lags, m - 1) + 1):
            xy = 0
            for t in range(m - lag):
                xy += seq[t] * seq[t + lag]
            head = 0
            tail = 0
            for t in range(lag):
                head += seq[t]
                tail += seq[m - 1 - t]
            lag_sums[lag - 1, 0] += m - lag
            lag_sums[lag - 1, 1] += total - tail
            lag_sums[lag - 1, 2] += total - head
            lag_sums[lag - 1, 3] += xy


@dataclass(frozen=True)
class SequenceStats:
    hist: np.ndarray  # (2, MAX_RUN + 1): Banker / Player runs by length
    per_shoe: np.ndarray  # (shoes, 5): Banker coups, Player coups, runs, longest B, longest P
    lag_sums: np.ndarray  # (lags, 4): pairs, sum x, sum y, sum x*y


def sequence_stats(outcome: np.ndarray, offsets: np.ndarray, lags: int = 5) -> SequenceStats:
    """``outcome`` codes (0 B, 1 P, 2 T) grouped by shoe in coup order at ``offsets``."""
    hist = np.zeros((2, MAX_RUN + 1), dtype=np.int64)
    per_shoe = np.zeros((len(offsets) - 1, 5), dtype=np.int64)
    lag_sums = np.zeros((lags, 4), dtype=np.int64)
    _pass(np.ascontiguousarray(outcome, dtype=np.int8), offsets.astype(np.int64), lags, hist,
          per_shoe, lag_sums)
    return SequenceStats(hist, per_shoe, lag_sums)


def expected_runs(lengths: np.ndarray, q: float) -> np.ndarray:
    """Expected Banker and Player run-length histograms for independent coups.

    ``lengths``: Banker+Player coups in each shoe; ``q``: P(Banker | not a tie). A run of
    exactly k of one side inside a sequence of m needs the k coups and a different coup (or
    the sequence's edge) on each side.
    """
    out = np.zeros((2, MAX_RUN + 1), dtype=np.float64)
    m = lengths.astype(np.float64)
    for side, p in ((0, q), (1, 1.0 - q)):
        other = 1.0 - p
        for k in range(1, MAX_RUN + 1):
            if k < MAX_RUN:
                inner = np.clip(m - k - 1, 0, None) * other * other * p**k
                edges = np.where(m > k, 2 * other * p**k, 0.0)
                whole = np.where(m == k, p**k, 0.0)
                out[side, k] = float((inner + edges + whole).sum())
            else:  # k or longer: every run start followed by at least k-1 more of the side
                starts_inner = np.clip(m - k, 0, None) * other * p**k
                starts_edge = np.where(m >= k, p**k, 0.0)
                out[side, k] = float((starts_inner + starts_edge).sum())
    return out
