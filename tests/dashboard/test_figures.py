"""The dashboard's charts from real reports: card-level and outcome-only shoes."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import pytest

from dashboard.api import stats_json
from dashboard.figures import (
    difference_figure,
    odds_figure,
    runs_figure,
    share_items,
    shares_figure,
)
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
    fig = go.Figure(shares_figure(stats["statistics"]))
    assert list(fig.data[0].x) == ["Banker", "Player", "Tie"]
    assert list(fig.data[0].y) == [3 / 6, 2 / 6, 1 / 6]
    assert stats["live_odds"] is None
    assert go.Figure(difference_figure(list("BPPBTB"))).data[0].y == (1, 0, -1, 0, 0, 1)
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
    assert len(shares_figure(stats["statistics"])["data"][0]["x"]) == 6
    runs = go.Figure(runs_figure(stats["statistics"]))
    assert sum(sum(t.y) for t in runs.data if t.type == "bar") == \
        stats["statistics"]["streaks"]["runs"]
    odds = go.Figure(odds_figure(stats["live_odds"]))
    used = sum(len(p) + len(b) for p, b in shoe.coups[:30]) + len(shoe.burn_cards)
    assert sum(odds.data[0].y) == 416 - used
    # A shoe still being dealt is not judged by the end-of-shoe rule.
    assert not [f for f in stats["integrity"] if "end" in f["check"]]


def test_titles_are_short_and_legends_sit_under_the_plot(server: Server) -> None:
    deal_live(server, "standard-8", 3, 25)
    stats = stats_json(server.ctx, "T1")
    figures = [go.Figure(f) for f in (
        shares_figure(stats["statistics"]), runs_figure(stats["statistics"]),
        difference_figure([c["outcome"] for c in server.ctx.service.table_state("T1").coups]),
        odds_figure(stats["live_odds"]))]
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
    assert "Tie" not in odds_figure(stats["live_odds"])["layout"]["title"]["text"]


# -- the oracle: the charts as plotly's figure objects built them until 2 Dec 2026 ----------
_LAYOUT: dict[str, Any] = {
    "margin": {"l": 48, "r": 12, "t": 64, "b": 16}, "height": 340, "autosize": True,
    "template": "plotly_white", "font": {"size": 13},
    "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.22, "yanchor": "top"},
    "xaxis": {"automargin": True}, "yaxis": {"automargin": True},
}
COLOURS = {"banker": "#d0212b", "player": "#1f5fd1", "tie": "#1f9d3a", "natural": "#d4a017",
           "expected": "#8a94a3"}


def _title(text: str, detail: str) -> dict[str, Any]:
    return {"text": text, "subtitle": {"text": detail, "font": {"size": 12}},
            "x": 0, "xanchor": "left", "xref": "paper", "yref": "container", "y": 1,
            "yanchor": "top", "pad": {"t": 10}, "font": {"size": 15}}


def shares_object(stats: dict[str, Any]) -> go.Figure:
    items = share_items(stats)  # which bars: shared; how they are drawn: the oracle's
    names = [n for n, _, _ in items]
    share = [m["share"] for _, m, _ in items]
    fig = go.Figure()
    fig.add_bar(x=names, y=share, marker_color=[c for _, _, c in items], name="observed",
                error_y={"type": "data", "symmetric": False,
                         "array": [m["ci99"][1] - m["share"] for _, m, _ in items],
                         "arrayminus": [m["share"] - m["ci99"][0] for _, m, _ in items]})
    fig.add_scatter(x=names, y=[m["expected_share"] for _, m, _ in items], mode="markers",
                    marker={"symbol": "line-ew-open", "size": 30, "color": "#111",
                            "line": {"width": 3}}, name="exact expectation")
    fig.update_layout(title=_title("Shares", "observed vs exact expectation, 99% intervals"),
                      **_LAYOUT)
    fig.update_yaxes(tickformat=".0%")
    return fig


def runs_object(stats: dict[str, Any], longest: int = 12) -> go.Figure:
    fig = go.Figure()
    dist = stats["streaks"]["run_length_distribution"]
    for side in ("banker", "player"):
        rows = list(dist[side].items())[:longest]
        fig.add_bar(x=[k for k, _ in rows], y=[v["observed"] for _, v in rows],
                    name=f"{side.title()} runs", marker_color=COLOURS[side])
        fig.add_scatter(x=[k for k, _ in rows], y=[v["expected"] for _, v in rows],
                        mode="lines+markers", name=f"{side.title()} expected",
                        line={"color": COLOURS[side], "dash": "dot"})
    fig.update_layout(title=_title("Run lengths", "Big Road columns by length, observed vs "
                                   "expected"), barmode="group", **_LAYOUT)
    return fig


def difference_object(outcomes: list[str]) -> go.Figure:
    total, ys = 0, []
    for o in outcomes:
        total += 1 if o == "B" else -1 if o == "P" else 0
        ys.append(total)
    fig = go.Figure(go.Scatter(x=list(range(1, len(ys) + 1)), y=ys, mode="lines",
                               line={"color": "#444", "shape": "hv"}, name="B − P"))
    fig.add_hline(y=0, line_color=COLOURS["expected"])
    fig.update_layout(title=_title("Banker − Player", "cumulative wins over the coups"),
                      showlegend=False, **_LAYOUT)
    fig.update_xaxes(title_text="coup")
    return fig


def odds_object(live: dict[str, Any]) -> go.Figure:
    comp = live["composition"]
    fig = go.Figure(go.Bar(x=list(comp), y=list(comp.values()), marker_color="#5a6b80",
                           name="cards left"))
    fig.update_layout(title=_title("Cards left by rank", f"{live['cards_left']} cards left"),
                      showlegend=False, **_LAYOUT)
    fig.update_xaxes(title_text="rank")
    fig.update_yaxes(title_text="cards")
    return fig


@pytest.mark.parametrize(("rules", "seed", "coups"), [
    ("standard-8", 1, 1), ("standard-8", 2, 7), ("standard-8", 3, 44), ("standard-8", 4, 70),
    ("standard-6", 5, 30)])
def test_charts_are_what_plotlys_figure_objects_sent(server: Server, rules: str, seed: int,
                                                     coups: int) -> None:
    """The charts are built as plain dicts: each is the JSON the figure object of the same
    report serialised to (template resolved), on card-level shoes of every length."""
    deal_live(server, rules, seed, coups)
    stats = stats_json(server.ctx, "T1")
    s, live = stats["statistics"], stats["live_odds"]
    outcomes = [c["outcome"] for c in server.ctx.service.table_state("T1").coups]
    assert shares_figure(s) == shares_object(s).to_plotly_json()
    assert runs_figure(s) == runs_object(s).to_plotly_json()
    assert difference_figure(outcomes) == difference_object(outcomes).to_plotly_json()
    assert odds_figure(live) == odds_object(live).to_plotly_json()


def test_outcome_only_charts_are_what_plotlys_figure_objects_sent(server: Server) -> None:
    service, ana = server.ctx.service, Actor.user("ana", "dealer")
    service.open_shoe(ana, "T1", "S1")
    for o in "BPPBTBBBPT":
        service.enter_coup(ana, "T1", CoupEntry(outcome=o))
    s = stats_json(server.ctx, "T1")["statistics"]
    assert shares_figure(s) == shares_object(s).to_plotly_json()
    assert runs_figure(s) == runs_object(s).to_plotly_json()
    assert difference_figure([]) == difference_object([]).to_plotly_json()
