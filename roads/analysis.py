"""Statistics, checks, roads and summaries of a store's slice: the read port in, the pure
cores' results out (``roads stats``, ``check``, ``summary``, ``batch``, the dashboard).

The statistics and the integrity checks share one read of each file (two files at a time,
each in pieces of whole shoes as flat arrays, with one compiled pass of each per piece;
partials combine exactly, checks merge piece by piece), so their memory does not grow with
the coups or the size of a file: what is kept is a row of counts per shoe, the findings and
the integrity checks' fixed-size window table. Shoes cut across files are read whole at the
end.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa

from roads.stats.ahead import load_ahead
from roads.stats.columns import NotInRuns, ShoeColumns, columns_of
from roads.stats.integrity import Checked, IntegrityScan
from roads.stats.partials import (
    Partial,
    combine,
    partial,
    statistics_of,
    with_rules,
)
from roads.stats.per_shoe import shoe_summary
from roads.stats.report import report_of_partial, shoe_odds
from roads.store import ALL, Selection, Store, to_statistics

if TYPE_CHECKING:
    from roads.board.board import LeadingTies

T = TypeVar("T")
R = TypeVar("R")


def _split(frame: pl.DataFrame) -> pl.DataFrame:
    """Shoes that came back from more than one file (their partials cannot be added)."""
    return frame.filter(pl.struct("table_id", "shoe_id").is_duplicated()).select(
        "table_id", "shoe_id").unique()


def _shoes_of(sel: Selection) -> Selection:
    """The selection's shoes whatever their dates (for rule sets and decks)."""
    return Selection(sel.table_id, sel.shoe_id, shoes=sel.shoes)


def _in_order(work: Callable[[T], R], items: Iterable[T], workers: int = 2) -> Iterator[R]:
    """``work`` of each item on ``workers`` threads, in order, with at most ``workers``
    items under way (``Executor.map`` would draw the whole store in first)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        waiting: deque[Future[R]] = deque()
        for item in items:
            waiting.append(pool.submit(work, item))
            if len(waiting) >= workers:
                yield waiting.popleft().result()
        while waiting:
            yield waiting.popleft().result()


def _scan(store: Store, sel: Selection, shoes: pl.DataFrame,
          scan: IntegrityScan | None) -> Partial | None:
    """One pass over the selection's files: the combined statistics partial (None: no
    coups), and the integrity checks merged into ``scan`` when given."""
    split = store.read.split_shoes(sel)

    def piece(cols: ShoeColumns) -> tuple[Partial, Checked | None] | None:
        if split:
            cols = cols.take_shoes(np.array([key not in split for key in cols.keys.rows()],
                                            dtype=bool))
        if not cols.shoes:
            return None
        return statistics_of(cols), scan.check(cols) if scan is not None else None

    def one(read: Callable[[bool], Iterator[ShoeColumns]]
            ) -> list[tuple[Partial, Checked | None]]:
        """A file's results, piece by piece; read whole if its shoes are not runs of rows."""
        try:
            return [d for d in map(piece, read(True)) if d is not None]
        except NotInRuns:
            return [d for d in map(piece, read(False)) if d is not None]

    parts = []
    for done in _in_order(one, store.read.shoe_columns(sel)):
        for found, checked in done:
            parts.append(found)
            if scan is not None:
                scan.merge(checked)
    if split:
        whole = to_statistics(store.read.coups(Selection(
            sel.table_id, sel.shoe_id, sel.start, sel.end, shoes=split)), cards=True)
        if whole.height:
            cols = columns_of(whole)
            parts.append(statistics_of(cols))
            if scan is not None:
                scan.merge(scan.check(cols))
    if not parts:
        return None
    combined = combine(parts)
    parts.clear()  # the pieces' rows are not held beside the combined ones
    return with_rules(combined, shoes)


def statistics_partial(store: Store, sel: Selection = ALL) -> Partial:
    """The exact partial of the selection's coups, file by file."""
    shoes = store.read.shoes(_shoes_of(sel))
    found = _scan(store, sel, shoes, None)
    if found is None:
        return partial(to_statistics(store.read.coups(Selection(shoe_id="\0"))), shoes)
    return found


def statistics(store: Store, sel: Selection = ALL, level: float = 0.99,
               integrity: bool = True) -> dict[str, Any]:
    """Statistics, randomness tests and integrity findings of a slice (live odds for one
    shoe), from one read of each file."""
    load_ahead()  # the compiled passes and scipy load while the shoes are read
    shoes = store.read.shoes(_shoes_of(sel))
    scan = IntegrityScan(shoes) if integrity else None
    # only the rule sets are needed from here on (a store's shoes table is not held twice)
    shoes = shoes.select("table_id", "shoe_id", "rules", "decks")
    part = _scan(store, sel, shoes, scan)
    result: dict[str, Any] = report_of_partial(part, level) if part is not None else {
        "statistics": {"coups": 0, "shoes": 0}, "randomness": None}
    result["integrity"] = scan.findings() if scan is not None else []
    if sel.shoe_id is not None:
        result["live_odds"] = shoe_odds(store.read.coups(sel), store.read.shoes(_shoes_of(sel)))
    return result


def store_roads(store: Store, leading_ties: LeadingTies = "first-cell",
                sel: Selection = ALL) -> pl.DataFrame:
    """Per-shoe roads of every shoe of the selection, file by file (two at a time)."""
    from roads.board.bulk import SHOE_ROADS, shoe_roads, table_roads

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
