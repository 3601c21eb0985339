"""Loading what the statistics will need before they need it, on a thread of its own.

Why: a fresh ``roads stats`` or ``roads check`` process loads its compiled passes from the
kernel cache on the first piece of the first file (about half a second, holding the GIL, with
both readers waiting), and imports ``scipy.special`` (half a second more) for the tests at the
very end, after everything else. Started as the command begins, the loading runs while the
main thread reads the catalogue's shoe tables from SQLite (which releases the GIL), on the
core that would otherwise wait.
"""

from __future__ import annotations

import functools
import importlib
import threading

import numpy as np
import polars as pl

from roads.schema import NO_CARD, conform
from roads.stats.columns import ShoeColumns


def _one_shoe() -> tuple[pl.DataFrame, ShoeColumns]:
    """A one-coup shoe as the passes read it (Player As 2h, Banker Kd 9c: Banker 9 natural),
    and its shoes row."""
    keys = pl.DataFrame({"table_id": ["-"], "shoe_id": ["-"]})
    shoes = conform(keys.with_columns(pl.lit("standard-8").alias("rules"),
                                      pl.lit(8, pl.Int8).alias("decks")), "shoes")

    def small(value: int) -> np.ndarray:
        return np.array([value], dtype=np.int8)

    cols = ShoeColumns(
        keys=keys, offsets=np.array([0, 1], dtype=np.int64), coup=np.array([1], np.int32),
        outcome=small(0), player_total=small(3), banker_total=small(9), natural=small(1),
        player_pair=small(0), banker_pair=small(0), cards=small(4),
        player=np.array([[0, 5, NO_CARD]], dtype=np.uint8),
        banker=np.array([[50, 35, NO_CARD]], dtype=np.uint8),
        dealt_at=np.array([0], dtype=np.int64), timed=True)
    return shoes, cols


def _load() -> None:
    from roads.stats.integrity import IntegrityScan
    from roads.stats.partials import statistics_of

    shoes, cols = _one_shoe()
    statistics_of(cols)
    IntegrityScan(shoes).check(cols)
    importlib.import_module("scipy.special")


@functools.cache
def load_ahead() -> threading.Thread:
    """Start loading the compiled statistics and integrity passes and the tests' special
    functions (nothing is computed that a result uses), once a process; the thread is
    returned for tests."""
    thread = threading.Thread(target=_load, name="roads-stats-ahead", daemon=True)
    thread.start()
    return thread


__all__ = ["load_ahead"]
