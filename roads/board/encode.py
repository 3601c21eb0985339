"""The roads JSON contract, and the live deltas, written straight from a board's state.

``Board.to_dict`` builds some 300 Python dicts for an 80-coup shoe and a JSON encoder then
walks them again: ~1 ms per shoe. These compiled writers read the machine's flat state
(:mod:`roads.board.machine`) and emit the bytes of
``json.dumps(board.to_dict(), separators=(",", ":"))`` directly, in tens of microseconds;
a delta holds only what one or more appended coups changed (format in ``docs/roads.md``).
Every constant piece of text lives once in ``_TEXT``; the writers copy slices of it.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from roads.board import machine as m
from roads.board.machine import Int

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


_NULL = _piece("null")
_COMMA = _piece(",")
_CLOSE = _piece("}")
_CELL = _piece('{"col":')
_ROW = _piece(',"row":')
_COUP = _piece(',"coup":')
_BEAD_OUTCOME = _pieces(',"outcome":"B","coup":', ',"outcome":"P","coup":',
                        ',"outcome":"T","coup":')
_BIG_OUTCOME = _pieces(',"outcome":"B","ties":', ',"outcome":"P","ties":',
                       ',"outcome":"T","ties":')
_COLUMN = _piece(',"column":')
_DEPTH = _piece(',"depth":')
_TIE_COUPS = _piece(',"tie_coups":[')
_TIE_COUPS_END = _piece("]")
_NO_INFO = _piece(',"player_pair":null,"banker_pair":null,"natural":null,"total":null}')
_PLAYER_PAIR = _piece(',"player_pair":')
_BANKER_PAIR = _piece(',"banker_pair":')
_NATURAL = _piece(',"natural":')
_TOTAL = _piece(',"total":')
_FLAG = _pieces("null", "false", "true")  # by recorded value + 1
_MARK_COLOUR = _pieces(',"color":"red","coup":', ',"color":"blue","coup":')
_ENTRY = _piece(',"entry":')
_COLOUR = _pieces("null", '"red"', '"blue"')  # by colour + 1
_LEADING = _pieces('{"leading_ties":"first-cell","bead_plate":[',
                   '{"leading_ties":"own-column","bead_plate":[')
_ROAD_OPEN = _pieces('],"big_road":[', '],"big_eye_boy":[', '],"small_road":[',
                     '],"cockroach_pig":[')
_ASK_OPEN = _piece('],"ask":{"banker":')
_ASK_PLAYER = _piece(',"player":')
_ASK_ROADS = _pieces('{"big_eye_boy":', ',"small_road":', ',"cockroach_pig":')
_ASK_CELLS = _piece(',"cells":{"big_road":{"col":')
_ASK_CELL = _pieces('},"big_eye_boy":', ',"small_road":', ',"cockroach_pig":')
_ASK_CLOSE = _piece("}}")
_TAIL = _pieces('},"pending_ties":', ',"counts":{"coups":', ',"banker":', ',"player":',
                ',"tie":', ',"banker_pairs":', ',"player_pairs":', ',"naturals":',
                '},"streaks":{"longest_banker_run":', ',"longest_player_run":',
                ',"columns":', ',"dragon_tails":', "}}")
_DELTA_OPEN = _pieces('{"since":', ',"coups":', ',"bead_plate":{"from":')
_DELTA_ROAD = _pieces(']},"big_road":{"from":', ']},"big_eye_boy":{"from":',
                      ']},"small_road":{"from":', ']},"cockroach_pig":{"from":')
_FROM_CELLS = _piece(',"cells":[')
_DELTA_ASK = _piece(']},"ask":{"banker":')
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
        p = _put(out, p, _COMMA)
    p = _put(out, p, _CELL)
    p = _int(out, p, col)
    p = _put(out, p, _ROW)
    return _int(out, p, row)


@nb.njit(cache=True, nogil=True)
def _info(state: np.ndarray, out: np.ndarray, p: Int, coup: Int) -> Int:
    """The pair, natural and total fields of a coup, and the closing brace of its cell."""
    at = m.layout_of(state)[m.L_COUPS] + m.COUP_FIELDS * coup
    player_pair = state[at + m.C_PLAYER_PAIR]
    banker_pair = state[at + m.C_BANKER_PAIR]
    natural = state[at + m.C_NATURAL]
    total = state[at + m.C_PLAYER_TOTAL]
    if state[at + m.C_OUTCOME] != m.PLAYER and state[at + m.C_BANKER_TOTAL] >= 0:
        total = state[at + m.C_BANKER_TOTAL]  # a tie shows either total
    if player_pair < 0 and banker_pair < 0 and natural < 0 and total < 0:
        return _put(out, p, _NO_INFO)
    p = _put(out, p, _PLAYER_PAIR)
    p = _put_one_of(out, p, player_pair + 1, _FLAG[0], _FLAG[1], _FLAG[2])
    p = _put(out, p, _BANKER_PAIR)
    p = _put_one_of(out, p, banker_pair + 1, _FLAG[0], _FLAG[1], _FLAG[2])
    p = _put(out, p, _NATURAL)
    p = _put_one_of(out, p, natural + 1, _FLAG[0], _FLAG[1], _FLAG[2])
    p = _put(out, p, _TOTAL)
    p = _put(out, p, _NULL) if total < 0 else _int(out, p, total)
    return _put(out, p, _CLOSE)


@nb.njit(cache=True, nogil=True)
def _bead_cells(state: np.ndarray, out: np.ndarray, p: Int, first: Int) -> Int:
    coups = m.layout_of(state)[m.L_COUPS]
    for i in range(first, state[m.COUPS]):
        p = _open_cell(out, p, i > first, i // m.ROWS, i % m.ROWS)
        p = _put_one_of(out, p, state[coups + m.COUP_FIELDS * i + m.C_OUTCOME], _BEAD_OUTCOME[0],
                        _BEAD_OUTCOME[1], _BEAD_OUTCOME[2])
        p = _int(out, p, i)
        p = _info(state, out, p, i)
    return p


@nb.njit(cache=True, nogil=True)
def _big_road_cells(state: np.ndarray, out: np.ndarray, p: Int, first: Int) -> Int:
    """Entries from ``first`` on. An entry's ties are the tie coups from its own coup (from
    the start of the shoe for the first entry) up to the next entry's coup."""
    lay = m.layout_of(state)
    entries, coups = state[m.ENTRIES], state[m.COUPS]
    for e in range(first, entries):
        at = lay[m.L_ENTRIES] + m.ENTRY_FIELDS * e
        coup = state[at + m.E_COUP]
        p = _open_cell(out, p, e > first, np.int64(state[at + m.E_COL]),
                       np.int64(state[at + m.E_ROW]))
        p = _put_one_of(out, p, state[at + m.E_LABEL], _BIG_OUTCOME[0], _BIG_OUTCOME[1],
                        _BIG_OUTCOME[2])
        p = _int(out, p, state[at + m.E_TIES])
        p = _put(out, p, _COUP)
        p = _int(out, p, coup)
        p = _put(out, p, _COLUMN)
        p = _int(out, p, state[at + m.E_COLUMN])
        p = _put(out, p, _DEPTH)
        p = _int(out, p, state[at + m.E_DEPTH])
        p = _put(out, p, _TIE_COUPS)
        if state[at + m.E_TIES]:
            end = state[at + m.ENTRY_FIELDS + m.E_COUP] if e + 1 < entries else coups
            listed = False
            for t in range(0 if e == 0 else coup, end):
                if state[lay[m.L_COUPS] + m.COUP_FIELDS * t + m.C_OUTCOME] == m.TIE:
                    if listed:
                        p = _put(out, p, _COMMA)
                    p = _int(out, p, t)
                    listed = True
        p = _put(out, p, _TIE_COUPS_END)
        p = _info(state, out, p, np.int64(coup))
    return p


