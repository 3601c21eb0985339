"""Statistics, checks, roads and summaries of a store's slice: the read port in, the pure
cores' results out (``roads stats``, ``check``, ``summary``, ``batch``, the dashboard).

The statistics go file by file (two files at a time; partials combine exactly), so their
memory does not grow with the store; the integrity checks read the slice's card-level
coups whole.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import polars as pl
import pyarrow as pa

from roads.board.board import LeadingTies
from roads.board.bulk import SHOE_ROADS, shoe_roads, table_roads
from roads.stats.integrity import IntegrityScan
from roads.stats.partials import Partial, combine, partial, with_rules
from roads.stats.per_shoe import shoe_summary
from roads.stats.report import report_of_partial, shoe_odds
from roads.store import ALL, Selection, Store, to_statistics


def _split(frame: pl.DataFrame) -> pl.DataFrame:
    """Shoes that came back from more than one file (their partials cannot be added)."""
    return frame.filter(pl.struct("table_id", "shoe_id").is_duplicated()).select(
        "table_id", "shoe_id").unique()


def _shoes_of(sel: Selection) -> Selection:
    """The selection's shoes whatever their dates (for rule sets and decks)."""
    return Selection(sel.table_id, sel.shoe_id, shoes=sel.shoes)


def statistics_partial(store: Store, sel: Selection = ALL) -> Partial:
    """The exact partial of the selection's coups, file by file."""
    def parts(exclude: pl.DataFrame | None = None) -> list[Partial]:
        def one(frame: pl.DataFrame) -> Partial | None:
            if exclude is not None:
                frame = frame.join(exclude, on=["table_id", "shoe_id"], how="anti")
            return partial(frame, None) if frame.height else None

        with ThreadPoolExecutor(max_workers=2) as pool:
            return [p for p in pool.map(one, store.read.statistics_frames(sel))
                    if p is not None]

    shoes = store.read.shoes(_shoes_of(sel))
    found = parts()
    if not found:
        return partial(to_statistics(store.read.coups(Selection(shoe_id="\0"))), shoes)
    combined = combine(found)
    split = _split(combined.by_shoe)
    if not split.is_empty():
        # Rare (a shoe imported in pieces): its fragments' run sums cannot be taken apart,
        # so the slice is summarised again with those shoes read whole.
        whole = store.read.coups(Selection(sel.table_id, sel.shoe_id, sel.start, sel.end,
                                           shoes=frozenset(split.iter_rows())))
        combined = combine([*parts(split), partial(to_statistics(whole), None)])
    return with_rules(combined, shoes)


def statistics(store: Store, sel: Selection = ALL, level: float = 0.99,
               integrity: bool = True) -> dict[str, Any]:
    """Statistics, randomness tests and integrity findings of a slice (live odds for one
    shoe)."""
    part = statistics_partial(store, sel)
    result: dict[str, Any] = report_of_partial(part, level) if part.by_shoe.height else {
        "statistics": {"coups": 0, "shoes": 0}, "randomness": None}
    result["integrity"] = integrity_findings(store, sel) if integrity else []
    if sel.shoe_id is not None:
        result["live_odds"] = shoe_odds(store.read.coups(sel), store.read.shoes(_shoes_of(sel)))
    return result


def integrity_findings(store: Store, sel: Selection = ALL) -> list[dict[str, Any]]:
    """The integrity checks of a slice, file by file: memory holds one file's coups and
    each shoe's sketch. A shoe cut across files is checked again, read whole."""
    scan = IntegrityScan(store.read.shoes(_shoes_of(sel)))
    for batch in store.read.batches(sel):
        scan.add(batch)
    split = scan.split_shoes()
    if split:
        scan.add(store.read.coups(Selection(sel.table_id, sel.shoe_id, sel.start, sel.end,
                                            shoes=frozenset(split))), whole=True)
    return scan.findings()


def store_roads(store: Store, leading_ties: LeadingTies = "first-cell",
                sel: Selection = ALL) -> pl.DataFrame:
    """Per-shoe roads of every shoe of the selection, file by file (two at a time)."""
    def one(source: pa.Table | pl.DataFrame) -> pa.Table:
        if isinstance(source, pa.Table):
            return table_roads(source, leading_ties)
        return shoe_roads(source, leading_ties).to_arrow()

    with ThreadPoolExecutor(max_workers=2) as pool:
        parts = list(pool.map(one, store.read.outcome_tables(sel)))
    if not parts:
        return pl.DataFrame(schema=SHOE_ROADS)
    out = pl.from_arrow(pa.concat_tables([p.cast(parts[0].schema) for p in parts]))
    assert isinstance(out, pl.DataFrame)
    out = out.cast(SHOE_ROADS)  # type: ignore[arg-type]
    split = _split(out)
    if split.is_empty():
        return out
    whole = shoe_roads(store.read.coups(Selection(shoes=frozenset(split.iter_rows()))),
                       leading_ties)
    return pl.concat([out.join(split, on=["table_id", "shoe_id"], how="anti"), whole])


def summary(store: Store, limit: int | None = None) -> tuple[pl.DataFrame, int]:
    """The per-shoe summary of the most recent ``limit`` shoes, and how many shoes the
    store holds."""
    shoes = store.read.shoes().sort("started_at", "table_id", "shoe_id", nulls_last=True)
    total = shoes.height
    if limit is not None:
        shoes = shoes.tail(limit)
    keys = frozenset((str(t), str(s)) for t, s in shoes.select("table_id", "shoe_id")
                     .iter_rows())
    coups = store.read.coups(Selection(shoes=keys)) if keys else store.read.coups(
        Selection(shoe_id="\0"))
    return shoe_summary(coups, shoes), total
