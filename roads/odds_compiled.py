"""The compiled weighted sums behind :mod:`roads.odds` (numba; loaded only when needed).

:func:`roads.odds.ways` answers one composition with numpy alone (~0.1-0.2 ms) in a process
that has not loaded numba: loading it costs ~1 s, far more than a command like ``roads odds``
spends computing. Processes that already run compiled code (statistics, simulation, the
server, benchmarks) use :func:`ways_kernel`, ~3x faster per call; batch mode always does.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True, fastmath=True)
def ways_kernel(
    values: np.ndarray, factor_index: np.ndarray, coefs_t: np.ndarray, out: np.ndarray
) -> None:
    """``out[s] = sum_g coefs_t[s, g] * weight_g`` for one composition.

    A group's weight is a product of six falling factors. ``out``'s dtype picks the
    arithmetic: float64 is exact while every weight and partial sum stays below 2**53
    (shoes of up to 8 decks), int64 below 2**63. Every term and partial sum is a
    non-negative integer below that bound, so summation order (fastmath reassociation,
    SIMD) cannot change the result.
    """
    f = np.empty(63, dtype=out.dtype)
    n = 0
    for v in range(10):
        n += values[v]
        for j in range(6):
            f[v * 6 + j] = max(values[v] - j, 0)
    f[60] = n - 4
    f[61] = n - 5
    f[62] = 1
    n_groups = factor_index.shape[0]
    w = np.empty(n_groups, dtype=out.dtype)
    for g in range(n_groups):
        w[g] = (
            f[factor_index[g, 0]] * f[factor_index[g, 1]] * f[factor_index[g, 2]]
            * f[factor_index[g, 3]] * f[factor_index[g, 4]] * f[factor_index[g, 5]]
        )
    for s in range(out.shape[0]):
        acc = out[s] * 0
        row = coefs_t[s]
        for g in range(n_groups):
            acc += row[g] * w[g]
        out[s] = acc


@nb.njit(cache=True, parallel=True)
def ways_batch_kernel(
    values: np.ndarray, factor_index: np.ndarray, coefs: np.ndarray, out: np.ndarray
) -> None:
    for i in nb.prange(values.shape[0]):
        ways_kernel(values[i], factor_index, coefs, out[i])

