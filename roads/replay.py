"""The rule-replay kernel, beside the tableau it replays: card tokens straight from Arrow
string buffers, and the per-row rules (tableau replay, totals, outcome, naturals, pairs) in
one loop. Ingestion's validation and the integrity checks both run it, so a coup is judged
by one implementation of the rules wherever it is judged.

Why compiled: a card-level export has a million rows of short strings; expression-by-
expression parsing and checking made a dozen passes and ran 10x slower than reading the
file. These loops make one pass each and return flat arrays that polars assembles.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import pyarrow as pa

from roads.tableau import BANKER_DRAWS, PLAYER_STOOD

NONE = 255  # empty card slot
KIND_NONE, KIND_CARDS, KIND_VALUES, KIND_BAD = 0, 1, 2, 3
_BANKER = BANKER_DRAWS.copy()

# Per-row flags (bit positions) and quarantine reasons (codes); names live in validate.py.
F_PLAYER_TABLEAU, F_BANKER_TABLEAU, F_OUTCOME, F_PLAYER_TOTAL, F_BANKER_TOTAL = 0, 1, 2, 3, 4
F_NATURAL, F_PLAYER_PAIR, F_BANKER_PAIR, F_VALUE_LEVEL = 5, 6, 7, 8
Q_PLAYER_BAD, Q_BANKER_BAD, Q_PLAYER_COUNT, Q_BANKER_COUNT, Q_ONE_SIDE = 1, 2, 3, 4, 5
Q_NO_OUTCOME = 6


def string_buffers(array: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray,
                                                              np.ndarray]:
    """(offsets int64, bytes uint8, is_null bool) of a string column, zero-copy where it can."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    array = array.cast(pa.large_string())  # pyarrow.compute loaded here, not at import
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[
        array.offset : array.offset + len(array) + 1]
    data_buffer = array.buffers()[2]
    data = (np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None
            else np.zeros(0, dtype=np.uint8))
    nulls = array.is_null().to_numpy(zero_copy_only=False)
    return offsets, data, nulls


def _table(read: dict[str, int]) -> np.ndarray:
    """A 256-entry byte lookup (-1 where absent): one load instead of a chain of branches,
    which mispredict on random cards."""
    table = np.full(256, -1, dtype=np.int8)
    for chars, value in read.items():
        for ch in chars:
            table[ord(ch)] = value
    return table


_SEP = _table({" ,;|/\t\n\r": 1})  # between cards
_RANK = _table({**{r + r.lower(): i for i, r in enumerate("A23456789TJQK")}})  # "10" aside
_SUIT = _table({"sS": 0, "hH": 1, "dD": 2, "cC": 3})


@nb.njit(cache=True, inline="always")
def _is_sep(b: int) -> bool:
    return bool(_SEP[b] == 1)


@nb.njit(cache=True, inline="always")
def _suit(data: np.ndarray, i: int, end: int) -> tuple[int, int]:
    """(suit index 0..3 for s h d c, bytes used); (-1, 0) if none."""
    b = data[i]
    if _SUIT[b] >= 0:
        return _SUIT[b], 1
    # UTF-8 suit symbols U+2660..U+2667: E2 99 A0..A7
    if b == 0xE2 and i + 2 < end and data[i + 1] == 0x99 and 0xA0 <= data[i + 2] <= 0xA7:
        return (0, 1, 2, 3, 0, 1, 2, 3)[data[i + 2] - 0xA0], 3
    return -1, 0


@nb.njit(cache=True, inline="always")
def hand(data: np.ndarray, i: int, end: int, cards: np.ndarray, values: np.ndarray,
         r: int) -> tuple[int, int]:
    """Read the hand in ``data[i:end]`` into row ``r`` of the slots; (tokens, kind).

    ``cards[r, k]``: card index rank*4+suit or NONE; ``values[r, k]``: point value (from a
    card or a value token) or -1; kind: none, cards, values or bad (an unreadable token, or
    cards mixed with values). Shared by the string-column and the raw-CSV front ends.
    """
    for k in range(3):
        cards[r, k] = NONE
        values[r, k] = -1
    n = 0
    n_cards = 0
    n_values = 0
    bad = False
    while i < end:
        while i < end and _is_sep(data[i]):
            i += 1
        if i >= end:
            break
        start = i
        while i < end and not _is_sep(data[i]):
            i += 1
        length = i - start
        card = -1
        value = -1
        if length == 1 and 48 <= data[start] <= 57:
            value = data[start] - 48
            n_values += 1
        else:
            j = start
            rank = -1
            if length >= 3 and data[j] == 49 and data[j + 1] == 48:  # "10"
                rank = 9
                j += 2
            else:
                rank = _RANK[data[j]]
                j += 1
            suit, used = (-1, 0) if j >= i else _suit(data, j, i)
            if rank >= 0 and suit >= 0 and j + used == i:
                card = rank * 4 + suit
                value = rank + 1 if rank < 9 else 0
                n_cards += 1
            else:
                bad = True
        if n < 3:
            if card >= 0:
                cards[r, n] = card
            values[r, n] = value
        n += 1
    if n == 0:
        return 0, KIND_NONE
    if bad or (n_cards > 0 and n_values > 0):
        return n, KIND_BAD
    return n, KIND_CARDS if n_cards > 0 else KIND_VALUES


