"""Plotly figures of the statistics report (pure: report dict in, figure out).

Each figure shows an observed figure beside its exact expectation, so nobody reads a chart
without its yardstick; live odds are labelled as information, never advice.

The figures are built as the plain dicts plotly's figure objects serialise to (the JSON a
``dcc.Graph`` sends), not through ``plotly.graph_objects``: validating a figure object and
deep-copying its template cost ~80 ms of CPU per chart, ~320 ms of a table page's ~430 ms
each time its table changed, in the same processes that push to the screens. The charts
sent are the same (``tests/dashboard/test_figures.py`` holds them equal to the figure
objects' JSON).
"""

from __future__ import annotations

from functools import cache
from typing import Any

COLOURS = {"banker": "#d0212b", "player": "#1f5fd1", "tie": "#1f9d3a", "natural": "#d4a017",
           "expected": "#8a94a3"}
#: The template every chart is drawn in (plotly resolves a template's name to its whole
#: definition on the server: the browser's plotly.js knows no names).
TEMPLATE = "plotly_white"
#: Titles, subtitles and legends never clip: a short title with the detail in a subtitle, in
#: a top margin sized for the two lines (plotly's title ``automargin`` left the bars' clip
#: region behind when it grew the margin), the axes' margins grown to fit their labels, and
#: the legend in its own row under the x axis, never across the plot.
_LAYOUT: dict[str, Any] = {
    "margin": {"l": 48, "r": 12, "t": 64, "b": 16}, "height": 340, "autosize": True,
    "font": {"size": 13},
    "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": -0.22, "yanchor": "top"},
}


@cache
def template() -> dict[str, Any]:
    """The template's definition, read from plotly once a process (shared by every chart:
    never changed)."""
    import plotly.io as pio

    definition: dict[str, Any] = pio.templates[TEMPLATE].to_plotly_json()
    return definition


def _figure(data: list[dict[str, Any]], title: dict[str, Any], xaxis: dict[str, Any] | None = None,
            yaxis: dict[str, Any] | None = None, **layout: Any) -> dict[str, Any]:
    return {"data": data, "layout": {
        **_LAYOUT, "title": title, "template": template(), **layout,
        "xaxis": {"automargin": True, **(xaxis or {})},
        "yaxis": {"automargin": True, **(yaxis or {})}}}


def _title(text: str, detail: str) -> dict[str, Any]:
    return {"text": text, "subtitle": {"text": detail, "font": {"size": 12}},
            "x": 0, "xanchor": "left", "xref": "paper", "yref": "container", "y": 1,
            "yanchor": "top", "pad": {"t": 10}, "font": {"size": 15}}


def _axis_title(text: str) -> dict[str, Any]:
    return {"title": {"text": text}}


def share_items(stats: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """(bar name, its measure, colour) of each share chart bar. Outcome-only coups carry no
    pair or natural information: those bars are left out."""
    items = [("Banker", stats["outcomes"]["banker"], COLOURS["banker"]),
             ("Player", stats["outcomes"]["player"], COLOURS["player"]),
             ("Tie", stats["outcomes"]["tie"], COLOURS["tie"]),
             ("P pair", stats["pairs"]["player"], COLOURS["player"]),
             ("B pair", stats["pairs"]["banker"], COLOURS["banker"]),
             ("Natural", stats["naturals"], COLOURS["natural"])]
    return [item for item in items if item[1].get("share") is not None]


def shares_figure(stats: dict[str, Any]) -> dict[str, Any]:
    """Outcome, pair and natural shares with 99% intervals against the exact expectation."""
    items = share_items(stats)
    names = [n for n, _, _ in items]
    bars = {"type": "bar", "x": names, "y": [m["share"] for _, m, _ in items],
            "marker": {"color": [c for _, _, c in items]}, "name": "observed",
            "error_y": {"type": "data", "symmetric": False,
                        "array": [m["ci99"][1] - m["share"] for _, m, _ in items],
                        "arrayminus": [m["share"] - m["ci99"][0] for _, m, _ in items]}}
    expected = {"type": "scatter", "x": names, "y": [m["expected_share"] for _, m, _ in items],
                "mode": "markers", "name": "exact expectation",
                "marker": {"symbol": "line-ew-open", "size": 30, "color": "#111",
                           "line": {"width": 3}}}
    return _figure([bars, expected],
                   _title("Shares", "observed vs exact expectation, 99% intervals"),
                   yaxis={"tickformat": ".0%"})


def runs_figure(stats: dict[str, Any], longest: int = 12) -> dict[str, Any]:
    """Run-length distribution of the Big Road columns against its expectation."""
    data = []
    dist = stats["streaks"]["run_length_distribution"]
    for side in ("banker", "player"):
        rows = list(dist[side].items())[:longest]
        lengths = [k for k, _ in rows]
        data += [{"type": "bar", "x": lengths, "y": [v["observed"] for _, v in rows],
                  "name": f"{side.title()} runs", "marker": {"color": COLOURS[side]}},
                 {"type": "scatter", "x": lengths, "y": [v["expected"] for _, v in rows],
                  "mode": "lines+markers", "name": f"{side.title()} expected",
                  "line": {"color": COLOURS[side], "dash": "dot"}}]
    return _figure(data, _title("Run lengths", "Big Road columns by length, observed vs "
                                "expected"), barmode="group")


def difference_figure(outcomes: list[str]) -> dict[str, Any]:
    """Cumulative Banker minus Player wins over the coups (ties leave it unchanged)."""
    total, ys = 0, []
    for o in outcomes:
        total += 1 if o == "B" else -1 if o == "P" else 0
        ys.append(total)
    line = {"type": "scatter", "x": list(range(1, len(ys) + 1)), "y": ys, "mode": "lines",
            "line": {"color": "#444", "shape": "hv"}, "name": "B − P"}
    zero = {"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": 0, "y1": 0,
            "yref": "y", "line": {"color": COLOURS["expected"]}}
    return _figure([line], _title("Banker − Player", "cumulative wins over the coups"),
                   xaxis=_axis_title("coup"), shapes=[zero], showlegend=False)


def odds_figure(live: dict[str, Any]) -> dict[str, Any]:
    """Remaining ranks in the shoe (the next coup's odds of every bet are the odds panel's)."""
    comp = live["composition"]
    bars = {"type": "bar", "x": list(comp), "y": list(comp.values()), "marker":
            {"color": "#5a6b80"}, "name": "cards left"}
    return _figure([bars], _title("Cards left by rank", f"{live['cards_left']} cards left"),
                   xaxis=_axis_title("rank"), yaxis=_axis_title("cards"), showlegend=False)