@nb.njit(cache=True, nogil=True)
def _marks(state: np.ndarray, out: np.ndarray, p: Int, k: Int, first: Int) -> Int:
    lay = m.layout_of(state)
    road = lay[m.L_MARKS] + m.MARK_FIELDS * (k - 1) * lay[m.L_CAP]
    for i in range(first, state[m.MARKS + k - 1]):
        at = road + m.MARK_FIELDS * i
        entry = state[at + m.M_ENTRY]
        p = _open_cell(out, p, i > first, np.int64(state[at + m.M_COL]),
                       np.int64(state[at + m.M_ROW]))
        if state[at + m.M_COLOUR] == m.RED:
            p = _put(out, p, _MARK_COLOUR[0])
        else:
            p = _put(out, p, _MARK_COLOUR[1])
        p = _int(out, p, state[lay[m.L_ENTRIES] + m.ENTRY_FIELDS * entry + m.E_COUP])
        p = _put(out, p, _ENTRY)
        p = _int(out, p, entry)
        p = _put(out, p, _CLOSE)
    return p


@nb.njit(cache=True, nogil=True)
def _asks_and_totals(state: np.ndarray, out: np.ndarray, p: Int) -> Int:
    """Both asks (after the ``"ask":{"banker":`` piece), then pending ties, counts and
    streaks, closing the document."""
    for outcome in range(2):
        if outcome:
            p = _put(out, p, _ASK_PLAYER)
        a = m.ask(state, np.int64(outcome))
        for k in range(3):
            p = _put_one_of(out, p, k, _ASK_ROADS[0], _ASK_ROADS[1], _ASK_ROADS[2])
            p = _put_one_of(out, p, a[2 + 3 * k] + 1, _COLOUR[0], _COLOUR[1], _COLOUR[2])
        p = _put(out, p, _ASK_CELLS)
        p = _int(out, p, a[0])
        p = _put(out, p, _ROW)
        p = _int(out, p, a[1])
        for k in range(3):
            p = _put_one_of(out, p, k, _ASK_CELL[0], _ASK_CELL[1], _ASK_CELL[2])
            if a[2 + 3 * k] < 0:
                p = _put(out, p, _NULL)
            else:
                p = _put(out, p, _CELL)
                p = _int(out, p, a[3 + 3 * k])
                p = _put(out, p, _ROW)
                p = _int(out, p, a[4 + 3 * k])
                p = _put(out, p, _CLOSE)
        p = _put(out, p, _ASK_CLOSE)
    for piece, value in ((_TAIL[0], m.PENDING), (_TAIL[1], m.COUPS),
                         (_TAIL[2], m.BANKER_WINS), (_TAIL[3], m.PLAYER_WINS),
                         (_TAIL[4], m.TIE_COUPS), (_TAIL[5], m.BANKER_PAIRS),
                         (_TAIL[6], m.PLAYER_PAIRS), (_TAIL[7], m.NATURALS),
                         (_TAIL[8], m.LONGEST_BANKER), (_TAIL[9], m.LONGEST_PLAYER),
                         (_TAIL[10], m.COLUMNS), (_TAIL[11], m.DRAGONS)):
        p = _put(out, p, piece)
        p = _int(out, p, state[value])
    return _put(out, p, _TAIL[12])


