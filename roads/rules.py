"""Rule sets: the house parameters a shoe is dealt and paid under.

The tableau is fixed (see :mod:`roads.tableau`); what differs between casinos is the number
of decks, the payouts, the side bets, where the cut card goes and what happens when it comes
out, and the table's own limits. A rule set is immutable so a shoe's record can name it and
mean exactly one thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from roads.errors import InputError

EndRule = Literal["finish-plus-one", "last-coup"]
BurnRule = Literal["first-card", "none"]
END_RULES: tuple[str, ...] = ("finish-plus-one", "last-coup")
BURN_RULES: tuple[str, ...] = ("first-card", "none")
MAX_DECKS = 16


class RulesError(InputError):
    """An unknown rule-set name or an invalid rule-set definition."""


@dataclass(frozen=True, slots=True)
class TableInfo:
    """Table metadata that does not change the odds but belongs on screens and reports."""

    boxes: int | None = None
    players_per_box: int | None = None
    tie_requires_main_bet: bool = False
    one_pair_bet_per_coup: bool = False
    min_bet: int | None = None
    max_bet: int | None = None
    currency: str | None = None


@dataclass(frozen=True, slots=True)
class RuleSet:
    """A named, immutable set of house rules.

    Payouts are exact fractions of the stake won (``19:20`` is ``Fraction(19, 20)``);
    ``banker_commission`` is taken from a Banker win (``1:1 less 5%`` nets 0.95, as does
    ``19:20`` with no commission). Side bets are None where the table does not offer them.
    """

    name: str
    decks: int
    banker_payout: Fraction = Fraction(1)
    banker_commission: Fraction = Fraction(1, 20)
    player_payout: Fraction = Fraction(1)
    tie_payout: Fraction = Fraction(8)
    pair_payout: Fraction | None = Fraction(11)
    ez_push: bool = False
    dragon7_payout: Fraction | None = None
    panda8_payout: Fraction | None = None
    cut_card_from_end: tuple[int, int] = (16, 16)
    end_rule: EndRule = "finish-plus-one"
    burn_rule: BurnRule = "first-card"
    table: TableInfo = field(default_factory=TableInfo)
    description: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        validate(self)

    @property
    def cards(self) -> int:
        """Cards in a full shoe."""
        return 52 * self.decks

    @property
    def banker_net(self) -> Fraction:
        """What a winning Banker bet nets per unit staked, after commission."""
        return self.banker_payout * (1 - self.banker_commission)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (payouts as ``a:b`` strings and as numbers)."""
        payouts: dict[str, Any] = {
            "banker": ratio(self.banker_payout),
            "banker_commission": float(self.banker_commission),
            "banker_net": float(self.banker_net),
            "player": ratio(self.player_payout),
            "tie": ratio(self.tie_payout),
            "pair": ratio(self.pair_payout) if self.pair_payout is not None else None,
            "dragon7": ratio(self.dragon7_payout) if self.dragon7_payout is not None else None,
            "panda8": ratio(self.panda8_payout) if self.panda8_payout is not None else None,
            "ez_push": self.ez_push,
        }
        return {
            "name": self.name,
            "description": self.description,
            "decks": self.decks,
            "cards": self.cards,
            "payouts": payouts,
            "shoe": {
                "cut_card_from_end": list(self.cut_card_from_end),
                "end_rule": self.end_rule,
                "burn_rule": self.burn_rule,
            },
            "table": {
                "boxes": self.table.boxes,
                "players_per_box": self.table.players_per_box,
                "tie_requires_main_bet": self.table.tie_requires_main_bet,
                "one_pair_bet_per_coup": self.table.one_pair_bet_per_coup,
                "min_bet": self.table.min_bet,
                "max_bet": self.table.max_bet,
                "currency": self.table.currency,
            },
            "source": self.source,
        }


def ratio(value: Fraction) -> str:
    """``Fraction(19, 20)`` -> ``"19:20"``, ``Fraction(8)`` -> ``"8:1"``."""
    return f"{value.numerator}:{value.denominator}"


