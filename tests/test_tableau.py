"""The tableau, checked exhaustively against the table printed in rules-el.txt."""

from __future__ import annotations

import itertools

from roads.tableau import banker_draws, deal_coup, expected_hands, player_draws
from tests.naive_odds import el_banker_draws


def test_banker_rule_matches_the_printed_table_in_every_cell() -> None:
    for banker_total in range(8):
        for third in [None, *range(10)]:
            assert banker_draws(banker_total, third) == el_banker_draws(banker_total, third), (
                banker_total, third)


def test_player_draws_on_0_to_5_only() -> None:
    assert [player_draws(t) for t in range(8)] == [True] * 6 + [False] * 2


def _card(value: int, suit: str = "s") -> str:
    return ("T" if value == 0 else "A" if value == 1 else str(value)) + suit


def test_every_value_sequence_follows_the_rules() -> None:
    """All 10^6 value sequences: draws, totals and winner agree with the printed rules."""
    for p1, b1, p2, b2 in itertools.product(range(10), repeat=4):
        for c5, c6 in ((0, 0), (4, 7), (8, 3), (6, 9)):
            cards = [_card(v, s) for v, s in zip((p1, b1, p2, b2, c5, c6), "shdcsh", strict=True)]
            coup = deal_coup(cards)
            pt, bt = (p1 + p2) % 10, (b1 + b2) % 10
            natural = pt >= 8 or bt >= 8
            p_draw = not natural and pt <= 5
            b_draw = not natural and el_banker_draws(bt, c5 if p_draw else None)
            assert len(coup.player_cards) == 2 + p_draw
            assert len(coup.banker_cards) == 2 + b_draw
            if p_draw:
                pt = (pt + c5) % 10
            if b_draw:
                bt = (bt + (c6 if p_draw else c5)) % 10
            assert (coup.player_total, coup.banker_total) == (pt, bt)
            assert coup.outcome == ("B" if bt > pt else "P" if pt > bt else "T")
            assert coup.natural == natural


def test_pairs_naturals_and_replay() -> None:
    coup = deal_coup(["Td", "9s", "Ts", "Kh"])
    assert coup.player_pair and not coup.banker_pair
    assert coup.natural and coup.outcome == "B" and coup.banker_total == 9
    replay = expected_hands(["Td", "Ts"], ["9s", "Kh"])
    assert replay == coup
    # The Player drew illegally on 6: the replay takes no third card for the Player.
    replay = expected_hands(["3d", "3s", "5h"], ["Ts", "Kh"])
    assert replay.player_cards == ("3d", "3s")
    assert replay.banker_cards == ("Ts", "Kh", "5h")
