"""The roads as a compiled state machine (one coup in, every road updated in O(1)), and the
JSON contract written straight from its state.

One implementation serves every use: a live table appends coup by coup (``append``), a
stored shoe folds the same ``append`` over its coups (``from_text``, ``append_rows``), and
the benchmark's batch of full boards runs it per shoe in parallel (``build_batch``). The
rules are those of ROADS.md; the Big Road and the three derived roads share one drawing
routine (``_place``).

A board's whole state is **one flat int32 array** (``new_state``), so a call from Python
passes a single argument (numba's dispatch cost grows with every array argument, and on a
per-shoe path it is most of the cost) and the JSON writer (``document``, at the end of
this module) reads the same array. Layout, for a capacity of ``cap`` coups (``layout``
gives the offsets):

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


@nb.njit(cache=True, nogil=True, inline="always")
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


@nb.njit(cache=True, nogil=True, inline="always")
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


@nb.njit(cache=True, nogil=True, inline="always")
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


@nb.njit(cache=True, nogil=True, inline="always")
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


# ------------------------------------------------------------------------------------------
# The JSON contract and its live deltas, written straight from the state.
#
# ``Board.to_dict`` builds some 300 Python dicts for an 80-coup shoe, and a JSON encoder then
# walks them again: ~1 ms per shoe. ``document`` reads the flat state and emits the bytes of
# ``json.dumps(board.to_dict(), separators=(",", ":"))`` directly, in ~10 us; a delta holds
# only what the coups since a given count changed (format in docs/roads.md). Every constant
# piece of text lives once in ``_J_TEXT``; the writers copy slices of it.
#
# It lives in this module, not a module of its own, because numba's cache is per source
# file: compiled code that calls the machine's functions or reads its layout constants from
# another file would keep the old machine after this file changed.

_PIECES: list[bytes] = []


def _piece(text: str) -> tuple[int, int]:
    """Register a constant piece of JSON; its (start, end) in ``_TEXT``.

    numpy integers, not Python ints: numba would type each Python-int tuple as its own
    literal type and compile ``_put`` once per piece; as int64 values it compiles once and
    LLVM still sees constants where it inlines the copy."""
    start = sum(len(p) for p in _PIECES)
    _PIECES.append(text.encode("ascii"))
    return np.int64(start), np.int64(start + len(_PIECES[-1]))  # type: ignore[return-value]


def _pieces(*texts: str) -> tuple[tuple[int, int], ...]:
    """Pieces chosen at run time (by outcome, colour, flag)."""
    return tuple(_piece(t) for t in texts)


_J_NULL = _piece("null")
_J_COMMA = _piece(",")
_J_CLOSE = _piece("}")
_J_CELL = _piece('{"col":')
_J_ROW = _piece(',"row":')
_J_COUP = _piece(',"coup":')
_J_BEAD_OUTCOME = _pieces(',"outcome":"B","coup":', ',"outcome":"P","coup":',
                        ',"outcome":"T","coup":')
_J_BIG_OUTCOME = _pieces(',"outcome":"B","ties":', ',"outcome":"P","ties":',
                       ',"outcome":"T","ties":')
_J_COLUMN = _piece(',"column":')
_J_DEPTH = _piece(',"depth":')
_J_TIE_COUPS = _piece(',"tie_coups":[')
_J_TIE_COUPS_END = _piece("]")
_J_NO_INFO = _piece(',"player_pair":null,"banker_pair":null,"natural":null,"total":null}')
_J_PLAYER_PAIR = _piece(',"player_pair":')
_J_BANKER_PAIR = _piece(',"banker_pair":')
_J_NATURAL = _piece(',"natural":')
_J_TOTAL = _piece(',"total":')
_J_FLAG = _pieces("null", "false", "true")  # by recorded value + 1
_J_MARK_COLOUR = _pieces(',"color":"red","coup":', ',"color":"blue","coup":')
_J_ENTRY = _piece(',"entry":')
_J_COLOUR = _pieces("null", '"red"', '"blue"')  # by colour + 1
_J_LEADING = _pieces('{"leading_ties":"first-cell","bead_plate":[',
                   '{"leading_ties":"own-column","bead_plate":[')
_J_ROAD_OPEN = _pieces('],"big_road":[', '],"big_eye_boy":[', '],"small_road":[',
                     '],"cockroach_pig":[')
_J_ASK_OPEN = _piece('],"ask":{"banker":')
_J_ASK_PLAYER = _piece(',"player":')
_J_ASK_ROADS = _pieces('{"big_eye_boy":', ',"small_road":', ',"cockroach_pig":')
_J_ASK_CELLS = _piece(',"cells":{"big_road":{"col":')
_J_ASK_CELL = _pieces('},"big_eye_boy":', ',"small_road":', ',"cockroach_pig":')
_J_ASK_CLOSE = _piece("}}")
_J_TAIL = _pieces('},"pending_ties":', ',"counts":{"coups":', ',"banker":', ',"player":',
                ',"tie":', ',"banker_pairs":', ',"player_pairs":', ',"naturals":',
                '},"streaks":{"longest_banker_run":', ',"longest_player_run":',
                ',"columns":', ',"dragon_tails":', "}}")
_J_DELTA_OPEN = _pieces('{"since":', ',"coups":', ',"bead_plate":{"from":')
_J_DELTA_ROAD = _pieces(']},"big_road":{"from":', ']},"big_eye_boy":{"from":',
                      ']},"small_road":{"from":', ']},"cockroach_pig":{"from":')
_J_FROM_CELLS = _piece(',"cells":[')
_J_DELTA_ASK = _piece(']},"ask":{"banker":')
_TEXT = np.frombuffer(b"".join(_PIECES), dtype=np.uint8)

# int64 values, not Python ints, for arguments of compiled helpers (see machine._BIG_ROAD).
_ZERO = np.int64(0)
# Upper bounds of the bytes of one item (ints up to 10 digits), for the output buffer.
_BEAD_BYTES, _ENTRY_BYTES, _TIE_COUP_BYTES, _MARK_BYTES, _FIXED_BYTES = 170, 240, 11, 90, 1400


@nb.njit(cache=True, nogil=True)
def _put(out: np.ndarray, p: Int, piece: tuple[Int, Int]) -> Int:
    """Copy a constant piece. Unsigned indices: numba wraps negative signed indices, and
    that check alone keeps LLVM from turning the loop into a block copy (8x slower)."""
    start, end = piece
    at, src = np.uint64(p), np.uint64(start)
    for i in range(np.uint64(end - start)):
        out[at + i] = _TEXT[src + i]
    return p + end - start


@nb.njit(cache=True, nogil=True)
def _put_one_of(out: np.ndarray, p: Int, i: Int, a: tuple[Int, Int], b: tuple[Int, Int],
                c: tuple[Int, Int]) -> Int:
    """Piece ``a``, ``b`` or ``c`` for ``i`` = 0, 1, 2 (each a constant-size copy)."""
    if i == 0:
        return _put(out, p, a)
    if i == 1:
        return _put(out, p, b)
    return _put(out, p, c)


@nb.njit(cache=True, nogil=True)
def _int(out: np.ndarray, p: Int, value: Int) -> Int:
    """A non-negative integer in decimal."""
    at = np.uint64(p)
    if value < 10:
        out[at] = 48 + value
        return p + 1
    if value < 100:
        out[at] = 48 + value // 10
        out[at + np.uint64(1)] = 48 + value % 10
        return p + 2
    digits = 0
    rest = value
    while rest:
        digits += 1
        rest //= 10
    for i in range(digits - 1, -1, -1):
        out[at + np.uint64(i)] = 48 + value % 10
        value //= 10
    return p + digits


@nb.njit(cache=True, nogil=True)
def _open_cell(out: np.ndarray, p: Int, comma: bool | np.bool_, col: Int, row: Int) -> Int:
    """``{"col":C,"row":R`` — how every cell of every road starts (after a comma but the
    first)."""
    if comma:
        p = _put(out, p, _J_COMMA)
    p = _put(out, p, _J_CELL)
    p = _int(out, p, col)
    p = _put(out, p, _J_ROW)
    return _int(out, p, row)


@nb.njit(cache=True, nogil=True)
def _info(state: np.ndarray, out: np.ndarray, p: Int, coup: Int) -> Int:
    """The pair, natural and total fields of a coup, and the closing brace of its cell."""
    at = layout_of(state)[L_COUPS] + COUP_FIELDS * coup
    player_pair = state[at + C_PLAYER_PAIR]
    banker_pair = state[at + C_BANKER_PAIR]
    natural = state[at + C_NATURAL]
    total = state[at + C_PLAYER_TOTAL]
    if state[at + C_OUTCOME] != PLAYER and state[at + C_BANKER_TOTAL] >= 0:
        total = state[at + C_BANKER_TOTAL]  # a tie shows either total
    if player_pair < 0 and banker_pair < 0 and natural < 0 and total < 0:
        return _put(out, p, _J_NO_INFO)
    p = _put(out, p, _J_PLAYER_PAIR)
    p = _put_one_of(out, p, player_pair + 1, _J_FLAG[0], _J_FLAG[1], _J_FLAG[2])
    p = _put(out, p, _J_BANKER_PAIR)
    p = _put_one_of(out, p, banker_pair + 1, _J_FLAG[0], _J_FLAG[1], _J_FLAG[2])
    p = _put(out, p, _J_NATURAL)
    p = _put_one_of(out, p, natural + 1, _J_FLAG[0], _J_FLAG[1], _J_FLAG[2])
    p = _put(out, p, _J_TOTAL)
    p = _put(out, p, _J_NULL) if total < 0 else _int(out, p, total)
    return _put(out, p, _J_CLOSE)


@nb.njit(cache=True, nogil=True)
def _bead_cells(state: np.ndarray, out: np.ndarray, p: Int, first: Int) -> Int:
    coups = layout_of(state)[L_COUPS]
    for i in range(first, state[COUPS]):
        p = _open_cell(out, p, i > first, i // ROWS, i % ROWS)
        p = _put_one_of(out, p, state[coups + COUP_FIELDS * i + C_OUTCOME], _J_BEAD_OUTCOME[0],
                        _J_BEAD_OUTCOME[1], _J_BEAD_OUTCOME[2])
        p = _int(out, p, i)
        p = _info(state, out, p, i)
    return p


@nb.njit(cache=True, nogil=True)
def _big_road_cells(state: np.ndarray, out: np.ndarray, p: Int, first: Int) -> Int:
    """Entries from ``first`` on. An entry's ties are the tie coups from its own coup (from
    the start of the shoe for the first entry) up to the next entry's coup."""
    lay = layout_of(state)
    entries, coups = state[ENTRIES], state[COUPS]
    for e in range(first, entries):
        at = lay[L_ENTRIES] + ENTRY_FIELDS * e
        coup = state[at + E_COUP]
        p = _open_cell(out, p, e > first, np.int64(state[at + E_COL]),
                       np.int64(state[at + E_ROW]))
        p = _put_one_of(out, p, state[at + E_LABEL], _J_BIG_OUTCOME[0], _J_BIG_OUTCOME[1],
                        _J_BIG_OUTCOME[2])
        p = _int(out, p, state[at + E_TIES])
        p = _put(out, p, _J_COUP)
        p = _int(out, p, coup)
        p = _put(out, p, _J_COLUMN)
        p = _int(out, p, state[at + E_COLUMN])
        p = _put(out, p, _J_DEPTH)
        p = _int(out, p, state[at + E_DEPTH])
        p = _put(out, p, _J_TIE_COUPS)
        if state[at + E_TIES]:
            end = state[at + ENTRY_FIELDS + E_COUP] if e + 1 < entries else coups
            listed = False
            for t in range(0 if e == 0 else coup, end):
                if state[lay[L_COUPS] + COUP_FIELDS * t + C_OUTCOME] == TIE:
                    if listed:
                        p = _put(out, p, _J_COMMA)
                    p = _int(out, p, t)
                    listed = True
        p = _put(out, p, _J_TIE_COUPS_END)
        p = _info(state, out, p, np.int64(coup))
    return p


