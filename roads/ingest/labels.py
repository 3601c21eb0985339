"""The spellings real systems use for outcomes and booleans, mapped to canonical values.

Kept as plain dictionaries so readers can vectorise them (``replace_strict``).
"""

from __future__ import annotations

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

TRUE_LABELS = {"1", "true", "t", "yes", "y", "x", "是", "да"}
FALSE_LABELS = {"0", "false", "f", "no", "n", "", "否", "нет"}
