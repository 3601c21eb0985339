"""The spellings real systems use for outcomes, cards and booleans, mapped to canonical values.

Kept as plain dictionaries so readers can vectorise them (``replace_strict``).
"""

from __future__ import annotations

from roads.cards import CARD_CODES

_OUTCOME_SPELLINGS = {
    "B": ["b", "banker", "banco", "bank", "banker win", "banker wins", "庄", "莊", "庄赢",
          "莊贏", "банк", "банкир", "победа банка", "μπάνκα"],
    "P": ["p", "player", "punto", "player win", "player wins", "闲", "閒", "闲赢", "閒贏",
          "игрок", "победа игрока", "παίκτης"],
    "T": ["t", "tie", "tie game", "egalite", "égalité", "和", "和局", "ничья", "ισοπαλία"],
}
#: lower-cased, stripped label -> B/P/T
OUTCOME_LABELS: dict[str, str] = {
    label: code for code, labels in _OUTCOME_SPELLINGS.items() for label in labels
}

_RANK_SPELLINGS = {"A": ["a", "1"], "T": ["t", "10"], "J": ["j"], "Q": ["q"], "K": ["k"]}
_SUIT_SPELLINGS = {"s": ["s", "♠", "♤"], "h": ["h", "♥", "♡"], "d": ["d", "♦", "♢"],
                   "c": ["c", "♣", "♧"]}


def _card_spellings() -> dict[str, str]:
    out: dict[str, str] = {}
    for code in CARD_CODES:
        rank, suit = code[0], code[1]
        ranks = _RANK_SPELLINGS.get(rank, [rank.lower()])
        for r in ranks:
            for s in _SUIT_SPELLINGS[suit]:
                for rr in {r, r.upper()}:
                    for ss in {s, s.upper()}:
                        out[rr + ss] = code
    out.pop("1s", None)  # '1s' etc. are ambiguous with values; aces are 'A'
    for suit_spellings in _SUIT_SPELLINGS.values():
        for s in suit_spellings:
            for ss in {s, s.upper()}:
                out.pop("1" + ss, None)
    return out


#: every accepted spelling of a card (``10h``, ``TH``, ``K♠``) -> canonical code
CARD_SPELLINGS: dict[str, str] = _card_spellings()
#: value-only tokens (a system that records point values, not cards)
VALUE_TOKENS: dict[str, int] = {str(v): v for v in range(10)}

TRUE_LABELS = {"1", "true", "t", "yes", "y", "x", "是", "да"}
FALSE_LABELS = {"0", "false", "f", "no", "n", "", "否", "нет"}
