"""The statistics report of a slice: what ``roads stats`` and ``roads check`` print."""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from roads.rules import get_rules
from roads.stats.integrity import integrity_checks
from roads.stats.live import odds_series
from roads.stats.randomness import randomness_tests
from roads.stats.sequence import sequence_stats
from roads.stats.summary import grouped, outcome_statistics


def slice_coups(coups: pl.DataFrame, start: date | None, end: date | None) -> pl.DataFrame:
    """Coups dealt on days ``start``..``end`` (inclusive, UTC)."""
    if start is not None:
        coups = coups.filter(pl.col("dealt_at").dt.date() >= start)
    if end is not None:
        coups = coups.filter(pl.col("dealt_at").dt.date() <= end)
    return coups


def report(coups: pl.DataFrame, shoes: pl.DataFrame, level: float = 0.99,
           with_integrity: bool = True) -> dict[str, Any]:
    """Statistics, randomness tests and integrity findings of one slice."""
    if coups.is_empty():
        return {"statistics": {"coups": 0, "shoes": 0}, "randomness": None, "integrity": []}
    groups = grouped(coups)
    ordered, offsets, _ = groups
    seq = sequence_stats(ordered["outcome"].to_physical().to_numpy(), offsets)
    stats = outcome_statistics(ordered, shoes, seq, groups)
    result: dict[str, Any] = {"statistics": stats,
                              "randomness": randomness_tests(stats, seq, level)}
    result["integrity"] = integrity_checks(ordered, shoes) if with_integrity else []
    return result


def shoe_odds(coups: pl.DataFrame, shoes: pl.DataFrame) -> list[dict[str, Any]] | None:
    """Live-odds series of one card-level shoe (None when the shoe has no cards)."""
    if coups.is_empty() or coups["player_cards"].null_count():
        return None
    key = coups.row(0, named=True)
    info = shoes.filter((pl.col("table_id") == key["table_id"])
                        & (pl.col("shoe_id") == key["shoe_id"]))
    rules = get_rules(info["rules"][0] if info.height and info["rules"][0] else "standard-8")
    burn = info["burn_cards"][0] if info.height else None
    return odds_series(rules, list(burn) if burn is not None else None, coups.sort("coup"))