@nb.njit(cache=True, nogil=True)
def _marks(state: np.ndarray, out: np.ndarray, p: Int, k: Int, first: Int) -> Int:
    lay = layout_of(state)
    road = lay[L_MARKS] + MARK_FIELDS * (k - 1) * lay[L_CAP]
    for i in range(first, state[MARKS + k - 1]):
        at = road + MARK_FIELDS * i
        entry = state[at + M_ENTRY]
        p = _open_cell(out, p, i > first, np.int64(state[at + M_COL]),
                       np.int64(state[at + M_ROW]))
        if state[at + M_COLOUR] == RED:
            p = _put(out, p, _J_MARK_COLOUR[0])
        else:
            p = _put(out, p, _J_MARK_COLOUR[1])
        p = _int(out, p, state[lay[L_ENTRIES] + ENTRY_FIELDS * entry + E_COUP])
        p = _put(out, p, _J_ENTRY)
        p = _int(out, p, entry)
        p = _put(out, p, _J_CLOSE)
    return p


@nb.njit(cache=True, nogil=True)
def _asks_and_totals(state: np.ndarray, out: np.ndarray, p: Int) -> Int:
    """Both asks (after the ``"ask":{"banker":`` piece), then pending ties, counts and
    streaks, closing the document."""
    for outcome in range(2):
        if outcome:
            p = _put(out, p, _J_ASK_PLAYER)
        a = ask(state, np.int64(outcome))
        for k in range(3):
            p = _put_one_of(out, p, k, _J_ASK_ROADS[0], _J_ASK_ROADS[1], _J_ASK_ROADS[2])
            p = _put_one_of(out, p, a[2 + 3 * k] + 1, _J_COLOUR[0], _J_COLOUR[1], _J_COLOUR[2])
        p = _put(out, p, _J_ASK_CELLS)
        p = _int(out, p, a[0])
        p = _put(out, p, _J_ROW)
        p = _int(out, p, a[1])
        for k in range(3):
            p = _put_one_of(out, p, k, _J_ASK_CELL[0], _J_ASK_CELL[1], _J_ASK_CELL[2])
            if a[2 + 3 * k] < 0:
                p = _put(out, p, _J_NULL)
            else:
                p = _put(out, p, _J_CELL)
                p = _int(out, p, a[3 + 3 * k])
                p = _put(out, p, _J_ROW)
                p = _int(out, p, a[4 + 3 * k])
                p = _put(out, p, _J_CLOSE)
        p = _put(out, p, _J_ASK_CLOSE)
    for piece, value in ((_J_TAIL[0], PENDING), (_J_TAIL[1], COUPS),
                         (_J_TAIL[2], BANKER_WINS), (_J_TAIL[3], PLAYER_WINS),
                         (_J_TAIL[4], TIE_COUPS), (_J_TAIL[5], BANKER_PAIRS),
                         (_J_TAIL[6], PLAYER_PAIRS), (_J_TAIL[7], NATURALS),
                         (_J_TAIL[8], LONGEST_BANKER), (_J_TAIL[9], LONGEST_PLAYER),
                         (_J_TAIL[10], COLUMNS), (_J_TAIL[11], DRAGONS)):
        p = _put(out, p, piece)
        p = _int(out, p, state[value])
    return _put(out, p, _J_TAIL[12])


