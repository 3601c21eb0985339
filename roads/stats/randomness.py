"""Randomness tests against the exact probabilities of the decks in use.

Chi-square goodness of fit (Banker/Player/Tie, final totals, cards per coup), the
Wald–Wolfowitz runs test on the Banker/Player sequence (pooled over shoes), and lag-1..k
serial correlation. Because many tests run at once, p-values are adjusted with Holm's
step-down method (which controls the family-wise error rate without assuming independence),
and a test is flagged only when its adjusted p-value is below ``1 - level`` (level 0.99 by
default, as the regulations cited in COMPLIANCE.md use).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from roads.stats.sequence import SequenceStats


def _special() -> Any:
    """``scipy.special`` (not scipy.stats: the same functions, imported in a third of the
    time), imported on first use: half a second that ``roads stats`` spends on a thread
    beside its reads (:mod:`roads.stats.ahead`), not before them."""
    import scipy.special

    return scipy.special


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def chi_square(observed: list[int], expected: list[float]) -> tuple[float, int, float] | None:
    """(statistic, degrees of freedom, p) — None when there is too little data (any
    expected count below 5 after pooling nothing)."""
    if not observed or sum(observed) == 0 or min(expected) < 5:
        return None
    stat = float(sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True)))
    df = len(observed) - 1
    return stat, df, float(_special().chdtrc(df, stat))


def runs_test(seq: SequenceStats) -> tuple[float, float] | None:
    """Wald–Wolfowitz, pooled: sum of runs against the sum of per-shoe expectations."""
    n1 = seq.per_shoe[:, 0].astype(np.float64)
    n2 = seq.per_shoe[:, 1].astype(np.float64)
    n = n1 + n2
    used = n > 1
    if not used.any():
        return None
    n1, n2, n = n1[used], n2[used], n[used]
    mean = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    total_var = float(var.sum())
    if total_var <= 0:
        return None
    z = (float(seq.per_shoe[used, 2].sum()) - float(mean.sum())) / math.sqrt(total_var)
    return z, float(2 * _special().ndtr(-abs(z)))


def serial_correlation(seq: SequenceStats, lag: int) -> tuple[float, float, float] | None:
    """(r, z, p) of the ±1 Banker/Player stream against itself ``lag`` coups later."""
    pairs, sx, sy, sxy = (float(v) for v in seq.lag_sums[lag - 1])
    if pairs < 30:
        return None
    mx, my = sx / pairs, sy / pairs
    cov = sxy / pairs - mx * my
    vx, vy = 1 - mx * mx, 1 - my * my  # x and y are ±1, so E[x²] = 1
    if vx <= 0 or vy <= 0:
        return None
    r = cov / math.sqrt(vx * vy)
    z = r * math.sqrt(pairs)
    return r, z, float(2 * _special().ndtr(-abs(z)))


def randomness_tests(stats: dict[str, Any], seq: SequenceStats, level: float = 0.99,
                     lags: int = 5) -> dict[str, Any]:
    """Every test the data allows, Holm-adjusted, flagged at ``level``."""
    tests: list[dict[str, Any]] = []

    def add_chi(name: str, measures: list[dict[str, Any]]) -> None:
        result = chi_square([m["count"] for m in measures],
                            [m["expected_count"] for m in measures])
        if result is not None:
            stat, df, p = result
            tests.append({"test": name, "kind": "chi-square", "statistic": stat, "df": df,
                          "p_value": p})

    if stats.get("coups"):
        add_chi("banker/player/tie", list(stats["outcomes"].values()))
        add_chi("player final totals", stats["final_totals"]["player"])
        add_chi("banker final totals", stats["final_totals"]["banker"])
        add_chi("cards per coup", list(stats["cards_per_coup"].values()))
    runs = runs_test(seq)
    if runs is not None:
        tests.append({"test": "runs (Banker/Player)", "kind": "Wald-Wolfowitz",
                      "statistic": runs[0], "p_value": runs[1]})
    for lag in range(1, min(lags, len(seq.lag_sums)) + 1):
        corr = serial_correlation(seq, lag)
        if corr is not None:
            tests.append({"test": f"serial correlation lag {lag}", "kind": "correlation",
                          "statistic": corr[1], "r": corr[0], "p_value": corr[2]})
    adjusted = holm([t["p_value"] for t in tests])
    alpha = 1 - level
    for t, p in zip(tests, adjusted, strict=True):
        t["p_adjusted"] = p
        t["flagged"] = p < alpha
    return {"level": level, "correction": "Holm", "tests": tests,
            "flagged": any(t["flagged"] for t in tests)}
