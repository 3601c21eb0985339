"""Exact per-coup probabilities for a rule set's full shoe, from the exact-odds engine.

Statistics compare what a slice shows against these, never against uniform or hard-coded
figures: a 6-deck and an 8-deck table expect different Banker shares.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from roads.odds import Composition, exact_odds
from roads.rules import PRESETS, RuleSet


@dataclass(frozen=True)
class Expectation:
    """Probabilities of one coup dealt from a full shoe of ``decks`` decks."""

    decks: int
    outcome: dict[str, float]  # B, P, T
    pair: float  # Player pair (and, equally, Banker pair)
    natural: float  # at least one natural
    cards: dict[int, float]  # 4, 5, 6 cards used
    player_total: list[float]  # final Player total 0..9
    banker_total: list[float]


@functools.cache
def expectation_for_decks(decks: int) -> Expectation:
    odds = exact_odds(Composition.full(decks), detail=True)
    w, total = odds.ways, odds.total
    return Expectation(
        decks=decks,
        outcome={"B": w["banker"] / total, "P": w["player"] / total, "T": w["tie"] / total},
        pair=float(odds.pair_probability),
        natural=w["at_least_one_natural"] / total,
        cards={n: w[f"cards_{n}"] / total for n in (4, 5, 6)},
        player_total=[w[f"player_total_{t}"] / total for t in range(10)],
        banker_total=[w[f"banker_total_{t}"] / total for t in range(10)],
    )


def shoe_rules(rules_name: str | None, decks: int | None = None) -> RuleSet:
    """The rule set a stored shoe names: a preset by name; a custom set (known to the shoe
    only by its name and decks) as standard-8 with those decks, which is what the
    statistics and integrity checks use of it (decks, end rule)."""
    if rules_name in PRESETS:
        return PRESETS[rules_name]
    base = PRESETS["standard-8"]
    return replace(base, name=rules_name or base.name, decks=decks or base.decks)


def expectation(rules_name: str | None, decks: int | None = None) -> Expectation:
    """The expectation of a rule set by name (standard-8 when a shoe names none)."""
    return expectation_for_decks(shoe_rules(rules_name, decks).decks)