@nb.njit(cache=True, nogil=True)
def changed_from(state: np.ndarray, since: Int) -> tuple[Int, Int, Int, Int]:
    """Index of the first cell of the Big Road and of each derived road that differs from
    the board as it was after ``since`` coups (``0 <= since <= coups``).

    Entries made at coup ``since`` or later are new; the entry before them changed too when
    coup ``since`` is a tie (it gained a tie). Marks are new from the first new entry on.
    Walks back from the end: the cost is that of the change, not of the shoe.
    """
    lay = layout_of(state)
    made = state[ENTRIES]
    entries = lay[L_ENTRIES]
    while made > 0 and state[entries + ENTRY_FIELDS * (made - 1) + E_COUP] >= since:
        made -= 1
    big = made
    if made > 0 and since < state[COUPS] and \
            state[lay[L_COUPS] + COUP_FIELDS * since + C_OUTCOME] == TIE:
        big = made - 1
    first = np.zeros(3, dtype=np.int64)
    for k in range(1, 4):
        i = state[MARKS + k - 1]
        road = lay[L_MARKS] + MARK_FIELDS * (k - 1) * lay[L_CAP]
        while i > 0 and state[road + MARK_FIELDS * (i - 1) + M_ENTRY] >= made:
            i -= 1
        first[k - 1] = i
    return np.int64(big), first[0], first[1], first[2]


