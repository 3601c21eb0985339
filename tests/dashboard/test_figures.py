"""The dashboard's charts from real reports: card-level and outcome-only shoes."""

from __future__ import annotations

from dashboard.api import stats_json
from dashboard.figures import difference_figure, odds_figure, runs_figure, shares_figure
from dashboard.pages import table_body
from roads.engine import DealtShoe, deal_shoe
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.tables import Actor
from tests.dashboard.conftest import Server


def test_outcome_only_shoe_charts_leave_out_pairs_and_naturals(server: Server) -> None:
    service, ana = server.ctx.service, Actor.user("ana", "dealer")
    service.open_shoe(ana, "T1", "S1")
    for o in "BPPBTB":
        service.enter_coup(ana, "T1", CoupEntry(outcome=o))
    stats = stats_json(server.ctx, "T1")
    fig = shares_figure(stats["statistics"])
    assert list(fig.data[0].x) == ["Banker", "Player", "Tie"]
    assert list(fig.data[0].y) == [3 / 6, 2 / 6, 1 / 6]
    assert stats["live_odds"] is None
    assert difference_figure(list("BPPBTB")).data[0].y == (1, 0, -1, 0, 0, 1)
    body = table_body("T1", server.ctx.service.table_state("T1"), stats)
    assert len(body) > 3


def deal_live(server: Server, rules: str, seed: int, coups: int) -> DealtShoe:
    """Open a shoe of ``rules`` at T1 with its burn cards and enter its first coups' cards."""
    shoe = deal_shoe(get_rules(rules), seed)
    service, ana = server.ctx.service, Actor.user("ana", "dealer")
    service.open_shoe(ana, "T1", "S1", rules, list(shoe.burn_cards))
    for player, banker in shoe.coups[:coups]:
        service.enter_coup(ana, "T1", CoupEntry(player_cards=player, banker_cards=banker))
    return shoe


def test_card_level_shoe_charts_include_live_odds(server: Server) -> None:
    shoe = deal_live(server, "standard-8", 11, 30)
    stats = stats_json(server.ctx, "T1")
    assert len(shares_figure(stats["statistics"]).data[0].x) == 6
    runs = runs_figure(stats["statistics"])
    assert sum(sum(t.y) for t in runs.data if t.type == "bar") == \
        stats["statistics"]["streaks"]["runs"]
    odds = odds_figure(stats["live_odds"])
    used = sum(len(p) + len(b) for p, b in shoe.coups[:30]) + len(shoe.burn_cards)
    assert sum(odds.data[0].y) == 416 - used
    # A shoe still being dealt is not judged by the end-of-shoe rule.
    assert not [f for f in stats["integrity"] if "end" in f["check"]]


def test_titles_are_short_and_legends_sit_under_the_plot(server: Server) -> None:
    deal_live(server, "standard-8", 3, 25)
    stats = stats_json(server.ctx, "T1")
    figures = [shares_figure(stats["statistics"]), runs_figure(stats["statistics"]),
               difference_figure([c["outcome"] for c in server.ctx.service.table_state(
                                                                    "T1").coups]),
               odds_figure(stats["live_odds"])]
    for fig in figures:
        title = fig.layout.title
        # A phone-width chart holds ~40 characters of title and ~55 of subtitle.
        assert 0 < len(title.text) <= 24 and 0 < len(title.subtitle.text) <= 55, title.text
        # Plotly's title automargin left the bars' clip region behind: the top margin is
        # sized for the two lines instead.
        assert title.automargin is None and fig.layout.margin.t >= 60
        legend = fig.layout.legend
        assert legend.orientation == "h" and legend.y < 0 and legend.yanchor == "top"
    # The odds are the odds panel's now, never a title cut off before Tie.
    assert "Tie" not in odds_figure(stats["live_odds"]).layout.title.text
