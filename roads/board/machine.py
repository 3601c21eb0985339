"""The roads as a compiled state machine: one coup in, every road updated in O(1).

One implementation serves both uses: a live table appends coup by coup (``append``), and a
stored shoe or a whole dataset folds the same ``append`` over its coups (``build``,
``build_batch``). The rules are those of ROADS.md; the Big Road and the three derived roads
share one drawing routine (``_place``).

State of one board (capacity ``cap`` coups), as plain arrays so numba can own them:

- ``ints`` (int64[_N_INTS]): scalar counters, see the ``I_*`` indices.
- ``entries`` (int32[cap, 7]): Big Road entries in order: coup, col, row, logical column,
  logical row, ties, label (0 Banker, 1 Player, 2 own-column leading-tie cell).
- ``col_len`` (int32[cap]): length of every logical column.
- ``tie_of`` (int32[cap]): for a tie coup, the Big Road entry it is counted on (-1: none
  yet or not a tie).
- ``marks`` (int32[3, cap, 4]): derived-road marks per road (k = 1, 2, 3): source entry,
  col, row, colour (0 red, 1 blue).
- ``grid`` (uint8[4, 6, cap + 8]): occupied cells of the Big Road and the derived roads.
- ``draw`` (int64[4, 5]): per drawn road: current col, current row, column start col,
  turned (in a dragon tail), last label (-1 before the first cell).
"""

from __future__ import annotations

import numba as nb
import numpy as np

BANKER, PLAYER, TIE = 0, 1, 2
RED, BLUE = 0, 1
ROWS = 6
# ints indices
I_COUPS, I_ENTRIES, I_COLS, I_PENDING, I_OWN_COLUMN, I_CAP = 0, 1, 2, 3, 4, 5
I_MARKS = 6  # 6, 7, 8: marks on road k = 1, 2, 3
_N_INTS = 9
# draw columns
D_COL, D_ROW, D_START, D_TURNED, D_LAST = 0, 1, 2, 3, 4
NO_CELL = -1


def new_state(capacity: int, own_column: bool) -> tuple[np.ndarray, ...]:
    """Empty board state for up to ``capacity`` coups."""
    ints = np.zeros(_N_INTS, dtype=np.int64)
    ints[I_OWN_COLUMN] = int(own_column)
    ints[I_CAP] = capacity
    entries = np.zeros((capacity, 7), dtype=np.int32)
    col_len = np.zeros(capacity, dtype=np.int32)
    tie_of = np.full(capacity, -1, dtype=np.int32)
    marks = np.zeros((3, capacity, 4), dtype=np.int32)
    grid = np.zeros((4, ROWS, capacity + 8), dtype=np.uint8)
    draw = np.zeros((4, 5), dtype=np.int64)
    draw[:, D_LAST] = -1
    return ints, entries, col_len, tie_of, marks, grid, draw


@nb.njit(cache=True, nogil=True)
def _next_cell(grid: np.ndarray, draw: np.ndarray, g: int, label: int) -> tuple[int, int]:
    """Where road ``g`` would draw its next cell with ``label`` (no change to the state).

    Same label: one row down, unless that is past row 5 or taken, in which case the streak
    turns right and stays on its row from then on (dragon tail). New label: row 0 of the
    column right of where the previous column started, skipping right past columns whose
    top cell an older tail has taken.
    """
    occ = grid[g]
    last = draw[g, D_LAST]
    if last == label:
        col = draw[g, D_COL]
        row = draw[g, D_ROW]
        if draw[g, D_TURNED] == 0 and row + 1 < ROWS and occ[row + 1, col] == 0:
            return col, row + 1
        col += 1
        while occ[row, col] != 0:
            col += 1
        return col, row
    col = 0 if last == -1 else draw[g, D_START] + 1
    while occ[0, col] != 0:
        col += 1
    return col, 0


