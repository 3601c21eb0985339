from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roads.cards import (
    CARD_CODES,
    CardError,
    hand_total,
    is_pair,
    parse_card,
    parse_cards,
    point_value,
)


@given(st.sampled_from(CARD_CODES))
def test_canonical_codes_parse_to_themselves(code: str) -> None:
    assert parse_card(code) == code


@pytest.mark.parametrize(
    ("token", "expected"),
    [("10h", "Th"), ("10H", "Th"), ("td", "Td"), ("AS", "As"), ("a♠", "As"), ("K♥", "Kh"),
     ("Q♦", "Qd"), ("9♣", "9c"), (" 7s ", "7s"), ("J♤", "Js")],
)
def test_lenient_forms(token: str, expected: str) -> None:
    assert parse_card(token) == expected


@pytest.mark.parametrize("token", ["1s", "11h", "Xs", "A", "s", "", "10", "Ahh", "Zz"])
def test_bad_tokens_are_named(token: str) -> None:
    with pytest.raises(CardError, match="not a card") as info:
        parse_card(token)
    assert repr(token) in str(info.value)


def test_parse_cards_splits_on_spaces_and_commas() -> None:
    assert parse_cards("As, 10d 9c;kH") == ["As", "Td", "9c", "Kh"]
    with pytest.raises(CardError, match="'1x'"):
        parse_cards("As 1x")


def test_point_values_and_totals() -> None:
    values = [point_value(r + "s") for r in "A23456789TJQK"]
    assert values == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    assert hand_total(["9h", "8c"]) == 7
    assert hand_total(["Kh", "Qc"]) == 0
    assert hand_total(["7s", "5d", "2c"]) == 4


def test_pairs_are_rank_level() -> None:
    assert is_pair("Td", "Ts")
    assert not is_pair("Td", "Js")  # same point value, different rank
    assert is_pair("5h", "5h")
