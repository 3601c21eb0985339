"""A shoe's scoreboard: Bead Plate, Big Road, the three derived roads and the ask road.

:class:`Board` wraps the compiled state machine of :mod:`roads.board.machine` (one flat
array per board); until a process has used it for a thousand coups or so, the same machine
runs as plain Python (:mod:`roads.board.plain`), so drawing one shoe never waits for numba.
Appending a coup is O(1), so a live table keeps one Board per shoe; a
stored shoe is built by appending its coups in order, in one compiled call. Readers come in
two forms: the JSON contract and its live deltas as bytes written straight from the state
(``machine.document``, the fast path for screens and the API), and cells that remember
the coup they came from (for the renderer), made on first use and kept, since a cell never
changes once the next one exists.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from roads.board import plain
from roads.errors import InputError

if TYPE_CHECKING:
    from roads.board import machine as m
else:
    m = plain.machine()
    """The machine's constants, layout and ``new_state`` (plain Python in both machines);
    its kernels are called through :func:`_machine`."""

LeadingTies = Literal["first-cell", "own-column"]
LEADING_TIES: tuple[str, ...] = ("first-cell", "own-column")
DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")
ROAD_NAMES = ("bead_plate", "big_road", *DERIVED)
COLOURS = ("red", "blue")
_CODE = {"B": m.BANKER, "P": m.PLAYER, "T": m.TIE}
_LABEL = "BPT"
_FLAG = (None, False, True)  # a recorded flag + 1
_NOT_RECORDED = (m.NOT_RECORDED,) * (m.COUP_FIELDS - 1)


#: Coups of work a process may run through the plain machine (``roads.board.plain``, ~0.4 ms
#: a coup with the JSON contract) before every board waits for the compiled one, whose first
#: use costs ~1 s of loading: a command that draws a shoe or two never loads numba; a server
#: loads it before it serves (``compiled_machine``), a batch once its boards add up to about
#: that second.
PLAIN_BUDGET = 1_000
_plain_used = 0
_compiled: ModuleType | None = None
_loading = threading.Lock()


def compiled_machine() -> ModuleType:
    """The compiled machine, every kernel a board calls loaded (from the kernel cache, or
    compiled into it) before it is returned; every board uses it from then on. Until then,
    other threads' boards keep running on the plain machine."""
    global _compiled
    with _loading:
        if _compiled is None:
            from roads.board import machine

            _load_kernels(machine)
            _compiled = machine
    return _compiled


def _load_kernels(machine: ModuleType) -> None:
    """Call each kernel :class:`Board` uses once, with the argument types it passes."""
    state, _ = machine.from_text(np.frombuffer(b"BPPTB", dtype=np.uint8), False)
    machine.append(state, m.TIE, *_NOT_RECORDED)
    machine.append_rows(state, np.array([(m.BANKER, *_NOT_RECORDED)], dtype=np.int64))
    machine.ask(state, m.PLAYER)
    machine.document(state, 0, False)
    machine.document(state, 3, True)
    machine.grow(state, m.new_state(2 * int(state[m.CAPACITY]), False))


def _machine(coups: int) -> ModuleType:
    """The machine for a call that works over ``coups`` coups: the compiled one once it is
    loaded, else the plain one while the process stays within :data:`PLAIN_BUDGET` (then
    it loads the compiled one). Both give the same bytes and the same states."""
    global _plain_used
    if _compiled is None and _plain_used + coups <= PLAIN_BUDGET:
        _plain_used += coups
        return m
    return compiled_machine()


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


def check_leading_ties(leading_ties: str) -> None:
    """Refuse a leading-ties convention other than ``LEADING_TIES``."""
    if leading_ties not in LEADING_TIES:
        raise InputError(f"leading-ties convention must be one of {', '.join(LEADING_TIES)}")


def _flag(value: object) -> int:
    return m.NOT_RECORDED if value is None else int(bool(value))


def _total(value: object, field: str) -> int:
    if value is None:
        return m.NOT_RECORDED
    if isinstance(value, bool) or not isinstance(value, int | np.integer) \
            or not 0 <= value <= 9:
        raise InputError(f"{field} must be a whole number 0-9 or None, got {value!r}")
    return int(value)


def _winning_total(outcome: int, player_total: int, banker_total: int) -> int | None:
    """The total a Bead Plate cell prints (either total for a tie), from stored ints."""
    if outcome == m.PLAYER or banker_total < 0:
        return None if player_total < 0 else player_total
    return banker_total


