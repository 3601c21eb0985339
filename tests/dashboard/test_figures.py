"""The dashboard's charts from real reports: card-level and outcome-only shoes."""

from __future__ import annotations

from dashboard.api import stats_json
from dashboard.figures import difference_figure, odds_figure, runs_figure, shares_figure
from dashboard.pages import table_body
from roads.engine import deal_shoe
from roads.rules import get_rules
from roads.store.live import CoupEntry, LiveTables
from roads.store.tables import table_state
from tests.dashboard.conftest import Server


def test_outcome_only_shoe_charts_leave_out_pairs_and_naturals(server: Server) -> None:
    live = LiveTables(server.ctx.service.journal)
    live.open_shoe("T1", "S1", "standard-8", "ana")
    for o in "BPPBTB":
        live.enter_coup("T1", CoupEntry(outcome=o), "ana")
    stats = stats_json(server.ctx, table_state(server.ctx.service.store, "T1"))
    fig = shares_figure(stats["statistics"])
    assert list(fig.data[0].x) == ["Banker", "Player", "Tie"]
    assert list(fig.data[0].y) == [3 / 6, 2 / 6, 1 / 6]
    assert stats["live_odds"] is None
    assert difference_figure(list("BPPBTB")).data[0].y == (1, 0, -1, 0, 0, 1)
    body = table_body("T1", table_state(server.ctx.service.store, "T1"), stats)
    assert len(body) > 3


def test_card_level_shoe_charts_include_live_odds(server: Server) -> None:
    shoe = deal_shoe(get_rules("standard-8"), 11)
    live = LiveTables(server.ctx.service.journal)
    live.open_shoe("T1", "S1", "standard-8", "ana", list(shoe.burn_cards))
    for player, banker in shoe.coups[:30]:
        live.enter_coup("T1", CoupEntry(player_cards=player, banker_cards=banker), "ana")
    stats = stats_json(server.ctx, table_state(server.ctx.service.store, "T1"))
    assert len(shares_figure(stats["statistics"]).data[0].x) == 6
    runs = runs_figure(stats["statistics"])
    assert sum(sum(t.y) for t in runs.data if t.type == "bar") == \
        stats["statistics"]["streaks"]["runs"]
    odds = odds_figure(stats["live_odds"])
    used = sum(len(p) + len(b) for p, b in shoe.coups[:30]) + len(shoe.burn_cards)
    assert sum(odds.data[0].y) == 416 - used
    # A shoe still being dealt is not judged by the end-of-shoe rule.
    assert not [f for f in stats["integrity"] if "end" in f["check"]]
