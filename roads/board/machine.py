"""The roads as a compiled state machine: one coup in, every road updated in O(1).

One implementation serves every use: a live table appends coup by coup (``append``), a
stored shoe folds the same ``append`` over its coups (``append_text``, ``append_rows``), and
the benchmark's batch of full boards runs it per shoe in parallel (``build_batch``). The
rules are those of ROADS.md; the Big Road and the three derived roads share one drawing
routine (``_place``).

A board's whole state is **one flat int32 array** (``new_state``), so a call from Python
passes a single argument (numba's dispatch cost grows with every array argument, and on a
per-shoe path it is most of the cost) and the JSON writer of :mod:`roads.board.encode` reads
the same array. Layout, for a capacity of ``cap`` coups (``layout`` gives the offsets):

- header (``HEADER`` ints): counters at the indices named below, then the drawing state of
  the four drawn roads (g = 0 Big Road, k = 1..3): current col, current row, column start
  col, turned (in a dragon tail), last label (-1 before the first cell).
- coups (cap x ``COUP_FIELDS``): outcome (0 Banker, 1 Player, 2 Tie), player pair, banker
  pair, natural (-1 not recorded, 0, 1), player total, banker total (-1 not recorded).
- entries (cap x ``ENTRY_FIELDS``): Big Road entries in order: coup, col, row, logical
  column, logical row, ties, label (0 Banker, 1 Player, 2 own-column leading-tie cell).
- column lengths (cap): length of every logical column.
- marks (3 x cap x ``MARK_FIELDS``): derived-road marks of road k = 1..3: source entry, col,
  row, colour (0 red, 1 blue).
- grid (4 x (cap + 8)): taken cells of the Big Road and the derived roads, one int per
  drawn column with bit ``row`` set when that cell is taken.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

BANKER, PLAYER, TIE = 0, 1, 2
RED, BLUE = 0, 1
ROWS = 6
NOT_RECORDED = -1
NO_CELL = -1

# header: counters
COUPS, ENTRIES, COLUMNS, PENDING, OWN_COLUMN, CAPACITY = 0, 1, 2, 3, 4, 5
MARKS = 6  # 6, 7, 8: marks on road k = 1, 2, 3
BANKER_WINS, PLAYER_WINS, TIE_COUPS = 9, 10, 11
BANKER_PAIRS, PLAYER_PAIRS, NATURALS = 12, 13, 14
LONGEST_BANKER, LONGEST_PLAYER, DRAGONS = 15, 16, 17
# header: drawing state of road g at DRAW + DRAW_FIELDS * g
DRAW, DRAW_FIELDS = 20, 5
D_COL, D_ROW, D_START, D_TURNED, D_LAST = 0, 1, 2, 3, 4
HEADER = 40

COUP_FIELDS = 6
C_OUTCOME, C_PLAYER_PAIR, C_BANKER_PAIR, C_NATURAL, C_PLAYER_TOTAL, C_BANKER_TOTAL = range(6)
ENTRY_FIELDS = 7
E_COUP, E_COL, E_ROW, E_COLUMN, E_DEPTH, E_TIES, E_LABEL = range(7)
MARK_FIELDS = 4
M_ENTRY, M_COL, M_ROW, M_COLOUR = range(4)
GRID_SLACK = 8  # a drawn column never passes the number of cells; the scans read one past


def layout(cap: int) -> tuple[int, int, int, int, int, int, int]:
    """Where the sections of a state of capacity ``cap`` start: (capacity, coups, entries,
    column lengths, marks, grid, end = the state's size). Helpers take this tuple, computed
    once per call: reading the capacity back from the state after every write would cost
    more than the work."""
    coups = HEADER
    entries = coups + COUP_FIELDS * cap
    lengths = entries + ENTRY_FIELDS * cap
    marks = lengths + cap
    grid = marks + 3 * MARK_FIELDS * cap
    return cap, coups, entries, lengths, marks, grid, grid + 4 * (cap + GRID_SLACK)


L_CAP, L_COUPS, L_ENTRIES, L_LENGTHS, L_MARKS, L_GRID, L_END = range(7)
Int = int | np.integer[Any]
"""An integer argument of a compiled function: numpy's int64 or a Python int."""
Layout = tuple[int, int, int, int, int, int, int]
_layout: Any = nb.njit(cache=True)(layout)  # its callers pass numpy ints too
# Compiled helpers are compiled once per argument type, and a Python int passed as an
# argument is its own literal type: every value handed from one compiled function to another
# is an int64 (these constants, or an int64 variable) so that each helper compiles once.
_BIG_ROAD, _TIE, _NONE = np.int64(0), np.int64(TIE), np.int64(NOT_RECORDED)


@nb.njit(cache=True, nogil=True)
def layout_of(state: np.ndarray) -> Layout:
    """The layout of a state (from its capacity)."""
    lay: Layout = _layout(np.int64(state[CAPACITY]))
    return lay


def new_state(capacity: int, own_column: bool) -> np.ndarray:
    """Empty board state for up to ``capacity`` coups."""
    state = np.zeros(layout(capacity)[L_END], dtype=np.int32)
    state[OWN_COLUMN] = own_column
    state[CAPACITY] = capacity
    state[DRAW + D_LAST : DRAW + 4 * DRAW_FIELDS : DRAW_FIELDS] = -1
    return state


@nb.njit(cache=True, nogil=True)
def _empty_state(capacity: Int, own_column: bool) -> np.ndarray:
    """``new_state`` inside compiled code."""
    state = np.zeros(_layout(capacity)[L_END], dtype=np.int32)
    state[OWN_COLUMN] = 1 if own_column else 0
    state[CAPACITY] = capacity
    for g in range(4):
        state[DRAW + DRAW_FIELDS * g + D_LAST] = -1
    return state


@nb.njit(cache=True, nogil=True)
def grow(old: np.ndarray, new: np.ndarray) -> None:
    """Copy a board into the empty state ``new`` of a larger capacity."""
    o, n = layout_of(old), layout_of(new)
    cap, big = o[L_CAP], n[L_CAP]
    new[:HEADER] = old[:HEADER]
    new[CAPACITY] = big
    # coups, entries, column lengths: the same rows, more room after them
    new[n[L_COUPS] : n[L_COUPS] + COUP_FIELDS * cap] = old[o[L_COUPS] : o[L_ENTRIES]]
    new[n[L_ENTRIES] : n[L_ENTRIES] + ENTRY_FIELDS * cap] = old[o[L_ENTRIES] : o[L_LENGTHS]]
    new[n[L_LENGTHS] : n[L_LENGTHS] + cap] = old[o[L_LENGTHS] : o[L_MARKS]]
    for k in range(3):
        size = MARK_FIELDS * cap
        dst = n[L_MARKS] + k * MARK_FIELDS * big
        new[dst : dst + size] = old[o[L_MARKS] + k * size : o[L_MARKS] + (k + 1) * size]
    width, wide = cap + GRID_SLACK, big + GRID_SLACK
    for g in range(4):
        new[n[L_GRID] + g * wide : n[L_GRID] + g * wide + width] = \
            old[o[L_GRID] + g * width : o[L_GRID] + (g + 1) * width]


@nb.njit(cache=True, nogil=True)
def _next_cell(state: np.ndarray, lay: Layout, g: Int, label: Int) -> tuple[Int, Int]:
    """Where road ``g`` would draw its next cell with ``label`` (no change to the state).

    Same label: one row down, unless that is past row 5 or taken, in which case the streak
    turns right and stays on its row from then on (dragon tail). New label: row 0 of the
    column right of where the previous column started, skipping right past columns whose
    top cell an older tail has taken.
    """
    grid = lay[L_GRID] + g * (lay[L_CAP] + GRID_SLACK)  # column col of road g: grid + col
    d = DRAW + DRAW_FIELDS * g
    last = state[d + D_LAST]
    if last == label:
        col = np.int64(state[d + D_COL])
        row = np.int64(state[d + D_ROW])
        if state[d + D_TURNED] == 0 and row + 1 < ROWS and \
                state[grid + col] >> (row + 1) & 1 == 0:
            return col, row + 1
        col += 1
        while state[grid + col] >> row & 1:
            col += 1
        return col, row
    col = np.int64(0 if last == -1 else state[d + D_START] + 1)
    while state[grid + col] & 1:
        col += 1
    return col, np.int64(0)


@nb.njit(cache=True, nogil=True)
def _place(state: np.ndarray, lay: Layout, g: Int, label: Int) -> tuple[Int, Int]:
    """Draw the next cell of road ``g`` and record it."""
    col, row = _next_cell(state, lay, g, label)
    d = DRAW + DRAW_FIELDS * g
    if state[d + D_LAST] == label:
        if col != state[d + D_COL]:
            state[d + D_TURNED] = 1
    else:
        state[d + D_START] = col
        state[d + D_TURNED] = 0
    state[lay[L_GRID] + g * (lay[L_CAP] + GRID_SLACK) + col] |= 1 << row
    state[d + D_COL] = col
    state[d + D_ROW] = row
    state[d + D_LAST] = label
    return col, row


@nb.njit(cache=True, nogil=True)
def derived_colour(state: np.ndarray, lay: Layout, c: Int, r: Int, k: Int) -> Int:
    """Colour of the mark road ``k`` adds for a Big Road entry at logical (c, r); -1: none.

    New column (r = 0): red iff len(c-1) == len(c-1-k). Going down: with p = len(c-k),
    blue iff p == r (the straight drop p < r is red).
    """
    lengths = lay[L_LENGTHS]
    if r == 0:
        if c < k + 1:
            return -1
        return RED if state[lengths + c - 1] == state[lengths + c - 1 - k] else BLUE
    if c < k:
        return -1
    return BLUE if state[lengths + c - k] == r else RED


@nb.njit(cache=True, nogil=True)
def _logical_position(state: np.ndarray, lay: Layout, outcome: Int) -> tuple[Int, Int]:
    """Logical (column, row) a Banker/Player entry would take: down the streak if the
    winner repeats, else the top of a new column."""
    n = state[ENTRIES]
    last = state[lay[L_ENTRIES] + ENTRY_FIELDS * (n - 1) + E_LABEL] if n > 0 else -1
    columns = np.int64(state[COLUMNS])
    if last == outcome:
        return columns - 1, np.int64(state[lay[L_LENGTHS] + columns - 1])
    return columns, np.int64(0)


@nb.njit(cache=True, nogil=True)
def _append(state: np.ndarray, lay: Layout, outcome: Int, player_pair: Int,
            banker_pair: Int, natural: Int, player_total: Int, banker_total: Int) -> None:
    """``append`` with the layout already known."""
    coup = state[COUPS]
    state[COUPS] = coup + 1
    at = lay[L_COUPS] + COUP_FIELDS * coup
    state[at + C_OUTCOME] = outcome
    state[at + C_PLAYER_PAIR] = player_pair
    state[at + C_BANKER_PAIR] = banker_pair
    state[at + C_NATURAL] = natural
    state[at + C_PLAYER_TOTAL] = player_total
    state[at + C_BANKER_TOTAL] = banker_total
    state[BANKER_WINS + outcome] += 1
    if player_pair == 1:
        state[PLAYER_PAIRS] += 1
    if banker_pair == 1:
        state[BANKER_PAIRS] += 1
    if natural == 1:
        state[NATURALS] += 1
    n = state[ENTRIES]
    entries = lay[L_ENTRIES]
    if outcome == TIE:
        if n > 0:
            state[entries + ENTRY_FIELDS * (n - 1) + E_TIES] += 1
            return
        if state[OWN_COLUMN] == 0:
            state[PENDING] += 1  # counted on the first cell once it exists
            return
        # own-column: a tie-only cell at (0, 0), a logical column of length 1
        col, row = _place(state, lay, _BIG_ROAD, _TIE)
        state[entries + E_COUP], state[entries + E_COL], state[entries + E_ROW] = coup, col, row
        state[entries + E_COLUMN], state[entries + E_DEPTH] = 0, 0
        state[entries + E_TIES], state[entries + E_LABEL] = 1, TIE
        state[lay[L_LENGTHS]] = 1
        state[COLUMNS] = 1
        state[ENTRIES] = 1
        return
    c, r = _logical_position(state, lay, outcome)
    if r == 0:
        state[COLUMNS] = c + 1
    state[lay[L_LENGTHS] + c] = r + 1
    longest = LONGEST_BANKER + outcome
    state[longest] = max(state[longest], r + 1)
    if r == ROWS:  # the streak just reached 7: a dragon
        state[DRAGONS] += 1
    col, row = _place(state, lay, _BIG_ROAD, outcome)
    e = entries + ENTRY_FIELDS * n
    state[e + E_COUP], state[e + E_COL], state[e + E_ROW] = coup, col, row
    state[e + E_COLUMN], state[e + E_DEPTH] = c, r
    state[e + E_TIES], state[e + E_LABEL] = state[PENDING], outcome  # leading ties, if any
    state[PENDING] = 0
    state[ENTRIES] = n + 1
    # own-column: the leading-tie column counts for the derived roads like any other.
    for k in range(1, 4):
        colour = derived_colour(state, lay, c, r, np.int64(k))
        if colour >= 0:
            i = state[MARKS + k - 1]
            mcol, mrow = _place(state, lay, np.int64(k), np.int64(colour))
            at = lay[L_MARKS] + MARK_FIELDS * ((k - 1) * lay[L_CAP] + i)
            state[at + M_ENTRY], state[at + M_COL] = n, mcol
            state[at + M_ROW], state[at + M_COLOUR] = mrow, colour
            state[MARKS + k - 1] = i + 1


@nb.njit(cache=True, nogil=True)
def append(state: np.ndarray, outcome: Int, player_pair: Int, banker_pair: Int,
           natural: Int, player_total: Int, banker_total: Int) -> None:
    """Add one coup (0 Banker, 1 Player, 2 Tie; -1 for what is not recorded) to every road.

    The caller guarantees room for one more coup (``COUPS < CAPACITY``).
    """
    _append(state, layout_of(state), outcome, player_pair, banker_pair, natural,
            player_total, banker_total)


@nb.njit(cache=True, nogil=True)
def ask(state: np.ndarray, outcome: Int) -> tuple[Int, Int, Int, Int, Int, Int, Int, Int,
                                                  Int, Int, Int]:
    """What the next coup would add if it were ``outcome`` (0 Banker, 1 Player).

    The Big Road cell (col, row), then per derived road k = 1..3: colour (-1: no mark),
    col, row (``NO_CELL`` when no mark).
    """
    lay = layout_of(state)
    c, r = _logical_position(state, lay, outcome)
    col, row = _next_cell(state, lay, _BIG_ROAD, outcome)
    out = np.full(9, NO_CELL, dtype=np.int64)
    for k in range(1, 4):
        colour = derived_colour(state, lay, c, r, np.int64(k))
        out[3 * k - 3] = colour
        if colour >= 0:
            out[3 * k - 2], out[3 * k - 1] = _next_cell(state, lay, np.int64(k),
                                                        np.int64(colour))
    return (col, row, out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
            out[8])


_WHITESPACE = np.zeros(256, dtype=np.bool_)
_WHITESPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True  # str.isspace() on ASCII
_CODE = np.full(256, -1, dtype=np.int8)
for _letters, _code in (("Bb", BANKER), ("Pp", PLAYER), ("Tt", TIE)):
    for _ch in _letters:
        _CODE[ord(_ch)] = _code


@nb.njit(cache=True, nogil=True)
def from_text(text: np.ndarray, own_column: bool) -> tuple[np.ndarray, Int]:
    """A new board of every outcome of ASCII ``text`` (B/P/T in either case, whitespace
    ignored), and the number of coups; or an empty state and minus the 1-based position of
    the first character that is neither."""
    for i in range(text.shape[0]):
        ch = text[i]
        if _CODE[ch] < 0 and not _WHITESPACE[ch]:
            return _empty_state(np.int64(1), own_column), -(i + 1)
    state = _empty_state(np.int64(max(16, text.shape[0])), own_column)
    lay = layout_of(state)
    for i in range(text.shape[0]):
        code = np.int64(_CODE[text[i]])
        if code >= 0:
            _append(state, lay, code, _NONE, _NONE, _NONE, _NONE, _NONE)
    return state, np.int64(state[COUPS])


@nb.njit(cache=True, nogil=True)
def append_rows(state: np.ndarray, rows: np.ndarray) -> None:
    """Append coups given as int64 rows of ``COUP_FIELDS`` (the coups section's layout)."""
    lay = layout_of(state)
    for i in range(rows.shape[0]):
        _append(state, lay, rows[i, 0], rows[i, 1], rows[i, 2], rows[i, 3], rows[i, 4],
                rows[i, 5])


@nb.njit(cache=True, parallel=True)
def build_batch(outcomes: np.ndarray, offsets: np.ndarray, own_column: bool,
                entry_out: np.ndarray, mark_out: np.ndarray, ask_out: np.ndarray,
                counts: np.ndarray) -> None:
    """Full boards for many shoes at once (int64 ``outcomes[offsets[s]:offsets[s+1]]``).

    Writes, per shoe ``s``, its Big Road entries to ``entry_out[offsets[s]:...]`` (at most
    one per coup), its marks to ``mark_out[k, offsets[s]:...]``, both asks to
    ``ask_out[s]`` (the tuples of ``ask``) and the counts (entries, marks k=1..3, columns)
    to ``counts[s]``.
    """
    for s in nb.prange(offsets.shape[0] - 1):
        lo = offsets[s]
        n = offsets[s + 1] - lo
        state = _empty_state(np.int64(max(1, n)), own_column)
        lay = layout_of(state)
        for i in range(n):
            _append(state, lay, outcomes[lo + i], _NONE, _NONE, _NONE, _NONE, _NONE)
        entries = state[ENTRIES]
        first = lay[L_ENTRIES]
        for e in range(entries):
            for f in range(ENTRY_FIELDS):
                entry_out[lo + e, f] = state[first + ENTRY_FIELDS * e + f]
        for k in range(1, 4):
            first = lay[L_MARKS] + MARK_FIELDS * (k - 1) * lay[L_CAP]
            for i in range(state[MARKS + k - 1]):
                for f in range(MARK_FIELDS):
                    mark_out[k - 1, lo + i, f] = state[first + MARK_FIELDS * i + f]
        for a in range(2):
            answer = ask(state, np.int64(a))
            for f in range(11):
                ask_out[s, a, f] = answer[f]
        counts[s, 0] = entries
        counts[s, 1] = state[MARKS]
        counts[s, 2] = state[MARKS + 1]
        counts[s, 3] = state[MARKS + 2]
        counts[s, 4] = state[COLUMNS]