@nb.njit(cache=True, nogil=True)
def document(state: np.ndarray, since: Int, as_delta: bool) -> np.ndarray:
    """Compact JSON bytes of the whole ``to_dict`` document (``as_delta`` False, ``since``
    0), or of what changed since the board had ``since`` coups (format in docs/roads.md).
    One writer for both, so a delta's cells are the contract's cells byte for byte."""
    first = changed_from(state, since) if as_delta else (_ZERO, _ZERO, _ZERO, _ZERO)
    marks = 0
    for k in range(1, 4):
        marks += state[MARKS + k - 1] - first[k]
    out = np.empty(_FIXED_BYTES + _BEAD_BYTES * (state[COUPS] - since)
                   + _ENTRY_BYTES * (state[ENTRIES] - first[0])
                   + _TIE_COUP_BYTES * state[TIE_COUPS] + _MARK_BYTES * marks,
                   dtype=np.uint8)
    if as_delta:
        p = _put(out, 0, _J_DELTA_OPEN[0])
        p = _int(out, p, since)
        p = _put(out, p, _J_DELTA_OPEN[1])
        p = _int(out, p, state[COUPS])
        p = _put(out, p, _J_DELTA_OPEN[2])
        p = _int(out, p, since)
        p = _put(out, p, _J_FROM_CELLS)
    else:
        p = _put_one_of(out, 0, state[OWN_COLUMN], _J_LEADING[0], _J_LEADING[1], _J_LEADING[1])
    p = _bead_cells(state, out, p, since)
    for road in range(4):  # the Big Road, then the derived roads k = 1..3
        if as_delta:
            p = _put_one_of(out, p, road, _J_DELTA_ROAD[0], _J_DELTA_ROAD[1], _J_DELTA_ROAD[2]) \
                if road < 3 else _put(out, p, _J_DELTA_ROAD[3])
            p = _int(out, p, first[road])
            p = _put(out, p, _J_FROM_CELLS)
        else:
            p = _put_one_of(out, p, road, _J_ROAD_OPEN[0], _J_ROAD_OPEN[1], _J_ROAD_OPEN[2]) \
                if road < 3 else _put(out, p, _J_ROAD_OPEN[3])
        if road == 0:
            p = _big_road_cells(state, out, p, first[0])
        else:
            p = _marks(state, out, p, np.int64(road), first[road])
    p = _put(out, p, _J_DELTA_ASK) if as_delta else _put(out, p, _J_ASK_OPEN)
    p = _asks_and_totals(state, out, p)
    return out[:p]
