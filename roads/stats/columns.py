"""A batch of whole shoes as flat arrays: what the compiled passes of the statistics
(:func:`roads.stats.partials.statistics_of`) and the integrity checks
(:meth:`roads.stats.integrity.IntegrityScan.check`) read.

Why arrays and not a frame: the store fills them straight from a file's Arrow buffers
(``roads.store.buffers``) with no frame built in between, and a compiled pass reads them
with no conversion. Any other source (a corrected file, journaled shoes, a selection) comes
as a statistics frame and is converted by :func:`columns_of`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from roads.schema import CARD_SLOTS, NO_CARD, grouped_by_shoe


class NotInRuns(Exception):
    """A file's shoes are not each one run of rows in rising coup order (it was not written
    by the store), or it holds what the arrays cannot carry (a null key or outcome): read
    it through a frame instead (:func:`columns_of`)."""


@dataclass(frozen=True)
class ShoeColumns:
    """Coups grouped by shoe in rising coup order (shoe ``s`` is rows
    ``offsets[s]`` to ``offsets[s + 1] - 1``). Unknown values are -1."""

    keys: pl.DataFrame  # table_id, shoe_id (String) of each shoe, in row order
    offsets: np.ndarray  # int64, shoes + 1
    coup: np.ndarray  # int32
    outcome: np.ndarray  # int8: 0 Banker, 1 Player, 2 Tie
    player_total: np.ndarray  # int8
    banker_total: np.ndarray  # int8
    natural: np.ndarray  # int8: 0, 1
    player_pair: np.ndarray  # int8
    banker_pair: np.ndarray  # int8
    cards: np.ndarray  # int8: cards dealt; -1 when the coup has no card lists
    player: np.ndarray  # (rows, 3) uint8 card codes, NO_CARD for an empty slot
    banker: np.ndarray  # (rows, 3) uint8
    dealt_at: np.ndarray  # int64 microseconds since the epoch (0 where unknown)
    timed: bool  # every coup has its time

    def __post_init__(self) -> None:
        # One array layout (C order, writable) whatever the source: each layout is another
        # compilation of the kernels that read these, which `roads prepare` would not meet.
        for name in ("offsets", *_ROW_ARRAYS):
            object.__setattr__(self, name, np.require(getattr(self, name),
                                                      requirements=["C", "W"]))

    @property
    def rows(self) -> int:
        return int(self.offsets[-1])

    @property
    def shoes(self) -> int:
        return len(self.offsets) - 1

    def take_shoes(self, keep: np.ndarray) -> ShoeColumns:
        """Only the shoes where ``keep`` (bool, one per shoe) holds."""
        lengths = np.diff(self.offsets)
        rows = np.repeat(keep, lengths)
        offsets = np.r_[0, np.cumsum(lengths[keep])].astype(np.int64)
        kept = {name: getattr(self, name)[rows] for name in _ROW_ARRAYS}
        return replace(self, keys=self.keys.filter(pl.Series(keep)), offsets=offsets, **kept)

    def card_level(self) -> ShoeColumns:
        """Only the coups with both hands' cards (what the integrity checks judge), shoes
        with none left out; ``self`` when every coup has them."""
        rows = self.cards >= 0
        if rows.all():
            return self
        shoe = np.repeat(np.arange(self.shoes), np.diff(self.offsets))[rows]
        counts = np.bincount(shoe, minlength=self.shoes)
        offsets = np.r_[0, np.cumsum(counts[counts > 0])].astype(np.int64)
        kept = {name: getattr(self, name)[rows] for name in _ROW_ARRAYS}
        return replace(self, keys=self.keys.filter(pl.Series(counts > 0)), offsets=offsets,
                       **kept)


_ROW_ARRAYS = ("coup", "outcome", "player_total", "banker_total", "natural", "player_pair",
               "banker_pair", "cards", "player", "banker", "dealt_at")


def columns_of(frame: pl.DataFrame) -> ShoeColumns:
    """Coups as arrays, grouped by shoe (sorted only when they are not already): a
    statistics frame (``roads.store.to_statistics(..., cards=True)``) or canonical coups
    (their card lists read into slots here)."""
    if "player_cards" in frame.columns:
        lists = [pl.col(f"{side}_cards") for side in ("player", "banker")]
        frame = frame.with_columns(
            (lists[0].list.len() + lists[1].list.len()).cast(pl.Int8).alias("cards"),
            *(pl.col(f"{side}_cards").list.get(i, null_on_oob=True).to_physical()
              .fill_null(NO_CARD).cast(pl.UInt8).alias(f"{side}_{i + 1}")
              for side in ("player", "banker") for i in range(3)))
    frame, starts = grouped_by_shoe(frame)
    offsets = np.r_[np.flatnonzero(starts), frame.height].astype(np.int64)
    small = frame.select(
        pl.col("outcome").to_physical().cast(pl.Int8),
        *(pl.col(c).cast(pl.Int8).fill_null(-1) for c in (
            "player_total", "banker_total", "natural", "player_pair", "banker_pair", "cards")))
    times = frame["dealt_at"]
    return ShoeColumns(
        keys=frame.select(pl.col("table_id", "shoe_id").cast(pl.String))[offsets[:-1]],
        offsets=offsets,
        coup=frame["coup"].cast(pl.Int32).to_numpy(),
        **{c: small[c].to_numpy() for c in small.columns},
        player=frame.select(CARD_SLOTS[:3]).to_numpy().astype(np.uint8),
        banker=frame.select(CARD_SLOTS[3:]).to_numpy().astype(np.uint8),
        dealt_at=times.dt.epoch("us").fill_null(0).to_numpy(),
        timed=times.null_count() == 0,
    )