@nb.njit(cache=True, nogil=True)
def changed_from(state: np.ndarray, since: Int) -> tuple[Int, Int, Int, Int]:
    """Index of the first cell of the Big Road and of each derived road that differs from
    the board as it was after ``since`` coups (``0 <= since <= coups``).

    Entries made at coup ``since`` or later are new; the entry before them changed too when
    coup ``since`` is a tie (it gained a tie). Marks are new from the first new entry on.
    Walks back from the end: the cost is that of the change, not of the shoe.
    """
    lay = m.layout_of(state)
    made = state[m.ENTRIES]
    entries = lay[m.L_ENTRIES]
    while made > 0 and state[entries + m.ENTRY_FIELDS * (made - 1) + m.E_COUP] >= since:
        made -= 1
    big = made
    if made > 0 and since < state[m.COUPS] and \
            state[lay[m.L_COUPS] + m.COUP_FIELDS * since + m.C_OUTCOME] == m.TIE:
        big = made - 1
    first = np.zeros(3, dtype=np.int64)
    for k in range(1, 4):
        i = state[m.MARKS + k - 1]
        road = lay[m.L_MARKS] + m.MARK_FIELDS * (k - 1) * lay[m.L_CAP]
        while i > 0 and state[road + m.MARK_FIELDS * (i - 1) + m.M_ENTRY] >= made:
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
        marks += state[m.MARKS + k - 1] - first[k]
    out = np.empty(_FIXED_BYTES + _BEAD_BYTES * (state[m.COUPS] - since)
                   + _ENTRY_BYTES * (state[m.ENTRIES] - first[0])
                   + _TIE_COUP_BYTES * state[m.TIE_COUPS] + _MARK_BYTES * marks,
                   dtype=np.uint8)
    if as_delta:
        p = _put(out, 0, _DELTA_OPEN[0])
        p = _int(out, p, since)
        p = _put(out, p, _DELTA_OPEN[1])
        p = _int(out, p, state[m.COUPS])
        p = _put(out, p, _DELTA_OPEN[2])
        p = _int(out, p, since)
        p = _put(out, p, _FROM_CELLS)
    else:
        p = _put_one_of(out, 0, state[m.OWN_COLUMN], _LEADING[0], _LEADING[1], _LEADING[1])
    p = _bead_cells(state, out, p, since)
    for road in range(4):  # the Big Road, then the derived roads k = 1..3
        if as_delta:
            p = _put_one_of(out, p, road, _DELTA_ROAD[0], _DELTA_ROAD[1], _DELTA_ROAD[2]) \
                if road < 3 else _put(out, p, _DELTA_ROAD[3])
            p = _int(out, p, first[road])
            p = _put(out, p, _FROM_CELLS)
        else:
            p = _put_one_of(out, p, road, _ROAD_OPEN[0], _ROAD_OPEN[1], _ROAD_OPEN[2]) \
                if road < 3 else _put(out, p, _ROAD_OPEN[3])
        if road == 0:
            p = _big_road_cells(state, out, p, first[0])
        else:
            p = _marks(state, out, p, np.int64(road), first[road])
    p = _put(out, p, _DELTA_ASK) if as_delta else _put(out, p, _ASK_OPEN)
    p = _asks_and_totals(state, out, p)
    return out[:p]
