from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import pytest

from roads.rules import PRESETS, RulesError, get_rules, load_rules

# The rule-set table of DOMAIN.md: decks, Banker net, Tie pays, pairs, cut, end rule.
DOMAIN_TABLE = {
    "casino-6": (6, Fraction(19, 20), 8, None, 7, "last-coup"),
    "live-8": (8, Fraction(19, 20), 8, 11, 16, "finish-plus-one"),
    "tie9-6": (6, Fraction(19, 20), 9, None, 16, "finish-plus-one"),
    "tie9-8": (8, Fraction(19, 20), 9, None, 16, "finish-plus-one"),
    "standard-8": (8, Fraction(19, 20), 8, 11, 16, "finish-plus-one"),
    "standard-6": (6, Fraction(19, 20), 8, 11, 16, "finish-plus-one"),
    "ez-8": (8, Fraction(1), 8, None, 16, "finish-plus-one"),
}


@pytest.mark.parametrize("name", sorted(DOMAIN_TABLE))
def test_presets_match_the_domain_table(name: str) -> None:
    decks, banker_net, tie, pair, cut, end = DOMAIN_TABLE[name]
    rules = get_rules(name)
    assert rules.decks == decks
    assert rules.banker_net == banker_net
    assert rules.tie_payout == tie
    assert rules.pair_payout == (None if pair is None else Fraction(pair))
    assert rules.cut_card_from_end == (cut, cut)
    assert rules.end_rule == end
    assert rules.player_payout == 1  # no commission on Player, whatever rules-en.txt says


def test_preset_metadata() -> None:
    casino = get_rules("casino-6")
    assert casino.table.boxes == 7 and casino.table.tie_requires_main_bet
    assert get_rules("live-8").table.one_pair_bet_per_coup
    ez = get_rules("ez-8")
    assert ez.ez_push and ez.dragon7_payout == 40 and ez.panda8_payout == 25
    assert set(PRESETS) == set(DOMAIN_TABLE)


def test_rule_sets_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_rules("standard-8").decks = 6  # type: ignore[misc]


def test_unknown_name() -> None:
    with pytest.raises(RulesError, match="unknown rule set 'nope'"):
        get_rules("nope")


def test_custom_toml(tmp_path: Path) -> None:
    path = tmp_path / "club.toml"
    path.write_text(
        'name = "club-6"\nbase = "standard-6"\n'
        '[payouts]\nbanker = "19:20"\nbanker_commission = "0%"\ntie = "9:1"\npair = false\n'
        '[shoe]\ncut_card_from_end = [14, 16]\n'
        '[table]\nmin_bet = 10\nmax_bet = 5000\ncurrency = "EUR"\n'
    )
    rules = load_rules(path)
    assert rules.name == "club-6" and rules.decks == 6
    assert rules.banker_net == Fraction(19, 20) and rules.tie_payout == 9
    assert rules.pair_payout is None
    assert rules.cut_card_from_end == (14, 16)
    assert rules.table.max_bet == 5000 and rules.table.currency == "EUR"
    assert get_rules(str(path)) == rules
    assert rules.to_dict()["payouts"]["banker"] == "19:20"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('name = "x"\ndecks = 0\n', "decks must be between 1 and 16"),
        ('name = "x"\ndecks = "eight"\n', "decks must be an integer"),
        ('name = "x"\n[payouts]\ntie = "eight"\n', "payouts.tie: cannot read 'eight'"),
        ('name = "x"\n[payouts]\nbanker_commission = "120%"\n', "banker_commission"),
        ('name = "x"\n[shoe]\nend_rule = "sometimes"\n', "end_rule must be one of"),
        ('name = "x"\n[shoe]\ncut_card_from_end = 3\n', "at least 11"),
        ('name = "x"\n[shoe]\ncut_card_from_end = [16, 14]\n', "reversed"),
        ('name = "x"\ncolour = "red"\n', "unknown field colour"),
        ('name = "x"\n[payouts]\ncolour = "red"\n', "unknown field payouts.colour"),
        ('decks = 8\n', "missing field name"),
        ('name = "Bad Name"\n', "name must be lower-case"),
        ('name = "x"\nbase = "nope"\n', "base: unknown rule set"),
        ("name = \n", "invalid TOML"),
    ],
)
def test_invalid_toml_names_file_and_field(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(RulesError, match=message) as info:
        load_rules(path)
    assert str(path) in str(info.value)


def test_missing_file() -> None:
    with pytest.raises(RulesError, match="no such rule-set file"):
        get_rules("/nonexistent/rules.toml")