def _outcome_code(outcome: object) -> int:
    code = _CODE.get(outcome) if isinstance(outcome, str) else None
    if code is None:
        raise OutcomeError(f"invalid outcome {outcome!r} (expected B, P or T)")
    return code


def _coup_row(outcome: object, player_pair: object, banker_pair: object, natural: object,
              player_total: object, banker_total: object) -> tuple[int, ...]:
    """A coup as the machine stores it (see ``machine.COUP_FIELDS``)."""
    return (_outcome_code(outcome), _flag(player_pair), _flag(banker_pair), _flag(natural),
            _total(player_total, "player_total"), _total(banker_total, "banker_total"))


_Cells = tuple[int, list[BigRoadCell], tuple[list[Mark], ...]]


class Board:
    """The five roads of one shoe, updated coup by coup."""

    __slots__ = ("_drawn", "_infos", "_state", "leading_ties")

    def __init__(self, leading_ties: LeadingTies = "first-cell", capacity: int = 128) -> None:
        """``capacity``: coups before the state has to grow (it grows by itself)."""
        check_leading_ties(leading_ties)
        self._adopt(leading_ties, m.new_state(max(1, capacity), leading_ties == "own-column"))

    def _adopt(self, leading_ties: LeadingTies, state: np.ndarray) -> None:
        self.leading_ties: LeadingTies = leading_ties
        self._state = state
        self._infos: list[CoupInfo] = []  # made on first use, then kept (coups never change)
        self._drawn: _Cells = (0, [], ([], [], []))  # cells made, and at how many coups

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_outcomes(cls, outcomes: str | Iterable[str],
                      leading_ties: LeadingTies = "first-cell") -> Board:
        check_leading_ties(leading_ties)
        text = outcomes if isinstance(outcomes, str) else "".join(outcomes)
        raw = text.encode("ascii") if text.isascii() else parse_outcomes(text).encode("ascii")
        state, appended = _machine(len(raw)).from_text(np.frombuffer(raw, dtype=np.uint8),
                                      leading_ties == "own-column")
        if appended < 0:
            raise OutcomeError(f"invalid outcome {text[-appended - 1]!r} at position "
                               f"{-appended} (expected B, P or T)")
        board = cls.__new__(cls)
        board._adopt(leading_ties, state)
        return board

    @classmethod
    def from_coups(cls, rows: Iterable[dict[str, Any]],
                   leading_ties: LeadingTies = "first-cell") -> Board:
        """From canonical ``coups`` rows of one shoe, in coup order."""
        coups = [_coup_row(str(r["outcome"]), r.get("player_pair"), r.get("banker_pair"),
                           r.get("natural"), r.get("player_total"), r.get("banker_total"))
                 for r in rows]
        board = cls(leading_ties, capacity=max(16, len(coups)))
        board._append_rows(coups)
        return board

    def append(self, coup: CoupInfo | str) -> None:
        """Add the next coup of the shoe (O(1); the live-table path)."""
        if isinstance(coup, str):
            code = _CODE.get(coup)
            if code is None:
                code = _outcome_code(parse_outcomes(coup) or coup)
            row: tuple[int, ...] = (code, *_NOT_RECORDED)
        else:
            row = _coup_row(coup.outcome, coup.player_pair, coup.banker_pair, coup.natural,
                            coup.player_total, coup.banker_total)
        self._make_room(1)
        (_compiled or _machine(1)).append(self._state, *row)

    def extend(self, coups: Iterable[CoupInfo]) -> None:
        self._append_rows([_coup_row(c.outcome, c.player_pair, c.banker_pair, c.natural,
                                     c.player_total, c.banker_total) for c in coups])

    def _append_rows(self, rows: list[tuple[int, ...]]) -> None:
        if rows:
            self._make_room(len(rows))
            _machine(len(rows)).append_rows(self._state, np.array(rows, dtype=np.int64))

    def _make_room(self, more: int) -> None:
        state = self._state
        cap = int(state[m.CAPACITY])
        needed = int(state[m.COUPS]) + more
        if needed > cap:
            bigger = m.new_state(max(2 * cap, needed), bool(state[m.OWN_COLUMN]))
            _machine(cap).grow(state, bigger)
            self._state = bigger

    # -- the JSON contract, straight from the state ----------------------------------------
    def to_json(self) -> bytes:
        """The ``to_dict`` document as compact JSON (``json.dumps(..., separators=(",",
        ":"))``), written without building the dicts: the fast path for screens and the API.
        """
        document: np.ndarray = _machine(len(self)).document(self._state, 0, False)
        return document.tobytes()

    def delta_json(self, since: int) -> bytes:
        """What changed since the board had ``since`` coups, as JSON (``docs/roads.md``):
        the cells added or replaced per road from their index on, the asks, counts and
        streaks. After one ``append`` ``since`` is ``len(board) - 1``; the cost is that of
        the change, whatever the length of the shoe."""
        if isinstance(since, bool) or not isinstance(since, int) or \
                not 0 <= since <= len(self):
            raise InputError(f"since must be a coup count from 0 to {len(self)}, got {since!r}")
        document: np.ndarray = (_compiled or _machine(len(self) - since)).document(
            self._state, since, True)
        return document.tobytes()

    def to_dict(self) -> dict[str, Any]:
        """The ``roads board --json`` contract (plus extra keys): ``to_json``'s document
        as Python objects, built from the state's rows (twice as fast as decoding it)."""
        state = self._state
        lay = m.layout(int(state[m.CAPACITY]))
        n = len(self)
        coups = self._section(lay[m.L_COUPS], m.COUP_FIELDS, 0, n)
        info = [{"player_pair": _FLAG[pp + 1], "banker_pair": _FLAG[bp + 1],
                 "natural": _FLAG[nat + 1], "total": _winning_total(o, pt, bt)}
                for o, pp, bp, nat, pt, bt in coups]
        entries = self._section(lay[m.L_ENTRIES], m.ENTRY_FIELDS, 0, int(state[m.ENTRIES]))
        big_road = []
        for j, (coup, col, row, c, r, ties, label) in enumerate(entries):
            end = entries[j + 1][0] if j + 1 < len(entries) else n
            tie_coups = [t for t in range(coup if j else 0, end)
                         if coups[t][0] == m.TIE] if ties else []
            big_road.append({"col": col, "row": row, "outcome": _LABEL[label], "ties": ties,
                             "coup": coup, "column": c, "depth": r, "tie_coups": tie_coups,
                             **info[coup]})
        result: dict[str, Any] = {
            "leading_ties": self.leading_ties,
            "bead_plate": [{"col": i // m.ROWS, "row": i % m.ROWS, "outcome": _LABEL[c[0]],
                            "coup": i, **info[i]} for i, c in enumerate(coups)],
            "big_road": big_road,
        }
        for k, road in enumerate(DERIVED, start=1):
            marks = self._section(lay[m.L_MARKS] + m.MARK_FIELDS * (k - 1) * lay[m.L_CAP],
                                  m.MARK_FIELDS, 0, int(state[m.MARKS + k - 1]))
            result[road] = [{"col": col, "row": row, "color": COLOURS[colour],
                             "coup": entries[src][0], "entry": src}
                            for src, col, row, colour in marks]
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

    # -- reading --------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._state[m.COUPS])

    def _section(self, offset: int, fields: int, lo: int, hi: int) -> list[list[int]]:
        """Rows ``lo:hi`` of a section of the state, as Python ints."""
        rows: list[list[int]] = self._state[offset + fields * lo : offset + fields * hi].reshape(
            -1, fields).tolist()
        return rows

    def _coup_infos(self) -> list[CoupInfo]:
        infos, n = self._infos, len(self)
        if len(infos) < n:  # a new list, swapped in whole: concurrent readers stay safe
            infos = infos + [
                CoupInfo(_LABEL[o], _FLAG[pp + 1], _FLAG[bp + 1], _FLAG[nat + 1],
                         None if pt < 0 else pt, None if bt < 0 else bt)
                for o, pp, bp, nat, pt, bt in self._section(m.HEADER, m.COUP_FIELDS,
                                                            len(infos), n)]
            self._infos = infos
        return infos

    @property
    def coups(self) -> Sequence[CoupInfo]:
        return tuple(self._coup_infos())

    @property
    def bead_plate(self) -> list[BeadCell]:
        return [BeadCell(i // m.ROWS, i % m.ROWS, c.outcome, i, c)
                for i, c in enumerate(self._coup_infos())]

    def _cells(self) -> _Cells:
        """The Big Road and mark cells, brought up to date from the last ones made: only
        the newest Big Road cell can have changed (it gains ties), the rest are only added
        to. New lists are swapped in whole, so readers on other threads stay safe (appending
        while another thread reads is not)."""
        made_at, old_big, old_marks = cells = self._drawn
        n = len(self)
        if made_at == n:
            return cells
        state, infos = self._state, self._coup_infos()
        lay = m.layout(int(state[m.CAPACITY]))
        big = old_big[:-1]
        made = int(state[m.ENTRIES])
        entries = self._section(lay[m.L_ENTRIES], m.ENTRY_FIELDS, len(big), made)
        for j, (coup, col, row, c, r, ties, label) in enumerate(entries):
            # An entry's ties: the tie coups up to the next entry (from the shoe's start for
            # the first entry, whose leading ties it carries).
            end = entries[j + 1][0] if j + 1 < len(entries) else n
            tie_coups = tuple(t for t in range(coup if big else 0, end)
                              if infos[t].outcome == "T")
            big.append(BigRoadCell(col, row, _LABEL[label], ties, coup, c, r, tie_coups,
                                   infos[coup]))
        marks = []
        for k, old in enumerate(old_marks, start=1):
            at = lay[m.L_MARKS] + m.MARK_FIELDS * (k - 1) * lay[m.L_CAP]
            marks.append(old + [
                Mark(col, row, COLOURS[colour], big[src].coup, src)
                for src, col, row, colour in self._section(at, m.MARK_FIELDS, len(old),
                                                           int(state[m.MARKS + k - 1]))])
        self._drawn = cells = (n, big, tuple(marks))
        return cells

    @property
    def big_road(self) -> list[BigRoadCell]:
        return list(self._cells()[1])

    def marks(self, road: str) -> list[Mark]:
        """The marks of a derived road (``big_eye_boy``, ``small_road``, ``cockroach_pig``)."""
        if road not in DERIVED:
            raise InputError(f"unknown derived road {road!r} (expected one of "
                             f"{', '.join(DERIVED)})")
        return list(self._cells()[2][DERIVED.index(road)])

    def mark_string(self, road: str) -> str:
        """``R``/``B`` per mark, in entry order (the form of the fixtures)."""
        return "".join("R" if mark.color == "red" else "B" for mark in self.marks(road))

    @property
    def pending_ties(self) -> int:
        """Leading ties not yet shown (first-cell convention, before the first B/P)."""
        return int(self._state[m.PENDING])

    @property
    def column_lengths(self) -> list[int]:
        state = self._state
        at = m.layout(int(state[m.CAPACITY]))[m.L_LENGTHS]
        return state[at: at + int(state[m.COLUMNS])].tolist()  # type: ignore[no-any-return]

    def ask(self, outcome: Literal["B", "P"]) -> Ask:
        if outcome not in ("B", "P"):
            raise InputError(f"ask outcome must be B or P, got {outcome!r}")
        col, row, *derived = (int(v) for v in (_compiled or _machine(1)).ask(
            self._state, _CODE[outcome]))
        colors: dict[str, str | None] = {}
        cells: dict[str, tuple[int, int] | None] = {}
        for i, road in enumerate(DERIVED):
            colour, mcol, mrow = derived[3 * i: 3 * i + 3]
            colors[road] = COLOURS[colour] if colour >= 0 else None
            cells[road] = (mcol, mrow) if colour >= 0 else None
        return Ask(outcome, (col, row), colors, cells)

    def counts(self) -> dict[str, int]:
        """The shoe's counts as boards print them beside the roads."""
        s = self._state[: m.HEADER].tolist()
        return {"coups": s[m.COUPS], "banker": s[m.BANKER_WINS], "player": s[m.PLAYER_WINS],
                "tie": s[m.TIE_COUPS], "banker_pairs": s[m.BANKER_PAIRS],
                "player_pairs": s[m.PLAYER_PAIRS], "naturals": s[m.NATURALS]}

    def streaks(self) -> dict[str, int]:
        """Longest Banker and Player runs, columns, and dragons (streaks of 7 or more)."""
        s = self._state[: m.HEADER].tolist()
        return {"longest_banker_run": s[m.LONGEST_BANKER],
                "longest_player_run": s[m.LONGEST_PLAYER], "columns": s[m.COLUMNS],
                "dragon_tails": s[m.DRAGONS]}


def apply_delta(contract: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """Bring a decoded ``to_json``/``to_dict`` document up to date with a decoded
    ``delta_json`` document, in place (what a screen does with each update; see
    ``docs/roads.md``). The document must be of the board at the delta's ``since`` coups."""
    have = contract["counts"]["coups"]
    if have != delta["since"]:
        raise InputError(f"delta since coup {delta['since']} cannot update a board of "
                         f"{have} coups")
    for road in ROAD_NAMES:
        change = delta[road]
        contract[road][change["from"]:] = change["cells"]
    for key in ("ask", "pending_ties", "counts", "streaks"):
        contract[key] = delta[key]
    return contract
