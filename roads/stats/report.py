"""The statistics report of a slice of coups: what ``roads stats`` and ``roads check`` print.

Pure: coups and shoes in, the report out. Reading a store's slice (file by file, through
the store's read port) is :mod:`roads.analysis`.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from roads.stats.expect import shoe_rules
from roads.stats.integrity import integrity_checks
from roads.stats.odds_series import odds_series
from roads.stats.partials import Partial, finalize, grouped, in_shoe_order, partial
from roads.stats.randomness import randomness_tests


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
    grouping = grouped(coups)
    part = in_shoe_order(partial(coups, shoes, grouping))
    stats = finalize(part)
    result: dict[str, Any] = {"statistics": stats,
                              "randomness": randomness_tests(stats, part.sequence, level)}
    result["integrity"] = integrity_checks(grouping[0], shoes) if with_integrity else []
    return result


def shoe_odds(coups: pl.DataFrame, shoes: pl.DataFrame) -> list[dict[str, Any]] | None:
    """Live-odds series of one card-level shoe (None when the shoe has no cards)."""
    if coups.is_empty() or coups["player_cards"].null_count():
        return None
    key = coups.row(0, named=True)
    info = shoes.filter((pl.col("table_id") == key["table_id"])
                        & (pl.col("shoe_id") == key["shoe_id"]))
    rules = shoe_rules(info["rules"][0] if info.height else None,
                       info["decks"][0] if info.height else None)
    burn = info["burn_cards"][0] if info.height else None
    return odds_series(rules, list(burn) if burn is not None else None, coups.sort("coup"))


def report_of_partial(part: Partial, level: float = 0.99) -> dict[str, Any]:
    """Statistics and randomness tests of a combined partial (no integrity checks)."""
    part = in_shoe_order(part)
    stats = finalize(part)
    return {"statistics": stats, "randomness": randomness_tests(stats, part.sequence, level)}