@nb.njit(cache=True, nogil=True)
def _place(grid: np.ndarray, draw: np.ndarray, g: int, label: int) -> tuple[int, int]:
    """Draw the next cell of road ``g`` and record it."""
    col, row = _next_cell(grid, draw, g, label)
    if draw[g, D_LAST] == label:
        if col != draw[g, D_COL]:
            draw[g, D_TURNED] = 1
    else:
        draw[g, D_START] = col
        draw[g, D_TURNED] = 0
    grid[g, row, col] = 1
    draw[g, D_COL] = col
    draw[g, D_ROW] = row
    draw[g, D_LAST] = label
    return col, row


@nb.njit(cache=True, nogil=True)
def derived_colour(col_len: np.ndarray, c: int, r: int, k: int) -> int:
    """Colour of the mark road ``k`` adds for a Big Road entry at logical (c, r); -1: none.

    New column (r = 0): red iff len(c-1) == len(c-1-k). Going down: with p = len(c-k),
    blue iff p == r (the straight drop p < r is red).
    """
    if r == 0:
        if c < k + 1:
            return -1
        return RED if col_len[c - 1] == col_len[c - 1 - k] else BLUE
    if c < k:
        return -1
    return BLUE if col_len[c - k] == r else RED


@nb.njit(cache=True, nogil=True)
def _logical_position(ints: np.ndarray, entries: np.ndarray, col_len: np.ndarray,
                      outcome: int) -> tuple[int, int]:
    """Logical (column, row) a Banker/Player entry would take: down the streak if the
    winner repeats, else the top of a new column."""
    n = ints[I_ENTRIES]
    last_label = entries[n - 1, 6] if n > 0 else -1
    if last_label == outcome:
        c = ints[I_COLS] - 1
        return c, col_len[c]
    return ints[I_COLS], 0


@nb.njit(cache=True, nogil=True)
def append(
    ints: np.ndarray, entries: np.ndarray, col_len: np.ndarray, tie_of: np.ndarray,
    marks: np.ndarray, grid: np.ndarray, draw: np.ndarray, outcome: int,
) -> None:
    """Add one coup (0 Banker, 1 Player, 2 Tie) to every road."""
    coup = ints[I_COUPS]
    ints[I_COUPS] = coup + 1
    n = ints[I_ENTRIES]
    if outcome == TIE:
        if n > 0:
            entries[n - 1, 5] += 1
            tie_of[coup] = n - 1
            return
        if ints[I_OWN_COLUMN] == 0:
            ints[I_PENDING] += 1  # counted on the first cell once it exists
            return
        # own-column: a tie-only cell at (0, 0), a logical column of length 1
        col, row = _place(grid, draw, 0, TIE)
        entries[0, 0], entries[0, 1], entries[0, 2] = coup, col, row
        entries[0, 3], entries[0, 4], entries[0, 5], entries[0, 6] = 0, 0, 1, TIE
        col_len[0] = 1
        ints[I_COLS] = 1
        ints[I_ENTRIES] = 1
        tie_of[coup] = 0
        return
    c, r = _logical_position(ints, entries, col_len, outcome)
    if r == 0:
        ints[I_COLS] = c + 1
    col_len[c] = r + 1
    col, row = _place(grid, draw, 0, outcome)
    e = entries[n]
    e[0], e[1], e[2], e[3], e[4], e[5], e[6] = coup, col, row, c, r, 0, outcome
    if n == 0 and ints[I_PENDING] > 0:
        e[5] = ints[I_PENDING]
        for t in range(coup):
            tie_of[t] = 0
    ints[I_ENTRIES] = n + 1
    # own-column: the leading-tie column counts for the derived roads like any other.
    for k in range(1, 4):
        colour = derived_colour(col_len, c, r, k)
        if colour >= 0:
            m = ints[I_MARKS + k - 1]
            mcol, mrow = _place(grid, draw, k, colour)
            marks[k - 1, m, 0] = n
            marks[k - 1, m, 1] = mcol
            marks[k - 1, m, 2] = mrow
            marks[k - 1, m, 3] = colour
            ints[I_MARKS + k - 1] = m + 1


