"""Exact odds: every integer of the shared fixture, and agreement with a naive enumeration."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.odds import (
    CORE_STATS,
    STATS,
    Composition,
    CompositionError,
    effects_of_removal,
    exact_odds,
    ways,
    ways_batch,
)
from roads.rules import get_rules
from tests.naive_odds import naive_ways


@pytest.mark.parametrize("decks", ["8", "6", "4", "2", "1"])
def test_banker_player_tie_integers(exact_fixture: dict[str, Any], decks: str) -> None:
    expected = exact_fixture["decks"][decks]
    odds = exact_odds(Composition.full(int(decks)))
    for key in ("banker", "player", "tie"):
        assert odds.ways[key] == expected[key]
    assert odds.total == expected["total"]


@pytest.mark.parametrize("decks", ["8", "6"])
def test_cards_per_coup(exact_fixture: dict[str, Any], decks: str) -> None:
    expected = exact_fixture["decks"][decks]["cards_per_coup"]
    odds = exact_odds(Composition.full(int(decks)))
    assert {n: odds.ways[f"cards_{n}"] for n in ("4", "5", "6")} == expected


def test_eight_deck_naturals_and_side_outcomes(exact_fixture: dict[str, Any]) -> None:
    expected = exact_fixture["decks"]["8"]
    w = exact_odds(Composition.full(8)).ways
    assert w["banker_natural_8"] == expected["banker_natural_8"]
    assert w["banker_natural_9"] == expected["banker_natural_9"]
    assert w["at_least_one_natural"] == expected["at_least_one_natural"]
    assert w["dragon7"] == expected["dragon7_banker_wins_with_three_card_7"]
    assert w["panda8"] == expected["panda8_player_wins_with_three_card_8"]


@pytest.mark.parametrize("decks", ["8", "6", "1"])
def test_pair_probability(exact_fixture: dict[str, Any], decks: str) -> None:
    expected = Fraction(exact_fixture["decks"][decks]["pair_probability"])
    assert exact_odds(Composition.full(int(decks))).pair_probability == expected


@pytest.mark.parametrize(
    ("decks", "rules", "key", "fixture_key"),
    [
        ("8", "standard-8", "banker", "banker_5pct_commission"),
        ("8", "standard-8", "player", "player"),
        ("8", "standard-8", "tie", "tie_8_to_1"),
        ("8", "tie9-8", "tie", "tie_9_to_1"),
        ("8", "standard-8", "player_pair", "pair_11_to_1"),
        ("8", "ez-8", "banker", "ez_banker_dragon7_push"),
        ("6", "standard-6", "banker", "banker_5pct_commission"),
        ("6", "standard-6", "player", "player"),
        ("6", "standard-6", "tie", "tie_8_to_1"),
        ("6", "tie9-6", "tie", "tie_9_to_1"),
        ("6", "standard-6", "banker_pair", "pair_11_to_1"),
        ("6", "casino-6", "banker", "banker_5pct_commission"),  # 19:20 == 1:1 less 5%
    ],
)
def test_house_edges(exact_fixture: dict[str, Any], decks: str, rules: str, key: str,
                     fixture_key: str) -> None:
    expected = exact_fixture["decks"][decks]["house_edge_percent"][fixture_key]
    edge = exact_odds(Composition.full(int(decks))).house_edges(get_rules(rules))[key]
    assert round(float(edge) * 100, 6) == pytest.approx(expected, abs=1.5e-6)


def test_effect_of_removal_matches_fixture(exact_fixture: dict[str, Any]) -> None:
    effects = effects_of_removal(Composition.full(8), get_rules("standard-8"))
    for value, delta in exact_fixture["effect_of_removal_8_decks_delta_p_player"].items():
        assert effects[value]["delta_p_player"] == pytest.approx(delta, rel=1e-5)


# Compositions of up to a few hundred cards, some values exhausted.
compositions = st.lists(st.integers(min_value=0, max_value=40), min_size=10, max_size=10).filter(
    lambda c: sum(c) >= 6
)


@settings(max_examples=12, deadline=None)
@given(compositions)
def test_fast_engine_equals_naive_enumeration(counts: list[int]) -> None:
    fast = ways(counts)
    slow = naive_ways(counts)
    assert {k: fast[k] for k in ("banker", "player", "tie")} == {
        k: slow[k] for k in ("banker", "player", "tie")}
    assert fast["cards_4"] + fast["cards_5"] + fast["cards_6"] == slow["total"]


@settings(max_examples=25, deadline=None)
@given(compositions)
def test_internal_consistency(counts: list[int]) -> None:
    w = ways(counts, detail=True)
    n = sum(counts)
    total = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    assert w["banker"] + w["player"] + w["tie"] == total
    assert sum(w[f"player_total_{t}"] for t in range(10)) == total
    assert sum(w[f"banker_total_{t}"] for t in range(10)) == total
    assert w["dragon7"] <= w["banker"] and w["panda8"] <= w["player"]


def test_batch_equals_single() -> None:
    rng = np.random.default_rng(5)
    full = Composition.full(8).values
    batch = np.array([full - rng.integers(0, 20, size=10) for _ in range(40)])
    result = ways_batch(batch)
    detailed = ways_batch(batch[:5], detail=True)
    assert result.shape == (40, len(CORE_STATS))
    for row, counts in zip(result, batch, strict=True):
        single = ways(counts)
        assert [single[s] for s in CORE_STATS] == row.tolist()
    for row, counts in zip(detailed, batch[:5], strict=True):
        single = ways(counts, detail=True)
        assert [single[s] for s in STATS] == row.tolist()


def test_large_shoes_use_exact_integer_paths() -> None:
    """9 and 16 decks exceed float64's exact range; 100 decks exceed int64."""
    for decks in (9, 16, 100):
        w = exact_odds(Composition.full(decks)).ways
        n = 52 * decks
        assert w["banker"] + w["player"] + w["tie"] == (
            n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5))
    # Scaling all counts preserves no exact ratio, but the naive engine agrees at 9 decks.
    nine = [36 * 4] + [36] * 9
    slow = naive_ways(nine)
    assert ways(nine)["banker"] == slow["banker"]


def test_after_seen_and_errors() -> None:
    comp = Composition.after_seen(8, ["As", "Ah", "Kd"])
    assert comp.ranks[0] == 30 and comp.ranks[12] == 31 and comp.cards == 413
    with pytest.raises(CompositionError, match="card As seen 2 times, but 1 deck"):
        Composition.after_seen(1, ["As", "As"])
    with pytest.raises(CompositionError, match="negative count"):
        Composition.from_counts({"A": -1})
    with pytest.raises(CompositionError, match="unknown rank"):
        Composition.from_counts({"Z": 3})
    # more of a rank than sixteen decks hold: refused, not an overflow (or a wrap-round
    # into "negative count") deep in the kernel
    for counts in ({"A": 65, "*": 4}, {"*": 2**63 - 1}, {"*": 10**20}):
        with pytest.raises(CompositionError, match="more than a shoe holds"):
            Composition.from_counts(counts)
    assert Composition.from_counts({"*": 64}).cards == 13 * 64  # (sixteen decks: the most)
    with pytest.raises(CompositionError, match="needs 6 cards"):
        exact_odds(Composition.from_counts({"A": 5}))
    with pytest.raises(CompositionError, match="no card of value 1"):
        Composition.from_counts({"K": 10}).without(1)
