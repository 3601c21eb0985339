"""Live exact odds: the remaining composition and next-coup odds after every coup of a shoe.

Presented as information: the figures say what the next coup's chances are, never what to
bet (no betting system changes the house edge over a shoe).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from roads.cards import CARD_INDEX, RANK_POINTS
from roads.odds import CORE_STATS, Composition, Odds, ways_batch
from roads.rules import RuleSet


def compositions(rules: RuleSet, burn_cards: list[str] | None,
                 coups: pl.DataFrame) -> np.ndarray:
    """Rank counts (13) of the shoe before each coup and after the last: (coups + 1, 13)."""
    ranks = np.full(13, 4 * rules.decks, dtype=np.int64)
    for card in burn_cards or []:
        ranks[CARD_INDEX[card] // 4] -= 1
    rows = [ranks.copy()]
    for player, banker in coups.select("player_cards", "banker_cards").iter_rows():
        for card in [*(player or []), *(banker or [])]:
            ranks[CARD_INDEX[card] // 4] -= 1
        rows.append(ranks.copy())
    return np.array(rows)


def odds_series(rules: RuleSet, burn_cards: list[str] | None,
                coups: pl.DataFrame) -> list[dict[str, Any]]:
    """After each coup (and before the first): remaining composition, probabilities and
    house edges of every bet, computed exactly in one batch."""
    ranks = compositions(rules, burn_cards, coups)
    values = np.zeros((len(ranks), 10), dtype=np.int64)
    for r in range(13):
        values[:, RANK_POINTS[r]] += ranks[:, r]
    batch = ways_batch(values)
    series = []
    for i, (rank_counts, row) in enumerate(zip(ranks, batch, strict=True)):
        w = dict(zip(CORE_STATS, (int(x) for x in row), strict=True))
        n = int(rank_counts.sum())
        pairs = int((rank_counts * (rank_counts - 1)).sum())
        odds = Odds(Composition(tuple(int(x) for x in rank_counts)), w, (pairs, n * (n - 1)))
        edges = odds.house_edges(rules)
        series.append({
            "after_coup": i, "cards_left": n,
            "composition": {r: int(c) for r, c in zip("A23456789TJQK", rank_counts,
                                                       strict=True)},
            "probability": {k: float(odds.probability(k)) for k in ("banker", "player", "tie")},
            "house_edge": {k: float(v) for k, v in edges.items()},
        })
    return series
