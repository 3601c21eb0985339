"""The next coup's exact odds of every bet a table's rule set offers, as a panel of the table
page (``/tables/<id>``): what each bet pays, the chance it wins and its house edge.

Pure: a rule set and a shoe composition in, rows and Dash components out. The figures come
from :mod:`roads.odds` (exact enumeration), never from a simulation; they are information,
not advice — no betting system changes the house edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dash import html

from roads.odds import Composition, exact_odds
from roads.rules import RuleSet, ratio

BET_NAMES = {"banker": "Banker", "player": "Player", "tie": "Tie",
             "player_pair": "Player pair", "banker_pair": "Banker pair",
             "dragon7": "Dragon 7", "panda8": "Panda 8"}


@dataclass(frozen=True, slots=True)
class BetOdds:
    """One bet: what it pays, the exact chance it wins the next coup, its house edge."""

    bet: str
    name: str
    pays: str
    probability: float
    house_edge: float


def _pays(rules: RuleSet, bet: str) -> str:
    if bet == "banker":
        pays = ratio(rules.banker_payout)
        if rules.banker_commission:
            pays += f" less {float(rules.banker_commission):.0%}"
        return pays + (" (3-card 7 pushes)" if rules.ez_push else "")
    payout = {"player": rules.player_payout, "tie": rules.tie_payout,
              "player_pair": rules.pair_payout, "banker_pair": rules.pair_payout,
              "dragon7": rules.dragon7_payout, "panda8": rules.panda8_payout}[bet]
    if payout is None:
        raise ValueError(f"{rules.name} does not offer {bet}")
    return ratio(payout)


def bet_odds(rules: RuleSet, composition: Composition) -> list[BetOdds]:
    """Every bet the rule set offers, in the order of the layout (main bets, then sides)."""
    odds = exact_odds(composition)
    wins: dict[str, Fraction] = {
        "banker": odds.probability("banker"), "player": odds.probability("player"),
        "tie": odds.probability("tie"), "player_pair": odds.pair_probability,
        "banker_pair": odds.pair_probability, "dragon7": odds.probability("dragon7"),
        "panda8": odds.probability("panda8")}
    return [BetOdds(bet, BET_NAMES[bet], _pays(rules, bet), float(wins[bet]), float(edge))
            for bet, edge in odds.house_edges(rules).items()]


def odds_panel(rules: RuleSet, composition: Composition | None) -> html.Section:
    """The panel: a table of every bet. ``composition`` None means the coups carry no cards
    (outcome-only entry), so the odds shown are those of a full shoe, and the panel says so."""
    known = composition is not None
    shoe = composition if composition is not None else Composition.full(rules.decks)
    rows: list[Any] = [html.Tr([html.Th("bet"), html.Th("pays"), html.Th("wins"),
                                html.Th("house edge")])]
    rows += [html.Tr([html.Th(b.name, className=f"bet-{b.bet}"), html.Td(b.pays),
                      html.Td(f"{b.probability:.4%}", className="number"),
                      html.Td(f"{b.house_edge:.4%}", className="number")],
                     className=f"bet {b.bet}")
             for b in bet_odds(rules, shoe)]
    left = (f"{shoe.cards} cards left in the shoe" if known else
            f"cards not recorded: the odds of a full {rules.decks}-deck shoe")
    return html.Section([
        html.H3("Next coup — exact odds"),
        html.P(f"{rules.name}: {left}", className="odds-shoe"),
        html.Table(rows, className="odds"),
        html.P("Information, not advice: no betting system changes the house edge.",
               className="note"),
    ], className="odds-panel")