@nb.njit(cache=True, parallel=True)
def parse_hands(offsets: np.ndarray, data: np.ndarray, nulls: np.ndarray,
                cards: np.ndarray, values: np.ndarray, count: np.ndarray,
                kind: np.ndarray) -> None:
    """Read each hand of a string column (``"9h 4s"``, ``"10H,Qc"``, ``"K♠ 2♥"``,
    ``"9,4,6"``) into slots (see :func:`hand`); ``count[r]``: tokens."""
    for r in nb.prange(offsets.shape[0] - 1):
        if nulls[r]:
            for k in range(3):
                cards[r, k] = NONE
                values[r, k] = -1
            count[r] = 0
            kind[r] = KIND_NONE
        else:
            count[r], kind[r] = hand(data, offsets[r], offsets[r + 1], cards, values, r)


@nb.njit(cache=True)
def judge_coup(pv0: int, pv1: int, pv2: int, pc0: int, pc1: int, p_count: int, p_kind: int,
               bv0: int, bv1: int, bv2: int, bc0: int, bc1: int, b_count: int, b_kind: int,
               outcome: int, p_total: int, b_total: int, natural: int, p_pair: int,
               b_pair: int) -> tuple[int, int, int, int, int, int, int, int, int]:
    """One coup against the rules (see :func:`check_rows`): its hands' point values
    (``pv0``..), first two card codes (``pc0``, ``pc1``), card counts and kinds, and what was
    recorded (-1: absent). Returns (outcome to store, Player total, Banker total, natural,
    Player pair, Banker pair by the cards, flags, quarantine reason, level). Scalars in and
    out, so a serial pass (the integrity checks') runs it as fast as this parallel one."""
    f = 0
    q = 0
    cp, cb, cn, cpp, cbp = -1, -1, -1, -1, -1
    if p_kind == KIND_BAD:
        q = Q_PLAYER_BAD
    elif b_kind == KIND_BAD:
        q = Q_BANKER_BAD
    elif p_kind != KIND_NONE and not 2 <= p_count <= 3:
        q = Q_PLAYER_COUNT
    elif b_kind != KIND_NONE and not 2 <= b_count <= 3:
        q = Q_BANKER_COUNT
    elif (p_kind == KIND_NONE) != (b_kind == KIND_NONE):
        q = Q_ONE_SIDE
    lev = 0
    if q == 0 and p_kind != KIND_NONE:
        lev = 1 if (p_kind == KIND_CARDS and b_kind == KIND_CARDS) else 2
    derived = -1
    if lev > 0:
        p2 = (pv0 + pv1) % 10
        b2 = (bv0 + bv1) % 10
        cp = p2
        cb = b2
        if p_count == 3:
            cp = (p2 + pv2) % 10
        if b_count == 3:
            cb = (b2 + bv2) % 10
        nat = p2 >= 8 or b2 >= 8
        cn = 1 if nat else 0
        p_should = (not nat) and p2 <= 5
        third = pv2 if p_count == 3 else PLAYER_STOOD
        b_should = (not nat) and _BANKER[b2, third]
        if (p_count == 3) != p_should:
            f |= 1 << F_PLAYER_TABLEAU
        if (b_count == 3) != b_should:
            f |= 1 << F_BANKER_TABLEAU
        derived = 0 if cb > cp else (1 if cp > cb else 2)
        if outcome >= 0 and outcome != derived:
            f |= 1 << F_OUTCOME
        if p_total >= 0 and p_total != cp:
            f |= 1 << F_PLAYER_TOTAL
        if b_total >= 0 and b_total != cb:
            f |= 1 << F_BANKER_TOTAL
        if natural >= 0 and natural != cn:
            f |= 1 << F_NATURAL
        if lev == 1:
            cpp = 1 if pc0 // 4 == pc1 // 4 else 0
            cbp = 1 if bc0 // 4 == bc1 // 4 else 0
            if p_pair >= 0 and p_pair != cpp:
                f |= 1 << F_PLAYER_PAIR
            if b_pair >= 0 and b_pair != cbp:
                f |= 1 << F_BANKER_PAIR
        else:
            f |= 1 << F_VALUE_LEVEL
    out = outcome
    if out < 0:
        out = derived
    if out < 0 and p_total >= 0 and b_total >= 0:
        out = 0 if b_total > p_total else (1 if p_total > b_total else 2)
    if q == 0 and out < 0:
        q = Q_NO_OUTCOME
    return out, cp, cb, cn, cpp, cbp, f, q, lev


