"""Plotly figures of the statistics report (pure: report dict in, figure out).

Each figure shows an observed figure beside its exact expectation, so nobody reads a chart
without its yardstick; live odds are labelled as information, never advice.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

COLOURS = {"banker": "#d0212b", "player": "#1f5fd1", "tie": "#1f9d3a", "natural": "#d4a017",
           "expected": "#8a94a3"}
#: Titles, subtitles and legends never clip: a short title with the detail in a subtitle, in
#: a top margin sized for the two lines (plotly's title ``automargin`` left the bars' clip
#: region behind when it grew the margin), the axes' margins grown to fit their labels, and
#: the legend in its own row under the x axis, never across the plot.
_LAYOUT: dict[str, Any] = {
    "margin": {"l": 48, "r": 12, "t": 64, "b": 16}, "height": 340, "autosize": True,
    "template": "plotly_white", "font": {"size": 13},
    "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.22, "yanchor": "top"},
    "xaxis": {"automargin": True}, "yaxis": {"automargin": True},
}


def _title(text: str, detail: str) -> dict[str, Any]:
    return {"text": text, "subtitle": {"text": detail, "font": {"size": 12}},
            "x": 0, "xanchor": "left", "xref": "paper", "yref": "container", "y": 1,
            "yanchor": "top", "pad": {"t": 10}, "font": {"size": 15}}


def shares_figure(stats: dict[str, Any]) -> go.Figure:
    """Outcome, pair and natural shares with 99% intervals against the exact expectation."""
    items = [("Banker", stats["outcomes"]["banker"], COLOURS["banker"]),
             ("Player", stats["outcomes"]["player"], COLOURS["player"]),
             ("Tie", stats["outcomes"]["tie"], COLOURS["tie"]),
             ("P pair", stats["pairs"]["player"], COLOURS["player"]),
             ("B pair", stats["pairs"]["banker"], COLOURS["banker"]),
             ("Natural", stats["naturals"], COLOURS["natural"])]
    # Outcome-only coups carry no pair or natural information: leave those bars out.
    items = [item for item in items if item[1].get("share") is not None]
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


def runs_figure(stats: dict[str, Any], longest: int = 12) -> go.Figure:
    """Run-length distribution of the Big Road columns against its expectation."""
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


def difference_figure(outcomes: list[str]) -> go.Figure:
    """Cumulative Banker minus Player wins over the coups (ties leave it unchanged)."""
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


def odds_figure(live: dict[str, Any]) -> go.Figure:
    """Remaining ranks in the shoe (the next coup's odds of every bet are the odds panel's)."""
    comp = live["composition"]
    fig = go.Figure(go.Bar(x=list(comp), y=list(comp.values()), marker_color="#5a6b80",
                           name="cards left"))
    fig.update_layout(title=_title("Cards left by rank", f"{live['cards_left']} cards left"),
                      showlegend=False, **_LAYOUT)
    fig.update_xaxes(title_text="rank")
    fig.update_yaxes(title_text="cards")
    return fig