@nb.njit(cache=True, nogil=True)
def ask(
    ints: np.ndarray, entries: np.ndarray, col_len: np.ndarray, grid: np.ndarray,
    draw: np.ndarray, outcome: int, out: np.ndarray,
) -> None:
    """What the next coup would add if it were ``outcome`` (0 Banker, 1 Player).

    ``out`` (int64[4, 3]): row 0 the Big Road cell (col, row, -); rows 1-3 the derived
    roads (colour or -1, col, row).
    """
    c, r = _logical_position(ints, entries, col_len, outcome)
    col, row = _next_cell(grid, draw, 0, outcome)
    out[0, 0], out[0, 1], out[0, 2] = col, row, 0
    for k in range(1, 4):
        colour = derived_colour(col_len, c, r, k)
        out[k, 0] = colour
        if colour >= 0:
            mcol, mrow = _next_cell(grid, draw, k, colour)
            out[k, 1], out[k, 2] = mcol, mrow
        else:
            out[k, 1], out[k, 2] = NO_CELL, NO_CELL


@nb.njit(cache=True, nogil=True)
def append_many(
    ints: np.ndarray, entries: np.ndarray, col_len: np.ndarray, tie_of: np.ndarray,
    marks: np.ndarray, grid: np.ndarray, draw: np.ndarray, outcomes: np.ndarray,
) -> None:
    for i in range(outcomes.shape[0]):
        append(ints, entries, col_len, tie_of, marks, grid, draw, outcomes[i])


@nb.njit(cache=True, parallel=True)
def build_batch(
    outcomes: np.ndarray, offsets: np.ndarray, own_column: bool,
    entry_out: np.ndarray, mark_out: np.ndarray, ask_out: np.ndarray, counts: np.ndarray,
) -> None:
    """Full boards for many shoes at once (``outcomes[offsets[s]:offsets[s+1]]`` each).

    Writes, per shoe ``s``, its Big Road entries to ``entry_out[offsets[s]:...]`` (at most
    one per coup), its marks to ``mark_out[k, offsets[s]:...]``, both asks to
    ``ask_out[s]`` and the counts (entries, marks k=1..3, columns) to ``counts[s]``.
    """
    for s in nb.prange(offsets.shape[0] - 1):
        lo = offsets[s]
        n = offsets[s + 1] - lo
        cap = n + 1
        ints = np.zeros(_N_INTS, dtype=np.int64)
        ints[I_OWN_COLUMN] = 1 if own_column else 0
        ints[I_CAP] = cap
        entries = entry_out[lo : lo + n]
        col_len = np.zeros(cap, dtype=np.int32)
        tie_of = np.full(cap, -1, dtype=np.int32)
        marks = np.zeros((3, cap, 4), dtype=np.int32)
        grid = np.zeros((4, ROWS, cap + 8), dtype=np.uint8)
        draw = np.zeros((4, 5), dtype=np.int64)
        for g in range(4):
            draw[g, D_LAST] = -1
        for i in range(n):
            append(ints, entries, col_len, tie_of, marks, grid, draw, outcomes[lo + i])
        for k in range(3):
            m = ints[I_MARKS + k]
            mark_out[k, lo : lo + m] = marks[k, :m]
        ask(ints, entries, col_len, grid, draw, 0, ask_out[s, 0])
        ask(ints, entries, col_len, grid, draw, 1, ask_out[s, 1])
        counts[s, 0] = ints[I_ENTRIES]
        counts[s, 1] = ints[I_MARKS]
        counts[s, 2] = ints[I_MARKS + 1]
        counts[s, 3] = ints[I_MARKS + 2]
        counts[s, 4] = ints[I_COLS]
