"""The table page's odds panel and board: every bet of the rule set with its exact odds
(checked against the published full-shoe figures of the fixture), the roads one by one."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

from dashboard.api import stats_json
from dashboard.odds_panel import bet_odds, odds_panel
from dashboard.pages import table_body
from roads.ingest.entry import CoupEntry
from roads.odds import Composition
from roads.rules import PRESETS, get_rules
from roads.tables import Actor
from tests.dashboard.conftest import Server
from tests.dashboard.test_figures import deal_live


def _walk(component: Any) -> Iterator[Any]:
    """Every Dash component in a tree."""
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            yield from _walk(child)


def _text(component: Any) -> str:
    return " ".join(str(c.children) for c in _walk(component)
                    if isinstance(getattr(c, "children", None), str | int | float))


def _classes(tree: Any) -> list[str]:
    return [c.className for c in _walk(tree) if getattr(c, "className", None)]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_bet_of_the_rule_set_is_listed_with_its_odds(name: str) -> None:
    rules = get_rules(name)
    bets = {b.bet for b in bet_odds(rules, Composition.full(rules.decks))}
    expected = {"banker", "player", "tie"}
    if rules.pair_payout is not None:
        expected |= {"player_pair", "banker_pair"}
    if rules.dragon7_payout is not None:
        expected.add("dragon7")
    if rules.panda8_payout is not None:
        expected.add("panda8")
    assert bets == expected


#: Published full 8-deck figures (ordered 6-card sequences; DOMAIN.md, Wizard of Odds): the
#: independent yardstick of the panel's numbers.
EIGHT_DECKS = {"total": 4_998_398_275_503_360, "banker": 2_292_252_566_437_888,
               "player": 2_230_518_282_592_256, "tie": 475_627_426_473_216,
               "dragon7": 112_633_011_329_024, "panda8": 172_660_763_262_976}
PAIR = Fraction(31, 415)
EDGE_PERCENT = {"banker": 1.057906, "player": 1.235081, "tie 8:1": 14.359629,
                "tie 9:1": 4.844032, "pair 11:1": 10.361446, "ez banker": 1.018301}


def test_full_shoe_odds_match_the_published_figures() -> None:
    total = EIGHT_DECKS["total"]
    standard = {b.bet: b for b in bet_odds(get_rules("standard-8"), Composition.full(8))}
    for bet in ("banker", "player", "tie"):
        assert standard[bet].probability == pytest.approx(EIGHT_DECKS[bet] / total, rel=1e-12)
    for bet in ("player_pair", "banker_pair"):
        assert standard[bet].probability == pytest.approx(float(PAIR), rel=1e-12)
    for bet, key in (("banker", "banker"), ("player", "player"), ("tie", "tie 8:1"),
                     ("banker_pair", "pair 11:1"), ("player_pair", "pair 11:1")):
        assert 100 * standard[bet].house_edge == pytest.approx(EDGE_PERCENT[key], abs=5e-7)
    ez = {b.bet: b for b in bet_odds(get_rules("ez-8"), Composition.full(8))}
    for bet in ("dragon7", "panda8"):
        assert ez[bet].probability == pytest.approx(EIGHT_DECKS[bet] / total, rel=1e-12)
    assert 100 * ez["banker"].house_edge == pytest.approx(EDGE_PERCENT["ez banker"], abs=5e-7)
    tie9 = {b.bet: b for b in bet_odds(get_rules("tie9-8"), Composition.full(8))}
    assert 100 * tie9["tie"].house_edge == pytest.approx(EDGE_PERCENT["tie 9:1"], abs=5e-7)


def test_what_each_bet_pays_is_said_in_the_rule_set_s_terms() -> None:
    pays = {name: {b.bet: b.pays for b in bet_odds(get_rules(name), Composition.full(8))}
            for name in ("standard-8", "casino-6", "ez-8")}
    assert pays["standard-8"] == {"banker": "1:1 less 5%", "player": "1:1", "tie": "8:1",
                                  "player_pair": "11:1", "banker_pair": "11:1"}
    assert pays["casino-6"]["banker"] == "19:20"
    assert pays["ez-8"]["banker"] == "1:1 (3-card 7 pushes)"
    assert (pays["ez-8"]["dragon7"], pays["ez-8"]["panda8"]) == ("40:1", "25:1")


def test_outcome_only_shoes_show_full_shoe_odds_and_say_so() -> None:
    panel = odds_panel(get_rules("standard-6"), None)
    assert "cards not recorded: the odds of a full 6-deck shoe" in _text(panel)
    known = odds_panel(get_rules("standard-6"), Composition.after_seen(6, ["As", "Kd"]))
    assert "310 cards left in the shoe" in _text(known)


def test_table_body_puts_the_board_beside_the_odds_of_the_live_shoe(server: Server) -> None:
    deal_live(server, "ez-8", 5, 20)
    state = server.ctx.service.table_state("T1")
    stats = stats_json(server.ctx, "T1")
    body = table_body("T1", state, stats)
    top = next(c for c in body if getattr(c, "className", "") == "table-top")
    board, panel = top.children
    assert board.className == "table-board" and panel.className == "odds-panel"
    roads = [c for c in _classes(board) if c.startswith("road ")]
    assert roads == ["road big_road", "road big_eye_boy", "road small_road",
                     "road cockroach_pig", "road bead_plate"]
    rows = [c for c in _classes(panel) if c.startswith("bet ")]
    assert rows == ["bet banker", "bet player", "bet tie", "bet dragon7", "bet panda8"]
    left = stats["live_odds"]["cards_left"]
    assert f"ez-8: {left} cards left in the shoe" in _text(panel)
    dragon = next(b for b in bet_odds(get_rules("ez-8"),
                                      Composition.from_counts(stats["live_odds"]["composition"]))
                  if b.bet == "dragon7")
    assert f"{dragon.probability:.4%}" in _text(panel)


def test_an_unknown_rule_set_is_said_in_words(server: Server) -> None:
    service, ana = server.ctx.service, Actor.user("ana", "dealer")
    service.open_shoe(ana, "T1", "S1")
    service.enter_coup(ana, "T1", CoupEntry(outcome="B"))
    state = server.ctx.service.table_state("T1")
    renamed = dataclasses.replace(state, rules="club-6")
    body = table_body("T1", renamed, stats_json(server.ctx, "T1"))
    assert "unknown rule set 'club-6'" in _text(body[1])
