"""The Dash web dashboard: every table at a glance, a table's full board and statistics, and
a shoe's board and coups (the history list itself is a server-rendered page, ``/history``).
Layout builders are plain functions of data; callbacks only fetch the data (journal, store)
and call them. Each live page polls with its own ``dcc.Interval`` and returns ``no_update``
while the journal has not moved, so idle pages cost one query a second.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote, unquote

from dash import Dash, Input, Output, State, dcc, html, no_update
from starlette.concurrency import run_in_threadpool

from dashboard.api import stats_json
from dashboard.context import Context
from dashboard.figures import difference_figure, odds_figure, runs_figure, shares_figure
from dashboard.odds_panel import odds_panel
from roads.audit.trail import OUTCOMES, flag_words, plural
from roads.board import DERIVED, Board
from roads.errors import InputError
from roads.odds import Composition
from roads.render import DEFAULT_LABELS as ROAD_TITLES
from roads.render import road_svg, scoreboard_svg
from roads.rules import get_rules
from roads.tables import TableState

GRAPH_CONFIG: Any = {"displayModeBar": False, "responsive": True}
#: The site's navigation, on the Dash pages and the server-rendered ones alike.
NAVIGATION = (("Tables", "/"), ("History", "/history"), ("Audit", "/audit"))


def svg_image(svg: str, alt: str, class_name: str = "") -> html.Img:
    """An SVG from the one renderer, as an image (one element per board, not per cell)."""
    data = base64.b64encode(svg.encode()).decode()
    return html.Img(src=f"data:image/svg+xml;base64,{data}", alt=alt, className=class_name)


def shell(ctx: Context) -> html.Div:
    return html.Div([
        dcc.Location(id="url"),
        # Plain links: only "/" is a Dash page; the others are served by the server.
        html.Nav([html.Span(ctx.site.casino, className="brand"),
                  *(html.A(label, href=href) for label, href in NAVIGATION),
                  html.A("Log in", href="/login")], className="topnav"),
        html.Div(id="page", className="page"),
    ])


# -- overview ---------------------------------------------------------------------------------
def table_card(state: TableState, name: str) -> html.Div:
    board = Board.from_coups(state.coups)
    counts = board.counts()
    last = state.coups[-1]["outcome"] if state.coups else None
    alerts = [html.Li(f"{plural(len(state.pending_corrections), 'correction')} awaiting "
                      "approval")
              ] if state.pending_corrections else []
    mini = (svg_image(road_svg(board, "big_road", window=16, cell=14), f"Big Road {name}",
                      "mini-road") if state.status == "open"
            else html.Div(state.status.replace("_", " "), className="mini-status"))
    t = quote(state.table_id)
    return html.Div([
        html.Div([dcc.Link(html.H3(name), href=f"/tables/{t}"),
                  html.Span(state.status.replace("_", " "), className=f"badge {state.status}")],
                 className="card-head"),
        mini,
        html.Div([html.Span(f"Shoe #{state.shoe_number}"),
                  html.Span(plural(counts["coups"], "coup")),
                  html.Span(f"B {counts['banker']}", className="b"),
                  html.Span(f"P {counts['player']}", className="p"),
                  html.Span(f"T {counts['tie']}", className="t"),
                  html.Span(f"last: {OUTCOMES.get(last, last)}" if last else "",
                            className=f"last o-{last}")],
                 className="card-counts"),
        html.Ul(alerts, className="alerts"),
        html.Div([html.A("screen", href=f"/table/{t}"),
                  html.A("operator", href=f"/operator/{t}")], className="card-links"),
    ], className="table-card", id={"type": "table-card", "table": state.table_id})


def overview(ctx: Context) -> html.Div:
    return html.Div([html.H2("Tables"), html.Div(id="overview", className="table-grid"),
                     dcc.Interval(id="overview-tick", interval=1000),
                     dcc.Store(id="overview-seq")])


# -- one table --------------------------------------------------------------------------------
def table_page(table_id: str) -> html.Div:
    return html.Div([html.H2(f"Table {table_id}"), dcc.Store(id="table-id", data=table_id),
                     dcc.Store(id="table-seq"), dcc.Interval(id="table-tick", interval=1500),
                     html.Div(id="table-body")], className="table-page")


#: Columns the table page shows of each road: the newest ones, at a stable size whatever the
#: shoe's length (a whole shoe fits the Bead Plate; the Big Road rarely needs more).
TABLE_COLUMNS = {"big_road": 30, "big_eye_boy": 16, "small_road": 16, "cockroach_pig": 16,
                 "bead_plate": 15}
_COUNTS = (("Banker", "banker", "b"), ("Player", "player", "p"), ("Tie", "tie", "t"),
           ("Banker pair", "banker_pairs", "b"), ("Player pair", "player_pairs", "p"),
           ("Natural", "naturals", "n"))


def table_board(board: Board, table_id: str) -> html.Div:
    """The board laid out like the table's screen, one image per road, each filling its
    column with the titles and counts in the page's own type (an image of the whole
    scoreboard scaled its lettering down with it)."""
    def road(name: str) -> html.Figure:
        svg = road_svg(board, name, window=TABLE_COLUMNS[name], ask=None)
        title = ROAD_TITLES[name]
        return html.Figure([html.Figcaption(title),
                            svg_image(svg, f"{title} of table {table_id}", "road")],
                           className=f"road {name}")
    counts = board.counts()
    n = max(counts["coups"], 1)
    shares = html.Table([html.Tr([html.Th(label, className=css), html.Td(counts[key]),
                                  html.Td(f"{100 * counts[key] / n:.1f}%")])
                         for label, key, css in _COUNTS], className="board-counts")
    return html.Div([road("big_road"),
                     html.Div([road(r) for r in DERIVED], className="derived"),
                     html.Div([road("bead_plate"), shares], className="lower")],
                    className="table-board")


def _odds(state: TableState, stats: dict[str, Any]) -> html.Section:
    """The next coup's odds of every bet, from the live composition when cards are known."""
    try:
        rules = get_rules(state.rules or "standard-8")
    except InputError as exc:
        return html.Section([html.H3("Next coup — exact odds"), html.P(str(exc))],
                            className="odds-panel")
    live = stats.get("live_odds")
    composition = Composition.from_counts(live["composition"]) if live else None
    return odds_panel(rules, composition)


