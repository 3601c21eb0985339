"""The statistics report of a slice: what ``roads stats`` and ``roads check`` print."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl

from roads.store.parquet import parts as part_files
from roads.store.parquet import scan
from roads.rules import get_rules
from roads.schema import COUPS
from roads.stats.integrity import integrity_checks
from roads.stats.odds_series import odds_series
from roads.stats.randomness import randomness_tests
from roads.stats.partials import (
    Partial,
    combine,
    finalize,
    grouped,
    in_shoe_order,
    partial,
    with_rules,
)
from roads.store.store import Store


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
    rules = get_rules(info["rules"][0] if info.height and info["rules"][0] else "standard-8")
    burn = info["burn_cards"][0] if info.height else None
    return odds_series(rules, list(burn) if burn is not None else None, coups.sort("coup"))


#: The coup columns the statistics read; the card lists are read only to count them.
_SCALARS = ("table_id", "shoe_id", "coup", "outcome", "player_total", "banker_total",
            "natural", "player_pair", "banker_pair", "dealt_at")


def read_for_statistics(path: Path) -> pl.DataFrame:
    """One part file as the statistics need it: the scalar columns, plus each coup's card
    count (``cards``) instead of the cards. Counting list entries in Arrow, with the card
    codes left dictionary-encoded, is about twice as fast as decoding them into polars.

    The two reads are joined by file row number (polars' row index), never by position,
    so a scan that returned rows in another order could not misalign them."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    frame = (pl.scan_parquet(path, schema=pl.Schema(COUPS), row_index_name="_row")
             .select("_row", *_SCALARS).collect())
    lists = pq.read_table(path, columns=["player_cards", "banker_cards"],
                          read_dictionary=["player_cards.list.element",
                                           "banker_cards.list.element"])
    cards = pl.Series("cards", pc.add(pc.list_value_length(lists["player_cards"]),
                                      pc.list_value_length(lists["banker_cards"])))
    return frame.with_columns(cards.cast(pl.Int8).gather(frame["_row"])).drop("_row")


def store_partial(root: Path, shoes: pl.DataFrame) -> Partial:
    """The partial of every coup in a store, part file by part file, two files at a time.

    Exact: partials are combined by sums and concatenation; a shoe whose coups lie in more
    than one file is recomputed from all its rows together. Corrections are not applied
    here, so callers use it only when the journal holds none (see :func:`store_report`).
    """
    files = part_files(root, "coups")
    if not files:
        return partial(pl.DataFrame(schema=COUPS), shoes)

    def one(path: Path) -> Partial:
        return partial(read_for_statistics(path), None)

    with ThreadPoolExecutor(max_workers=2) as pool:
        combined = combine(list(pool.map(one, files)))
    split = combined.by_shoe.filter(pl.struct("table_id", "shoe_id").is_duplicated())
    if split.is_empty():
        return with_rules(combined, shoes)
    # Rare (a shoe sealed in parts): its fragments' run sums cannot be taken apart, so the
    # store is summarised again with those shoes read whole.
    keys = split.select("table_id", "shoe_id").unique()
    coups = scan(root, "coups")
    whole = partial(coups.join(keys.lazy(), on=["table_id", "shoe_id"]).collect(), shoes)
    rest = partial(coups.join(keys.lazy(), on=["table_id", "shoe_id"], how="anti").collect(),
                   shoes)
    return combine([rest, whole])


def store_report(store: Store, level: float = 0.99) -> dict[str, Any] | None:
    """Statistics and randomness tests of a whole store via per-file partials; None when
    the journal holds corrections (then the read API must apply them)."""
    if any(e.kind in ("coup_voided", "coup_amended") for e in store.journal.events()):
        return None
    part = in_shoe_order(store_partial(store.root, store.read_shoes()))
    stats = finalize(part)
    return {"statistics": stats, "randomness": randomness_tests(stats, part.sequence, level)}
