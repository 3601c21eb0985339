"""One coup of Punto Banco: the third-card tableau and the result it produces.

The tableau lives here once, as a small table the engine kernel, the exact-odds engine and
the ingest validator all index, so a wrong cell cannot hide in one path and not another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from roads.cards import RANK_POINTS, RANKS, parse_card
from roads.errors import InputError

OUTCOMES = ("B", "P", "T")
BANKER, PLAYER, TIE = 0, 1, 2
#: Column of :data:`BANKER_DRAWS` used when the Player stood (took no third card).
PLAYER_STOOD = 10


class CoupError(InputError):
    """Cards that cannot make a coup (too few for what the tableau requires)."""


def _banker_draws_rule(banker_total: int, player_third: int) -> bool:
    if player_third == PLAYER_STOOD:
        return banker_total <= 5
    if banker_total <= 2:
        return True
    if banker_total == 3:
        return player_third != 8
    if banker_total == 4:
        return 2 <= player_third <= 7
    if banker_total == 5:
        return 4 <= player_third <= 7
    if banker_total == 6:
        return player_third in (6, 7)
    return False


#: ``BANKER_DRAWS[banker_two_card_total, player_third_value_or_10]`` — only consulted when
#: neither side has a natural (totals 8/9 never reach it).
BANKER_DRAWS: np.ndarray = np.array(
    [[_banker_draws_rule(b, p) for p in range(11)] for b in range(10)], dtype=np.bool_
)
#: ``PLAYER_DRAWS[player_two_card_total]``: Player draws on 0-5.
PLAYER_DRAWS: np.ndarray = np.array([t <= 5 for t in range(10)], dtype=np.bool_)


def player_draws(player_total: int) -> bool:
    """Whether the Player takes a third card (no natural on the table)."""
    return bool(PLAYER_DRAWS[player_total])


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Whether the Banker takes a third card; ``player_third`` is None when the Player stood."""
    column = PLAYER_STOOD if player_third is None else player_third
    return bool(BANKER_DRAWS[banker_total, column])


def winner(player_total: int, banker_total: int) -> str:
    """``B``, ``P`` or ``T`` from the final totals."""
    if banker_total > player_total:
        return "B"
    if player_total > banker_total:
        return "P"
    return "T"


@dataclass(frozen=True, slots=True)
class Coup:
    """A coup's cards and everything the canonical schema derives from them."""

    player_cards: tuple[str, ...]
    banker_cards: tuple[str, ...]
    player_total: int
    banker_total: int
    outcome: str
    natural: bool
    player_pair: bool
    banker_pair: bool

    @property
    def cards_used(self) -> int:
        return len(self.player_cards) + len(self.banker_cards)


def _points(code: str) -> int:
    return RANK_POINTS[RANKS.index(code[0])]


def deal_coup(cards: Sequence[str]) -> Coup:
    """Play one coup from cards in deal order (P, B, P, B, then third cards as needed).

    ``cards`` may hold more cards than the coup uses; only the ones drawn are taken.
    Raises :class:`CoupError` when the cards run out before the tableau is complete.
    """
    codes = [parse_card(c) for c in cards[:6]]
    if len(codes) < 4:
        raise CoupError(f"a coup needs at least 4 cards, got {len(codes)}")
    player = [codes[0], codes[2]]
    banker = [codes[1], codes[3]]
    p_total = (_points(player[0]) + _points(player[1])) % 10
    b_total = (_points(banker[0]) + _points(banker[1])) % 10
    natural = p_total >= 8 or b_total >= 8
    nxt = 4
    if not natural:
        p_third: int | None = None
        if player_draws(p_total):
            if len(codes) <= nxt:
                raise CoupError(f"the Player must draw a third card on {p_total}")
            player.append(codes[nxt])
            p_third = _points(codes[nxt])
            p_total = (p_total + p_third) % 10
            nxt += 1
        if banker_draws(b_total, p_third):
            if len(codes) <= nxt:
                raise CoupError(f"the Banker must draw a third card on {b_total}")
            banker.append(codes[nxt])
            b_total = (b_total + _points(codes[nxt])) % 10
    return Coup(
        player_cards=tuple(player),
        banker_cards=tuple(banker),
        player_total=p_total,
        banker_total=b_total,
        outcome=winner(p_total, b_total),
        natural=natural,
        player_pair=player[0][0] == player[1][0],
        banker_pair=banker[0][0] == banker[1][0],
    )


def expected_hands(player_cards: Sequence[str], banker_cards: Sequence[str]) -> Coup:
    """Replay a recorded coup: the coup the tableau produces from its cards in deal order.

    The validator compares this with what was recorded; a mismatch in card counts means
    an illegal draw or stand.
    """
    p = [parse_card(c) for c in player_cards]
    b = [parse_card(c) for c in banker_cards]
    if len(p) < 2 or len(b) < 2:
        raise CoupError("each side needs two cards")
    order = [p[0], b[0], p[1], b[1], *p[2:], *b[2:]]
    return deal_coup(order)