def table_body(table_id: str, state: TableState, stats: dict[str, Any]) -> list[Any]:
    if state.status != "open":
        last: list[Any] = []
        if state.shoe_id:
            href = f"/shoes/{quote(table_id)}/{quote(state.shoe_id)}"
            last = [" The last shoe: ", dcc.Link(state.shoe_id, href=href)]
        return [html.P([f"No shoe in play ({state.status.replace('_', ' ')}).", *last],
                       className="status")]
    board = Board.from_coups(state.coups)
    parts: list[Any] = [
        html.P(f"Shoe {state.shoe_id} (#{state.shoe_number}), rules {state.rules}, "
               f"{plural(len(state.coups), 'coup')}"),
        html.Div([table_board(board, table_id), _odds(state, stats)], className="table-top"),
    ]
    s = stats.get("statistics")
    graphs = []
    if s and s.get("coups"):
        graphs += [dcc.Graph(figure=shares_figure(s), config=GRAPH_CONFIG),
                   dcc.Graph(figure=runs_figure(s), config=GRAPH_CONFIG)]
    graphs.append(dcc.Graph(figure=difference_figure([c["outcome"] for c in state.coups]),
                            config=GRAPH_CONFIG))
    if stats.get("live_odds"):
        graphs.append(dcc.Graph(figure=odds_figure(stats["live_odds"]), config=GRAPH_CONFIG))
    parts.append(html.Div(graphs, className="charts"))
    tests = (stats.get("randomness") or {}).get("tests", [])
    parts.append(html.H3("Randomness tests (Holm-adjusted, flagged at 99%)"))
    parts.append(html.Div(html.Table(
        [html.Tr([html.Th(h) for h in ("test", "p", "adjusted", "flag")])]
        + [html.Tr([html.Td(t["test"]), html.Td(f"{t['p_value']:.4f}"),
                    html.Td(f"{t['p_adjusted']:.4f}"), html.Td("FLAG" if t["flagged"] else "")])
           for t in tests], className="tests"), className="scroll"))
    findings = stats.get("integrity") or []
    parts.append(html.H3("Integrity findings"))
    parts.append(html.Ul([html.Li(f"[{f['severity']}] {f['explanation']}") for f in findings])
                 if findings else html.P("None: every check passed.", className="ok"))
    parts.append(html.P("Odds and statistics are information, not betting advice.",
                        className="note"))
    return parts


