"""A shoe's scoreboard: Bead Plate, Big Road, the three derived roads and the ask road.

:class:`Board` wraps the compiled state machine of :mod:`roads.board.machine` and turns its
arrays into cells that remember the coup they came from. Appending a coup is O(1), so a live
table keeps one Board per shoe; a stored shoe is built by appending its coups in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from roads.board import machine as k
from roads.errors import InputError

LeadingTies = Literal["first-cell", "own-column"]
LEADING_TIES: tuple[str, ...] = ("first-cell", "own-column")
DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")
ROAD_NAMES = ("bead_plate", "big_road", *DERIVED)
COLOURS = ("red", "blue")
_CODE = {"B": k.BANKER, "P": k.PLAYER, "T": k.TIE}
_LABEL = "BPT"


class OutcomeError(InputError):
    """An outcome string with a character that is not B, P or T."""


def parse_outcomes(text: str) -> str:
    """Upper-case ``B``/``P``/``T`` string; whitespace is ignored.

    Raises :class:`OutcomeError` naming the first bad character and its 1-based position.
    """
    out = []
    for pos, ch in enumerate(text, start=1):
        if ch.isspace():
            continue
        up = ch.upper()
        if up not in _CODE:
            raise OutcomeError(
                f"invalid outcome {ch!r} at position {pos} (expected B, P or T)")
        out.append(up)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class CoupInfo:
    """What the roads need of a coup; pairs/natural/totals are None when not recorded."""

    outcome: str
    player_pair: bool | None = None
    banker_pair: bool | None = None
    natural: bool | None = None
    player_total: int | None = None
    banker_total: int | None = None

    @property
    def winning_total(self) -> int | None:
        """The total printed in a Bead Plate cell (either total for a tie)."""
        if self.outcome == "P":
            return self.player_total
        return self.banker_total if self.banker_total is not None else self.player_total


@dataclass(frozen=True, slots=True)
class BeadCell:
    col: int
    row: int
    outcome: str
    coup: int
    info: CoupInfo


@dataclass(frozen=True, slots=True)
class BigRoadCell:
    col: int
    row: int
    outcome: str  # B, P, or T for the own-column leading-tie cell
    ties: int
    coup: int
    column: int  # logical column (streak) index
    depth: int  # 0-based position within the streak
    tie_coups: tuple[int, ...]
    info: CoupInfo


@dataclass(frozen=True, slots=True)
class Mark:
    col: int
    row: int
    color: str
    coup: int  # the coup of the Big Road entry that made the mark
    entry: int  # index of that Big Road entry


@dataclass(frozen=True, slots=True)
class Ask:
    """What the next coup would add if it were Banker (or Player)."""

    outcome: str
    big_road_cell: tuple[int, int]
    colors: dict[str, str | None]
    cells: dict[str, tuple[int, int] | None]


class Board:
    """The five roads of one shoe, updated coup by coup."""

    def __init__(self, leading_ties: LeadingTies = "first-cell", capacity: int = 128) -> None:
        if leading_ties not in LEADING_TIES:
            raise InputError(
                f"leading-ties convention must be one of {', '.join(LEADING_TIES)}")
        self.leading_ties: LeadingTies = leading_ties
        self._state = k.new_state(capacity, leading_ties == "own-column")
        self._coups: list[CoupInfo] = []

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_outcomes(cls, outcomes: str | Iterable[str],
                      leading_ties: LeadingTies = "first-cell") -> Board:
        text = parse_outcomes(outcomes if isinstance(outcomes, str) else "".join(outcomes))
        board = cls(leading_ties, capacity=max(16, len(text) + 1))
        board.extend(CoupInfo(ch) for ch in text)
        return board

    @classmethod
    def from_coups(cls, rows: Iterable[dict[str, Any]],
                   leading_ties: LeadingTies = "first-cell") -> Board:
        """From canonical ``coups`` rows of one shoe, in coup order."""
        infos = [
            CoupInfo(str(r["outcome"]), r.get("player_pair"), r.get("banker_pair"),
                     r.get("natural"), r.get("player_total"), r.get("banker_total"))
            for r in rows
        ]
        board = cls(leading_ties, capacity=max(16, len(infos) + 1))
        board.extend(infos)
        return board

    def append(self, coup: CoupInfo | str) -> None:
        """Add the next coup of the shoe (O(1); the live-table path)."""
        info = CoupInfo(parse_outcomes(coup)) if isinstance(coup, str) else coup
        if info.outcome not in _CODE or len(info.outcome) != 1:
            raise OutcomeError(f"invalid outcome {info.outcome!r} (expected B, P or T)")
        if len(self._coups) + 1 >= self._state[0][k.I_CAP]:
            self._grow()
        ints, entries, col_len, tie_of, marks, grid, draw = self._state
        k.append(ints, entries, col_len, tie_of, marks, grid, draw, _CODE[info.outcome])
        self._coups.append(info)

    def extend(self, coups: Iterable[CoupInfo]) -> None:
        infos = list(coups)
        for info in infos:
            if info.outcome not in _CODE or len(info.outcome) != 1:
                raise OutcomeError(f"invalid outcome {info.outcome!r} (expected B, P or T)")
        while len(self._coups) + len(infos) + 1 >= self._state[0][k.I_CAP]:
            self._grow()
        codes = np.array([_CODE[i.outcome] for i in infos], dtype=np.int64)
        ints, entries, col_len, tie_of, marks, grid, draw = self._state
        k.append_many(ints, entries, col_len, tie_of, marks, grid, draw, codes)
        self._coups.extend(infos)

    def _grow(self) -> None:
        old = self._state
        cap = int(old[0][k.I_CAP])
        new = k.new_state(cap * 2, bool(old[0][k.I_OWN_COLUMN]))
        new[0][:] = old[0]
        new[0][k.I_CAP] = cap * 2
        new[1][:cap] = old[1]
        new[2][:cap] = old[2]
        new[3][:cap] = old[3]
        new[4][:, :cap] = old[4]
        new[5][:, :, : old[5].shape[2]] = old[5]
        new[6][:] = old[6]
        self._state = new

    # -- reading --------------------------------------------------------------------------
    @property
    def coups(self) -> Sequence[CoupInfo]:
        return tuple(self._coups)

    def __len__(self) -> int:
        return len(self._coups)

    @property
    def bead_plate(self) -> list[BeadCell]:
        return [BeadCell(i // 6, i % 6, c.outcome, i, c) for i, c in enumerate(self._coups)]

    @property
    def big_road(self) -> list[BigRoadCell]:
        ints, entries, _, tie_of, *_ = self._state
        n = int(ints[k.I_ENTRIES])
        ties: list[list[int]] = [[] for _ in range(n)]
        for coup, entry in enumerate(tie_of[: len(self._coups)].tolist()):
            if entry >= 0:
                ties[entry].append(coup)
        cells = []
        for i, (coup, col, row, c, r, n_ties, label) in enumerate(entries[:n].tolist()):
            cells.append(BigRoadCell(col, row, _LABEL[label], n_ties, coup, c, r,
                                     tuple(ties[i]), self._coups[coup]))
        return cells

    def marks(self, road: str) -> list[Mark]:
        """The marks of a derived road (``big_eye_boy``, ``small_road``, ``cockroach_pig``)."""
        ints, entries, _, _, marks, *_ = self._state
        idx = DERIVED.index(road)
        m = int(ints[k.I_MARKS + idx])
        return [Mark(col, row, COLOURS[colour], int(entries[src, 0]), src)
                for src, col, row, colour in marks[idx, :m].tolist()]

    def mark_string(self, road: str) -> str:
        """``R``/``B`` per mark, in entry order (the form of the fixtures)."""
        return "".join("R" if m.color == "red" else "B" for m in self.marks(road))

    @property
    def pending_ties(self) -> int:
        """Leading ties not yet shown (first-cell convention, before the first B/P)."""
        return int(self._state[0][k.I_PENDING]) if not int(self._state[0][k.I_ENTRIES]) else 0

    @property
    def column_lengths(self) -> list[int]:
        ints, _, col_len, *_ = self._state
        return [int(x) for x in col_len[: int(ints[k.I_COLS])]]

    def ask(self, outcome: Literal["B", "P"]) -> Ask:
        ints, entries, col_len, _, _, grid, draw = self._state
        out = np.zeros((4, 3), dtype=np.int64)
        k.ask(ints, entries, col_len, grid, draw, _CODE[outcome], out)
        colors: dict[str, str | None] = {}
        cells: dict[str, tuple[int, int] | None] = {}
        for i, road in enumerate(DERIVED, start=1):
            colour = int(out[i, 0])
            colors[road] = COLOURS[colour] if colour >= 0 else None
            cells[road] = (int(out[i, 1]), int(out[i, 2])) if colour >= 0 else None
        return Ask(outcome, (int(out[0, 0]), int(out[0, 1])), colors, cells)

    def counts(self) -> dict[str, int]:
        """The shoe's counts as boards print them beside the roads."""
        c = self._coups
        return {
            "coups": len(c),
            "banker": sum(i.outcome == "B" for i in c),
            "player": sum(i.outcome == "P" for i in c),
            "tie": sum(i.outcome == "T" for i in c),
            "banker_pairs": sum(bool(i.banker_pair) for i in c),
            "player_pairs": sum(bool(i.player_pair) for i in c),
            "naturals": sum(bool(i.natural) for i in c),
        }

    def streaks(self) -> dict[str, int]:
        """Longest Banker and Player runs, columns, and dragons (streaks of 7 or more)."""
        lengths = self.column_lengths
        labels = [cell.outcome for cell in self.big_road if cell.depth == 0]
        return {
            "longest_banker_run": max((n for n, lab in zip(lengths, labels, strict=True)
                                       if lab == "B"), default=0),
            "longest_player_run": max((n for n, lab in zip(lengths, labels, strict=True)
                                       if lab == "P"), default=0),
            "columns": len(lengths),
            "dragon_tails": sum(n > k.ROWS for n in lengths),
        }

    # -- the JSON contract ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The ``roads board --json`` contract (plus extra keys)."""
        def info(i: CoupInfo) -> dict[str, Any]:
            return {"player_pair": i.player_pair, "banker_pair": i.banker_pair,
                    "natural": i.natural, "total": i.winning_total}

        result: dict[str, Any] = {
            "leading_ties": self.leading_ties,
            "bead_plate": [{"col": b.col, "row": b.row, "outcome": b.outcome, "coup": b.coup,
                            **info(b.info)} for b in self.bead_plate],
            "big_road": [{"col": c.col, "row": c.row, "outcome": c.outcome, "ties": c.ties,
                          "coup": c.coup, "column": c.column, "depth": c.depth,
                          "tie_coups": list(c.tie_coups), **info(c.info)}
                         for c in self.big_road],
        }
        for road in DERIVED:
            result[road] = [{"col": m.col, "row": m.row, "color": m.color, "coup": m.coup,
                             "entry": m.entry} for m in self.marks(road)]
        asks = {}
        for name, outcome in (("banker", "B"), ("player", "P")):
            a = self.ask(outcome)  # type: ignore[arg-type]
            asks[name] = {
                **a.colors,
                "cells": {
                    "big_road": {"col": a.big_road_cell[0], "row": a.big_road_cell[1]},
                    **{road: ({"col": cell[0], "row": cell[1]} if cell else None)
                       for road, cell in a.cells.items()},
                },
            }
        result["ask"] = asks
        result["pending_ties"] = self.pending_ties
        result["counts"] = self.counts()
        result["streaks"] = self.streaks()
        return result