@nb.njit(cache=True, parallel=True)
def check_rows(
    p_values: np.ndarray, p_cards: np.ndarray, p_count: np.ndarray, p_kind: np.ndarray,
    b_values: np.ndarray, b_cards: np.ndarray, b_count: np.ndarray, b_kind: np.ndarray,
    outcome: np.ndarray, p_total: np.ndarray, b_total: np.ndarray, natural: np.ndarray,
    p_pair: np.ndarray, b_pair: np.ndarray,
    final_outcome: np.ndarray, cards_p_total: np.ndarray, cards_b_total: np.ndarray,
    cards_natural: np.ndarray, cards_p_pair: np.ndarray, cards_b_pair: np.ndarray,
    flags: np.ndarray, reason: np.ndarray, level: np.ndarray,
) -> None:
    """Replay every row; recorded values are -1 when absent (outcome: 0 B, 1 P, 2 T).

    Outputs: the outcome to store (recorded, else from the cards, else from the totals;
    -1 if none), what the cards say (-1 when there are no cards), a flag bitmask of the
    rules the row breaks, a quarantine reason (0 = storable) and the level (0 none,
    1 cards, 2 values).
    """
    for r in nb.prange(p_values.shape[0]):
        (final_outcome[r], cards_p_total[r], cards_b_total[r], cards_natural[r],
         cards_p_pair[r], cards_b_pair[r], flags[r], reason[r], level[r]) = judge_coup(
            p_values[r, 0], p_values[r, 1], p_values[r, 2], p_cards[r, 0], p_cards[r, 1],
            p_count[r], p_kind[r], b_values[r, 0], b_values[r, 1], b_values[r, 2],
            b_cards[r, 0], b_cards[r, 1], b_count[r], b_kind[r], outcome[r], p_total[r],
            b_total[r], natural[r], p_pair[r], b_pair[r])


def hands(array: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, ...]:
    """Parse a column of hands: (cards, values, count, kind)."""
    offsets, data, nulls = string_buffers(array)
    n = len(offsets) - 1
    cards = np.empty((n, 3), dtype=np.uint8)
    values = np.empty((n, 3), dtype=np.int8)
    count = np.empty(n, dtype=np.int16)
    kind = np.empty(n, dtype=np.int8)
    parse_hands(offsets, data, nulls, cards, values, count, kind)
    return cards, values, count, kind


@nb.njit(cache=True, nogil=True)
def shoe_checks(shoe: np.ndarray, coup: np.ndarray, time_us: np.ndarray, has_time: np.ndarray,
                p_cards: np.ndarray, b_cards: np.ndarray, cards_level: np.ndarray,
                n_shoes: int, decks: int,
                stats: np.ndarray, over: np.ndarray) -> None:
    """One pass in file order over every row, by dense shoe id.

    ``stats[s]``: first row, rows, lowest and highest coup number, out of order (0/1),
    time went backwards (0/1), earliest and latest time (±2**62 if none), cards dealt,
    every row card-level (0/1) — the last four are the shoe's totals for the ``shoes``
    table. ``over[s, card]``: how many times the card was dealt, for the inventory check
    (compared with ``decks`` by the caller).
    """
    last_coup = np.full(n_shoes, -(2**62), dtype=np.int64)
    last_time = np.full(n_shoes, -(2**62), dtype=np.int64)
    for s in range(n_shoes):
        stats[s, 0] = -1
        stats[s, 1] = 0
        stats[s, 2] = 2**62
        stats[s, 3] = -(2**62)
        stats[s, 4] = 0
        stats[s, 5] = 0
        stats[s, 6] = 2**62
        stats[s, 7] = -(2**62)
        stats[s, 8] = 0
        stats[s, 9] = 1
    for r in range(shoe.shape[0]):
        s = shoe[r]
        if stats[s, 0] < 0:
            stats[s, 0] = r
        stats[s, 1] += 1
        c = coup[r]
        stats[s, 2] = min(stats[s, 2], c)
        stats[s, 3] = max(stats[s, 3], c)
        if c <= last_coup[s]:
            stats[s, 4] = 1
        last_coup[s] = c
        if has_time[r]:
            t = time_us[r]
            if t < last_time[s]:
                stats[s, 5] = 1
            last_time[s] = t
            stats[s, 6] = min(stats[s, 6], t)
            stats[s, 7] = max(stats[s, 7], t)
        if cards_level[r]:
            for k in range(3):
                if p_cards[r, k] != NONE:
                    over[s, p_cards[r, k]] += 1
                    stats[s, 8] += 1
                if b_cards[r, k] != NONE:
                    over[s, b_cards[r, k]] += 1
                    stats[s, 8] += 1
        else:
            stats[s, 9] = 0
