"""The dashboard's charts from real reports: card-level and outcome-only shoes."""

from __future__ import annotations

from dashboard.api import stats_json
from dashboard.figures import difference_figure, odds_figure, runs_figure, shares_figure
from dashboard.pages import table_body
from roads.engine import deal_shoe
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


def test_card_level_shoe_charts_include_live_odds(server: Server) -> None:
    shoe = deal_shoe(get_rules("standard-8"), 11)
    service, ana = server.ctx.service, Actor.user("ana", "dealer")
    service.open_shoe(ana, "T1", "S1", burn_cards=list(shoe.burn_cards))
    for player, banker in shoe.coups[:30]:
        service.enter_coup(ana, "T1", CoupEntry(player_cards=player, banker_cards=banker))
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
