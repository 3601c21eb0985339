"""The table-side screen's content: one HTML fragment per table state, language and theme.

Pure: a table state in, a ``{"type", "table_id", "seq", "status", "shoe_id", "coups",
"html"}`` payload out. The push channel sends the whole fragment every time, so a screen can
never show half an update, and a screen that reconnects is resynchronised by the first
message it receives.

The fragment is laid out like a live-dealer board: the Big Road across the top, the three
derived roads side by side, then the Bead Plate beside the counts, the ask boxes and the
last coup's cards. Each road is its own SVG drawn with the whole shoe; ``screen.js`` shows
the newest columns that fit its box at square cells, so any screen shape is filled. Every
colour comes from the theme (``roads.render.themes``) as CSS variables, so the whole screen
— counts, results, ask boxes, header — follows it, not only the roads.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any, Protocol

from dashboard.config import SiteConfig
from dashboard.i18n import labels
from roads.board import DERIVED, Board
from roads.render import ask_marks_svg, get_theme, key_mark_svg, screen_road_svg

_SUIT = {"s": ("♠", "black"), "c": ("♣", "black"), "h": ("♥", "red"), "d": ("♦", "red")}
_OUTCOME_KEY = {"B": "banker", "P": "player", "T": "tie"}


class TableState(Protocol):
    """What the screen reads of a live table's state (the live-table service's class)."""

    @property
    def table_id(self) -> str: ...
    @property
    def status(self) -> str: ...  # "idle" | "open" | "between_shoes" | "closed"
    @property
    def seq(self) -> int: ...
    @property
    def shoe_id(self) -> str | None: ...
    @property
    def shoe_number(self) -> int: ...
    @property
    def rules(self) -> str | None: ...
    @property
    def coups(self) -> Sequence[dict[str, Any]]: ...


def card_html(code: str) -> str:
    rank, (suit, colour) = code[0], _SUIT[code[1]]
    rank = "10" if rank == "T" else rank
    return f'<span class="card {colour}">{rank}{suit}</span>'


def theme_style(theme: str) -> str:
    """The theme's colours as CSS variables: one palette for the roads and the page."""
    t = get_theme(theme)
    colours = {"bg": t.panel, "road": t.background, "grid": t.grid, "text": t.text,
               "banker": t.banker, "player": t.player, "tie": t.tie, "natural": t.natural}
    return ";".join(f"--{name}:{value}" for name, value in colours.items())


def _road(board: Board, road: str, lab: dict[str, str], theme: str) -> str:
    svg = screen_road_svg(board, road, theme=theme, labels=lab)
    return (f'<section class="road r-{road}"><h2>{escape(lab[road])}</h2>'
            f'<div class="cells">{svg}</div></section>')


def _last_coup(coup: dict[str, Any] | None, lab: dict[str, str], theme: str) -> str:
    if coup is None:
        return f'<section class="last-coup"><h2>{escape(lab["last_coup"])}</h2></section>'
    outcome = coup["outcome"]
    words = escape(lab[_OUTCOME_KEY[outcome]]) + ("" if outcome == "T"
                                                  else " " + escape(lab["wins"]))
    key = key_mark_svg(_OUTCOME_KEY[outcome], theme)
    head = f'<div class="last-outcome o-{outcome}">{key}<span>{words}</span></div>'
    sides = []
    keyed = not coup.get("player_cards") and coup.get("player_total") is None
    for side, key in () if keyed else (("player", "P"), ("banker", "B")):
        cards = coup.get(f"{side}_cards")
        total = coup.get(f"{side}_total")
        hand = "".join(card_html(c) for c in cards) if cards else ""
        score = "" if total is None else f'<span class="total">{total}</span>'
        sides.append(f'<div class="hand h-{key}"><div class="hand-head">'
                     f'<span class="side">{escape(lab[side])}</span>{score}</div>'
                     f'<div class="cards">{hand}</div></div>')
    hands = f'<div class="hands">{"".join(sides)}</div>' if sides else ""
    return (f'<section class="last-coup"><h2>{escape(lab["last_coup"])} #{coup["coup"]}</h2>'
            f'{head}{hands}</section>')


def _shares(board: Board, lab: dict[str, str], theme: str) -> str:
    c = board.counts()
    n = max(c["coups"], 1)
    rows = [("banker", c["banker"]), ("player", c["player"]), ("tie", c["tie"]),
            ("banker_pair", c["banker_pairs"]), ("player_pair", c["player_pairs"]),
            ("natural", c["naturals"])]
    cells = "".join(
        f'<tr class="s-{key}"><th>{key_mark_svg(key, theme)}<span>{escape(lab[key])}</span></th>'
        f'<td>{value}</td><td>{100 * value / n:.1f}%</td></tr>' for key, value in rows)
    return f'<section class="counts"><table class="shares">{cells}</table></section>'


def _asks(board: Board, lab: dict[str, str], theme: str) -> str:
    """The Banker ask and Player ask boxes: touching one shows its hypothetical cells."""
    boxes = "".join(
        f'<div class="ask-box ask-{o.lower()}" role="button">'
        f'<span class="ask-label">{escape(lab["ask_banker" if o == "B" else "ask_player"])}'
        f'</span>{ask_marks_svg(board, o, theme)}</div>' for o in ("B", "P"))
    return f'<section class="asks">{boxes}</section>'


def screen_payload(state: TableState, site: SiteConfig, lang: str, theme: str) -> dict[str, Any]:
    """The screen's whole content for one state (``seq`` orders the updates)."""
    lab = labels(lang)
    table = site.table(state.table_id)
    rules = state.rules or table.rules
    limits = (f'<span>{escape(lab["limits"])}: {escape(table.limits())}</span>'
              if table.limits() else "")
    logo = '<img src="/brand/logo" alt="">' if site.logo else ""
    head = (f'<header><div class="brand">'
            f'{logo}'
            f'<span>{escape(site.casino)}</span></div>'
            f'<div class="ids"><span>{escape(lab["table"])} {escape(table.name)}</span>'
            f'<span>{escape(lab["shoe"])} #{state.shoe_number}</span>'
            f'<span class="coupno">{escape(lab["coup"])} {len(state.coups)}</span></div>'
            f'<div class="limits"><span>{escape(lab["rules"])}: {escape(rules)}</span>'
            f'{limits}'
            f'</div></header>')
    if state.status != "open":
        body = (f'<div class="status-screen"><div class="status-text">'
                f'{escape(lab["status_" + state.status])}</div></div>')
    else:
        board = Board.from_coups(state.coups)
        derived = "".join(_road(board, road, lab, theme) for road in DERIVED)
        body = (f'<section class="board">{_road(board, "big_road", lab, theme)}'
                f'<div class="derived">{derived}</div>'
                f'<div class="lower">{_road(board, "bead_plate", lab, theme)}'
                f'{_shares(board, lab, theme)}{_asks(board, lab, theme)}'
                f'{_last_coup(state.coups[-1] if state.coups else None, lab, theme)}'
                f'</div></section>')
    html = (f'<div class="screen status-{state.status} theme-{theme}" data-seq="{state.seq}" '
            f'style="{theme_style(theme)}">{head}{body}'
            f'<footer><p class="note">{escape(lab["information_only"])}</p></footer></div>')
    return {"type": "state", "table_id": state.table_id, "seq": state.seq,
            "status": state.status, "shoe_id": state.shoe_id, "coups": len(state.coups),
            "html": html}