def validate(rules: RuleSet) -> None:
    """Raise :class:`RulesError` naming the first field that makes the rule set unplayable."""
    where = f"rule set {rules.name!r}"
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", rules.name):
        raise RulesError(f"{where}: name must be lower-case letters, digits, '.', '_' or '-'")
    if not 1 <= rules.decks <= MAX_DECKS:
        raise RulesError(f"{where}: decks must be between 1 and {MAX_DECKS}, got {rules.decks}")
    for label in ("banker_payout", "player_payout", "tie_payout"):
        if getattr(rules, label) <= 0:
            raise RulesError(f"{where}: {label} must be positive")
    for label in ("pair_payout", "dragon7_payout", "panda8_payout"):
        value = getattr(rules, label)
        if value is not None and value <= 0:
            raise RulesError(f"{where}: {label} must be positive when offered")
    if not 0 <= rules.banker_commission < 1:
        raise RulesError(f"{where}: banker_commission must be in [0, 1)")
    if rules.end_rule not in END_RULES:
        raise RulesError(f"{where}: end_rule must be one of {', '.join(END_RULES)}")
    if rules.burn_rule not in BURN_RULES:
        raise RulesError(f"{where}: burn_rule must be one of {', '.join(BURN_RULES)}")
    low, high = rules.cut_card_from_end
    # Enough cards behind the cut card to finish the coup it interrupts (6 at most), and
    # for finish-plus-one one more complete coup after that.
    need = 6 if rules.end_rule == "last-coup" else 11
    if low > high:
        raise RulesError(f"{where}: cut_card_from_end range {low}..{high} is reversed")
    if low < need:
        raise RulesError(
            f"{where}: cut_card_from_end must be at least {need} for end rule {rules.end_rule}"
        )
    if rules.cards - high < 20:
        raise RulesError(f"{where}: cut_card_from_end {high} leaves too few cards to play")


_EL = "rules-el.txt"
PRESETS: dict[str, RuleSet] = {
    r.name: r
    for r in (
        RuleSet(
            name="standard-8",
            decks=8,
            description="8 decks, Banker 1:1 less 5%, Tie 8:1, pairs 11:1, cut 16, finish-plus-one",
            source=_EL,
        ),
        RuleSet(
            name="standard-6",
            decks=6,
            description="6 decks, Banker 1:1 less 5%, Tie 8:1, pairs 11:1, cut 16, finish-plus-one",
            source=_EL + " (6-deck variant)",
        ),
        RuleSet(
            name="casino-6",
            decks=6,
            banker_payout=Fraction(19, 20),
            banker_commission=Fraction(0),
            pair_payout=None,
            cut_card_from_end=(7, 7),
            end_rule="last-coup",
            table=TableInfo(boxes=7, players_per_box=1, tie_requires_main_bet=True),
            description="6 decks, Banker 19:20, Tie 8:1, cut before the last 7 cards, last-coup",
            source="rules-ru-casino.txt",
        ),
        RuleSet(
            name="live-8",
            decks=8,
            table=TableInfo(one_pair_bet_per_coup=True),
            description="8 decks, Banker 1:1 less 5%, Tie 8:1, one pair bet 11:1 per coup",
            source="rules-ru-live.txt",
        ),
        RuleSet(
            name="tie9-8",
            decks=8,
            banker_payout=Fraction(19, 20),
            banker_commission=Fraction(0),
            tie_payout=Fraction(9),
            pair_payout=None,
            description="8 decks, Banker 19:20, Tie 9:1, cut 16, finish-plus-one",
            source="rules-en.txt",
        ),
        RuleSet(
            name="tie9-6",
            decks=6,
            banker_payout=Fraction(19, 20),
            banker_commission=Fraction(0),
            tie_payout=Fraction(9),
            pair_payout=None,
            description="6 decks, Banker 19:20, Tie 9:1, cut 16, finish-plus-one",
            source="rules-en.txt",
        ),
        RuleSet(
            name="ez-8",
            decks=8,
            banker_commission=Fraction(0),
            ez_push=True,
            pair_payout=None,
            dragon7_payout=Fraction(40),
            panda8_payout=Fraction(25),
            description="EZ Baccarat: no commission, a Banker three-card 7 pushes; "
            "Dragon 7 40:1, Panda 8 25:1",
            source="common EZ Baccarat rules",
        ),
    )
}


def get_rules(name_or_path: str) -> RuleSet:
    """A preset by name, or a custom rule set from a ``.toml`` file path."""
    if name_or_path in PRESETS:
        return PRESETS[name_or_path]
    if name_or_path.endswith(".toml"):
        return load_rules(Path(name_or_path))
    raise RulesError(
        f"unknown rule set {name_or_path!r}; known: {', '.join(PRESETS)} "
        "(or a path to a .toml file)"
    )


def load_rules(path: Path) -> RuleSet:
    """Load a custom rule set from TOML, starting from a preset (``base = ...``)."""
    from roads.rules_file import load_rules as load

    return load(path)


def rules_from_dict(data: dict[str, Any], where: str) -> RuleSet:
    """Build a rule set from the TOML structure; errors name ``where`` and the field."""
    from roads.rules_file import rules_from_dict as build

    return build(data, where)