# -- one shoe ---------------------------------------------------------------------------------
def shoe_page(ctx: Context, table_id: str, shoe_id: str) -> html.Div:
    coups = ctx.service.shoe_coups(table_id, shoe_id)
    if not coups:
        return html.Div([html.H2("Not found"), html.P(f"No shoe {shoe_id} at {table_id}.")])
    board = Board.from_coups(coups)
    head = html.Tr([html.Th(h) for h in ("coup", "outcome", "player", "banker", "totals",
                                         "pairs / natural", "source", "dealt (UTC)")])
    rows = [html.Tr([
        html.Td(c["coup"]), html.Td(OUTCOMES.get(c["outcome"], c["outcome"]),
                                    className=f"o-{c['outcome']}"),
        html.Td(" ".join(c["player_cards"] or [])), html.Td(" ".join(c["banker_cards"] or [])),
        html.Td("" if c["player_total"] is None else f"{c['player_total']}-{c['banker_total']}"),
        html.Td(flag_words(c)),
        html.Td(c["source"]), html.Td(str(c["dealt_at"])[:19])]) for c in coups]
    back = html.A(f"Every shoe of table {table_id}", href=f"/history?table={quote(table_id)}")
    return html.Div([html.H2(f"Table {table_id} — shoe {shoe_id}"), html.P(back),
                     svg_image(scoreboard_svg(board), f"Board of shoe {shoe_id}", "board"),
                     html.Div(html.Table([head, *rows], className="coups"),
                              className="scroll")])


def register(app: Dash, ctx: Context) -> None:
    """The thin callbacks. Each is ``async`` and does its work in the request threads: Dash's
    FastAPI backend calls a plain callback inside the worker's event loop, where a table
    page's statistics and charts (~0.3 s of CPU) held back every screen's send of that
    worker (measured: a floor's screens waited seconds behind 50 dashboard viewers)."""

    @app.callback(Output("page", "children"), Input("url", "pathname"))
    async def route(path: str | None) -> Any:
        return await run_in_threadpool(page, ctx, path)

    @app.callback(Output("overview", "children"), Output("overview-seq", "data"),
                  Input("overview-tick", "n_intervals"), State("overview-seq", "data"))
    async def refresh_overview(_: int | None, seen: int | None) -> Any:
        return await run_in_threadpool(overview_refresh, ctx, seen)

    @app.callback(Output("table-body", "children"), Output("table-seq", "data"),
                  Input("table-tick", "n_intervals"), State("table-id", "data"),
                  State("table-seq", "data"))
    async def refresh_table(_: int | None, table_id: str, seen: int | None) -> Any:
        return await run_in_threadpool(table_refresh, ctx, table_id, seen)


def page(ctx: Context, path: str | None) -> Any:
    """The page at ``path`` (the Dash pages' router)."""
    parts = [unquote(p) for p in (path or "/").split("/") if p]
    if not parts:
        return overview(ctx)
    if parts[0] == "tables" and len(parts) == 2:
        return table_page(parts[1])
    if parts[0] == "shoes" and len(parts) == 3:
        return shoe_page(ctx, parts[1], parts[2])
    return html.Div([html.H2("Not found"), dcc.Link("All tables", href="/")])


def overview_refresh(ctx: Context, seen: int | None) -> Any:
    """Every table's card and the journal head they show; nothing while the head is
    ``seen``."""
    head = ctx.service.journal.head()[0]
    if seen == head:
        return no_update, no_update
    cards: list[Any] = [table_card(ctx.service.table_state(t), ctx.site.table(t).name)
                        for t in ctx.table_ids()]
    return cards or [html.P("No tables yet. Start with `roads serve --demo`.")], head


def table_refresh(ctx: Context, table_id: str, seen: int | None) -> Any:
    """The table page's body and the table's head; nothing while the head is ``seen``."""
    seq = ctx.service.journal.table_head(table_id)
    if seen == seq:
        return no_update, no_update
    state = ctx.service.table_state(table_id)
    return table_body(table_id, state, stats_json(ctx, table_id)), seq
