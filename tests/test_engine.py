"""The shoe engine: burn, cut card, end rules, inventory, reproducibility, fairness."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from roads.cards import CARD_CODES
from roads.engine import deal_batch, deal_shoe, play_order, shoe_seeds
from roads.odds import Composition, exact_odds
from roads.rules import get_rules
from roads.tableau import OUTCOMES, deal_coup

STANDARD = get_rules("standard-8")
CASINO = get_rules("casino-6")


def _filler(n: int) -> list[str]:
    """Cards dealt as 4-card coups: Player 3+3 = 6 stands, Banker 4+3 = 7 stands."""
    cycle = ["3s", "4s", "3h", "3d"]
    return [cycle[i % 4] for i in range(n)]


def test_burn_uses_the_first_card_value_with_tens_for_faces() -> None:
    for first, burned in (("As", 1), ("7h", 7), ("Td", 10), ("Kc", 10), ("9s", 9)):
        order = [first] + [f"{r}h" for r in "23456789AQ"] + _filler(60)
        shoe = play_order(STANDARD, order, cut_from_end=20)
        assert shoe.burn_cards == tuple(order[: 1 + burned])
        # The first coup starts right after the burned cards.
        assert shoe.coups[0][0][0] == order[1 + burned]


def test_no_burn_rule() -> None:
    from dataclasses import replace

    rules = replace(STANDARD, name="noburn", burn_rule="none")
    order = _filler(60)
    shoe = play_order(rules, order, cut_from_end=20)
    assert shoe.burn_cards == ()
    assert shoe.coups[0] == (("3s", "3h"), ("4s", "3d"))


def _four_card_shoe(n_cards: int) -> list[str]:
    return ["As", "Kh", *_filler(n_cards - 2)]  # burn 1 card after the exposed ace


def test_finish_plus_one_cut_card_during_a_coup() -> None:
    # 2 burned, then 4-card coups at positions 2, 6, 10, ...; cut index 12 falls inside
    # no coup start: coup at 10 uses 10..13 -> cut card appears during it; one more coup.
    order = _four_card_shoe(40)
    shoe = play_order(STANDARD, order, cut_from_end=40 - 12)
    assert shoe.cut_card_index == 12
    starts = [2 + 4 * i for i in range(len(shoe.coups))]
    assert starts[-2] < 12 <= starts[-2] + 3  # the coup the cut card came out in
    assert len(shoe.coups) == 4  # coups at 2, 6, 10 and exactly one more at 14


def test_finish_plus_one_cut_card_before_a_coup() -> None:
    # Cut index 10 is exactly where a coup starts: that coup is the last.
    shoe = play_order(STANDARD, _four_card_shoe(40), cut_from_end=40 - 10)
    assert len(shoe.coups) == 3  # coups at 2, 6 and 10


def test_last_coup_rule() -> None:
    # The coup during which the cut card comes out is the last one.
    shoe = play_order(CASINO, _four_card_shoe(40), cut_from_end=40 - 12)
    assert len(shoe.coups) == 3  # 2, 6, 10 (cards 10..13 pass the cut at 12)
    # Cut card lying before a coup's first card: that coup (it comes out with it) is last.
    shoe = play_order(CASINO, _four_card_shoe(40), cut_from_end=40 - 10)
    assert len(shoe.coups) == 3  # 2, 6, 10
    shoe = play_order(CASINO, _four_card_shoe(40), cut_from_end=40 - 9)
    assert len(shoe.coups) == 2  # coup at 6 uses 6..9 and passes the cut at 9


@pytest.mark.parametrize("rules_name", ["standard-8", "casino-6", "ez-8", "tie9-6"])
def test_inventory_and_coups_in_every_shoe(rules_name: str) -> None:
    rules = get_rules(rules_name)
    for seed in range(5):
        shoe = deal_shoe(rules, seed)
        counts = Counter(shoe.order)
        assert set(counts) == set(CARD_CODES)
        assert set(counts.values()) == {rules.decks}
        dealt = [c for p, b in shoe.coups for c in (*p, *b)]
        used = len(shoe.burn_cards) + len(dealt)
        # Burn, then every coup's cards, in shoe order; the remainder is what was left.
        flat: list[str] = list(shoe.burn_cards)
        for player, banker in shoe.coups:
            flat += [player[0], banker[0], player[1], banker[1]]
            flat += list(player[2:]) + list(banker[2:])
        assert tuple(flat) == shoe.order[:used]
        assert Counter(flat) + Counter(shoe.order[used:]) == counts
        for player, banker in shoe.coups:
            coup = deal_coup([player[0], banker[0], player[1], banker[1],
                              *player[2:], *banker[2:]])
            assert (coup.player_cards, coup.banker_cards) == (player, banker)
        lo, _hi = rules.cut_card_from_end
        assert shoe.cut_card_index == rules.cards - lo
        last_start = used - len(shoe.coups[-1][0]) - len(shoe.coups[-1][1])
        if rules.end_rule == "finish-plus-one":
            assert last_start >= shoe.cut_card_index
            prev_start = last_start - len(shoe.coups[-2][0]) - len(shoe.coups[-2][1])
            assert prev_start < shoe.cut_card_index
        else:
            assert used - 1 >= shoe.cut_card_index > last_start - 1


def test_reproducible_and_independent_of_batching() -> None:
    seeds = shoe_seeds(42, 0, 300)
    whole = deal_batch(STANDARD, seeds)
    again = deal_batch(STANDARD, shoe_seeds(42, 0, 300))
    assert np.array_equal(whole.cards, again.cards)
    assert np.array_equal(whole.shoes, again.shoes)
    part = deal_batch(STANDARD, shoe_seeds(42, 100, 50))
    assert np.array_equal(part.shoes, whole.shoes[100:150])
    first = deal_shoe(STANDARD, int(seeds[7]))
    assert first.order == tuple(CARD_CODES[c] for c in whole.shoes[7])
    other = deal_batch(STANDARD, shoe_seeds(43, 0, 300))
    assert not np.array_equal(other.shoes, whole.shoes)


def test_cut_card_range_is_used() -> None:
    from dataclasses import replace

    rules = replace(STANDARD, name="cut-range", cut_card_from_end=(14, 16))
    batch = deal_batch(rules, shoe_seeds(1, 0, 600))
    assert set((rules.cards - batch.info[:, 2]).tolist()) == {14, 15, 16}


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_any_seed_deals_a_valid_shoe(seed: int) -> None:
    shoe = deal_shoe(get_rules("casino-6"), seed)
    assert sorted(Counter(shoe.order).values()) == [6] * 52
    assert 40 <= len(shoe.coups) <= 80


def test_a_million_coups_fit_the_exact_probabilities() -> None:
    """Chi-square of B/P/T and of cards per coup over 10^6 simulated coups (fixed seed)."""
    batch = deal_batch(STANDARD, shoe_seeds(20261130, 0, 12400))
    outcomes = batch.result[:, 2]
    assert len(outcomes) >= 1_000_000
    odds = exact_odds(Composition.full(8))
    n = len(outcomes)
    observed = np.bincount(outcomes, minlength=3)
    expected = [float(odds.probability(s)) * n for s in ("banker", "player", "tie")]
    assert chisquare(observed, expected).pvalue > 0.01
    # Cards per coup over whole shoes drift slightly from the full-shoe figure (the
    # composition changes as a shoe is dealt), so compare only loosely.
    cards = 4 + (batch.cards[:, 2] != 255) + (batch.cards[:, 5] != 255)
    shares = np.bincount(cards, minlength=7)[4:] / n
    full = [odds.ways[f"cards_{k}"] / odds.total for k in (4, 5, 6)]
    assert np.allclose(shares, full, atol=0.003)
    assert OUTCOMES == ("B", "P", "T")
