"""The statistics partial and the integrity checks of a batch of whole shoes, each in one
compiled pass over its :class:`~roads.stats.columns.ShoeColumns`.

Why: a store's files are read once for ``roads stats`` and ``roads check``, and the work on
each batch was a dozen polars expressions and numpy passes around the kernels (casts, null
fills, card values, counts); here the kernels read the arrays as the store filled them. The
kernels are the same ones the whole-slice report runs (:mod:`roads.stats.partials`,
:mod:`roads.stats.sequence`, the integrity checks' shoe pass and the ingest's row replay),
so a figure or a finding cannot depend on the path; ``tests/stats`` compares the two.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import polars as pl

from roads import replay as k
from roads.stats.columns import ShoeColumns
from roads.stats.integrity import (
    _POINTS,
    SKETCH,
    Checked,
    IntegrityScan,
    _shoe_pass,
    row_findings,
    shoe_findings,
    shoe_info,
)
from roads.stats.partials import COUNT_COLUMNS, Partial, _per_shoe_counts
from roads.stats.sequence import MAX_RUN, SequenceStats, _pass

LAGS = 5  # serial-correlation lags, as :func:`roads.stats.sequence.sequence_stats`


@nb.njit(cache=True, nogil=True)
def _statistics_pass(offsets: np.ndarray, outcome: np.ndarray, p_total: np.ndarray,
                     b_total: np.ndarray, natural: np.ndarray, p_pair: np.ndarray,
                     b_pair: np.ndarray, cards: np.ndarray, dealt_at: np.ndarray,
                     counts: np.ndarray, span: np.ndarray, hist: np.ndarray,
                     per_shoe: np.ndarray, lag_sums: np.ndarray) -> None:
    """Per shoe: the counts of every measure, the dealing span, the sequence figures."""
    _per_shoe_counts(offsets, outcome, p_pair, b_pair, natural, cards, p_total, b_total,
                     counts)
    for s in range(offsets.shape[0] - 1):
        low = high = dealt_at[offsets[s]]
        for i in range(offsets[s] + 1, offsets[s + 1]):
            low = min(low, dealt_at[i])
            high = max(high, dealt_at[i])
        span[s] = high - low
    _pass(outcome, offsets, lag_sums.shape[0], hist, per_shoe, lag_sums)


@nb.njit(cache=True, nogil=True)
def _checks_pass(offsets: np.ndarray, outcome: np.ndarray, p_total: np.ndarray,
                 b_total: np.ndarray, natural: np.ndarray, p_pair: np.ndarray,
                 b_pair: np.ndarray, p: np.ndarray, b: np.ndarray, decks: np.ndarray,
                 burned: np.ndarray, cut: np.ndarray, end_rule: np.ndarray,
                 flags: np.ndarray, over: np.ndarray, runs: np.ndarray, end: np.ndarray,
                 sketch: np.ndarray, size: np.ndarray) -> None:
    """Card-level coups: the row replay (tableau, totals, outcome, flags) of every coup and
    the per-shoe checks (inventory, ordered runs, end rule, sketch)."""
    _shoe_pass(p, b, offsets, decks, burned, cut, end_rule, over, runs, end, sketch, size)
    for r in range(p.shape[0]):
        p_count = 0
        b_count = 0
        for j in range(3):
            p_count += p[r, j] != k.NONE
            b_count += b[r, j] != k.NONE
        flags[r] = k.judge_coup(
            _POINTS[p[r, 0]], _POINTS[p[r, 1]], _POINTS[p[r, 2]], p[r, 0], p[r, 1], p_count,
            k.KIND_CARDS, _POINTS[b[r, 0]], _POINTS[b[r, 1]], _POINTS[b[r, 2]], b[r, 0],
            b[r, 1], b_count, k.KIND_CARDS, outcome[r], p_total[r], b_total[r], natural[r],
            p_pair[r], b_pair[r])[6]


def statistics_of(cols: ShoeColumns) -> Partial:
    """The statistics partial of a batch (rule sets left out, as
    :func:`roads.stats.partials.partial` without shoes; spans -1 when a coup has no time)."""
    n = cols.shoes
    counts = np.zeros((n, len(COUNT_COLUMNS)), dtype=np.int64)
    span = np.empty(n, dtype=np.int64)
    hist = np.zeros((2, MAX_RUN + 1), dtype=np.int64)
    per_shoe = np.zeros((n, 5), dtype=np.int64)
    lag_sums = np.zeros((LAGS, 4), dtype=np.int64)
    _statistics_pass(cols.offsets, cols.outcome, cols.player_total, cols.banker_total,
                     cols.natural, cols.player_pair, cols.banker_pair, cols.cards,
                     cols.dealt_at, counts, span, hist, per_shoe, lag_sums)
    if not cols.timed:
        span[:] = -1
    # Int16 per shoe (a shoe deals at most 13 coups a deck, decks < 128): a quarter of the
    # memory a store's worth of shoes holds; the sums are Int64
    by_shoe = pl.concat([cols.keys, pl.DataFrame(counts.astype(np.int16), schema=COUNT_COLUMNS,
                                                 orient="row")], how="horizontal")
    return Partial(by_shoe.with_columns(pl.Series("span_us", span, dtype=pl.Int64)),
                   SequenceStats(hist, per_shoe, lag_sums))


def checks_of(cols: ShoeColumns, scan: IntegrityScan) -> Checked | None:
    """The integrity checks of a batch on their own (the scan's state is only read), for
    :meth:`IntegrityScan.merge` to add."""
    cards = cols.card_level()
    if not cards.rows:
        return None
    info = shoe_info(cards.keys, cards.offsets, scan.rows_of(cards.keys))
    n = cards.shoes
    flags = np.zeros(cards.rows, dtype=np.int32)
    over = np.zeros((n, 2), dtype=np.int64)
    runs = np.zeros((n, 2), dtype=np.int64)
    end = np.zeros(n, dtype=np.int64)
    sketch = np.zeros((n, SKETCH), dtype=np.uint64)
    size = np.zeros(n, dtype=np.int64)
    _checks_pass(cards.offsets, cards.outcome, cards.player_total, cards.banker_total,
                 cards.natural, cards.player_pair, cards.banker_pair, cards.player,
                 cards.banker, info.decks, info.burned, info.cut, info.end_rule, flags, over,
                 runs, end, sketch, size)
    found = row_findings(flags, named=(cards.keys, cards.offsets, cards.coup))
    found += shoe_findings(cards.keys, cards.offsets, info, over, runs, end)
    return Checked(cards.keys, found, sketch, size)
