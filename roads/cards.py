"""Playing cards: canonical codes, a lenient parser, point values, rank-level pairs.

A card is stored everywhere as its canonical code (rank + suit, e.g. ``As``, ``Td``), and
inside the engine as a small integer ``rank_index * 4 + suit_index`` so shoes are compact
numpy arrays. Both forms are defined here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from roads.errors import InputError

RANKS = "A23456789TJQK"
SUITS = "shdc"
#: Canonical codes in engine order: index ``rank * 4 + suit``.
CARD_CODES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
CARD_INDEX: dict[str, int] = {code: i for i, code in enumerate(CARD_CODES)}
#: Baccarat point value of each rank (A=1, 2-9 pip, T/J/Q/K=0).
RANK_POINTS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0)
#: Point value of each engine card index.
CARD_POINTS: tuple[int, ...] = tuple(RANK_POINTS[i // 4] for i in range(52))
#: Burn count shown by a card when it is the shoe's first card (T/J/Q/K count ten).
RANK_BURN: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)

_SUIT_SYMBOLS = {"♠": "s", "♥": "h", "♦": "d", "♣": "c", "♤": "s", "♡": "h", "♢": "d", "♧": "c"}
_TOKEN = re.compile(r"^(10|[2-9]|[atjqk])([shdc])$")


class CardError(InputError):
    """A card token that cannot be read; the message names the token."""


def parse_card(token: str) -> str:
    """Return the canonical code of one card written leniently.

    Accepts ``10`` for ``T``, any letter case, and the suit symbols ``♠♥♦♣``, because keypads,
    card-reading shoes and old exports all write cards differently.
    """
    raw = token
    text = token.strip()
    for symbol, letter in _SUIT_SYMBOLS.items():
        text = text.replace(symbol, letter)
    match = _TOKEN.match(text.lower())
    if match is None:
        raise CardError(f"not a card: {raw!r} (expected rank A,2-9,T/10,J,Q,K and suit s,h,d,c)")
    rank, suit = match.groups()
    rank = "T" if rank == "10" else rank.upper()
    return rank + suit


def parse_cards(text: str | Iterable[str]) -> list[str]:
    """Parse cards separated by spaces and/or commas (or an iterable of tokens)."""
    tokens = re.split(r"[\s,;]+", text.strip()) if isinstance(text, str) else list(text)
    return [parse_card(t) for t in tokens if t.strip()]


def card_index(code: str) -> int:
    """Engine index of a canonical code (raises :class:`CardError` for anything else)."""
    try:
        return CARD_INDEX[code]
    except KeyError:
        raise CardError(f"not a canonical card code: {code!r}") from None


def rank_of(code: str) -> str:
    """The rank letter of a card (``Td`` -> ``T``)."""
    return parse_card(code)[0]


def point_value(code: str) -> int:
    """Baccarat point value of a card."""
    return RANK_POINTS[RANKS.index(rank_of(code))]


def hand_total(codes: Iterable[str]) -> int:
    """A hand's total: the sum of point values mod 10."""
    return sum(point_value(c) for c in codes) % 10


def is_pair(first: str, second: str) -> bool:
    """A pair is two cards of the same rank (``Td Ts`` is a pair, ``Td Js`` is not)."""
    return rank_of(first) == rank_of(second)
