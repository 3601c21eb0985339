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

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from html import escape
from typing import Any, Protocol

from dashboard.config import SiteConfig
from dashboard.i18n import labels
from roads.board import DERIVED, Board
from roads.render import ScreenRoad, ask_marks_svg, get_theme, screen_road
from roads.render import key_mark_svg as _key_mark_svg

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


@lru_cache(maxsize=64)
def key_mark_svg(count: str, theme: str) -> str:
    """The key beside a count (the same few marks on every update: drawn once)."""
    return _key_mark_svg(count, theme)


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


def _road(road: str, lab: dict[str, str], svg: str) -> str:
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


_COUNT_ROWS = (("banker", "banker"), ("player", "player"), ("tie", "tie"),
               ("banker_pair", "banker_pairs"), ("player_pair", "player_pairs"),
               ("natural", "naturals"))


def _shares(parts: dict[str, tuple[str, str]], lab: dict[str, str], theme: str) -> str:
    cells = "".join(
        f'<tr class="s-{key}"><th>{key_mark_svg(key, theme)}<span>{escape(lab[key])}</span></th>'
        f'<td class="n">{parts[f"tr.s-{key} td.n"][1]}</td>'
        f'<td class="share">{parts[f"tr.s-{key} td.share"][1]}</td></tr>'
        for key, _ in _COUNT_ROWS)
    return f'<section class="counts"><table class="shares">{cells}</table></section>'


def _asks(parts: dict[str, tuple[str, str]], lab: dict[str, str]) -> str:
    """The Banker ask and Player ask boxes: touching one shows its hypothetical cells."""
    boxes = "".join(
        f'<div class="ask-box ask-{o}" role="button">'
        f'<span class="ask-label">{escape(lab["ask_banker" if o == "b" else "ask_player"])}'
        f'</span>{parts[f"div.ask-{o} svg.ask-marks"][1]}</div>' for o in "bp")
    return f'<section class="asks">{boxes}</section>'


def _live_parts(state: TableState, board: Board, lab: dict[str, str],
                theme: str) -> dict[str, tuple[str, str]]:
    """What a coup may change outside the roads, by the selector the page finds it by, with
    how it is replaced there (``inner`` or ``outer`` HTML). The whole screen is built from
    these same parts, so an update and the whole state cannot disagree."""
    c = board.counts()
    n = max(c["coups"], 1)
    parts = {"header .coupno": ("inner", _coupno(lab, len(state.coups)))}
    for key, count in _COUNT_ROWS:
        parts[f"tr.s-{key} td.n"] = ("inner", str(c[count]))
        parts[f"tr.s-{key} td.share"] = ("inner", f"{100 * c[count] / n:.1f}%")
    for o in "bp":
        parts[f"div.ask-{o} svg.ask-marks"] = ("outer", ask_marks_svg(board, o.upper(), theme))
    parts["section.last-coup"] = ("outer", _last_coup(state.coups[-1] if state.coups else None,
                                                      lab, theme))
    return parts


def _coupno(lab: dict[str, str], coups: int) -> str:
    return f'{escape(lab["coup"])} {coups}'


def _header(state: TableState, site: SiteConfig, lab: dict[str, str]) -> str:
    """The header: casino, table, shoe, coup count, rules and limits."""
    table = site.table(state.table_id)
    rules = state.rules or table.rules
    limits = (f'<span>{escape(lab["limits"])}: {escape(table.limits())}</span>'
              if table.limits() else "")
    logo = '<img src="/brand/logo" alt="">' if site.logo else ""
    return (f'<header><div class="brand">'
            f'{logo}'
            f'<span>{escape(site.casino)}</span></div>'
            f'<div class="ids"><span>{escape(lab["table"])} {escape(table.name)}</span>'
            f'<span>{escape(lab["shoe"])} #{state.shoe_number}</span>'
            f'<span class="coupno">{_coupno(lab, len(state.coups))}</span></div>'
            f'<div class="limits"><span>{escape(lab["rules"])}: {escape(rules)}</span>'
            f'{limits}'
            f'</div></header>')


#: The roads in the order the screen lays them out.
SCREEN_ROADS = ("big_road", *DERIVED, "bead_plate")


@dataclass(slots=True)
class _Drawn:
    """An open shoe as drawn: each road's parts and every cell's markup, the other parts."""

    key: tuple[Any, ...]  # what a delta must share: the shoe and the header
    board: Board
    coups: int
    roads: dict[str, ScreenRoad]
    cells: dict[str, list[str]]
    parts: dict[str, tuple[str, str]]


class Update:
    """One state of a table's screen: the whole content (``full``, what a screen that
    (re)connects or missed an update gets) and, when the previous state was of the same
    open board, the changes from it (``delta``: ``base`` is the previous ``seq``).

    ``full`` is drawn from a snapshot on first use: a floor's screens nearly all follow the
    updates, and drawing every road whole for each coup was ~a tenth of a worker's drawing.
    """

    __slots__ = ("_draw", "_full", "delta", "seq")

    def __init__(self, seq: int, full: dict[str, Any] | Callable[[], dict[str, Any]],
                 delta: dict[str, Any] | None) -> None:
        self.seq, self.delta = seq, delta
        self._full: dict[str, Any] | None = full if isinstance(full, dict) else None
        self._draw: Callable[[], dict[str, Any]] | None = None if isinstance(full, dict) \
            else full

    @property
    def full(self) -> dict[str, Any]:
        """The whole state, drawn on first use. Screens of several threads may ask at once:
        the draw function is read once and never cleared, so a second asker draws the same
        state again at worst (drawing is pure), never finds neither."""
        full = self._full
        if full is None:
            draw = self._draw
            assert draw is not None
            full = self._full = draw()
        return full


class ScreenContent:
    """What every screen of one table shows in one language and theme, kept change by
    change: a new coup redraws only the cells the board's delta names (``Board.delta_json``)
    and the sections that changed, and the update sent is those parts — a few KB instead of
    the ~50 KB whole screen. A new shoe, a correction (a rebuilt board) or a status change
    draws everything again. Pure (no I/O); not thread-safe (one renderer per content)."""

    def __init__(self, site: SiteConfig, lang: str, theme: str) -> None:
        self.site, self.lang, self.theme = site, lang, theme
        self.labels = labels(lang)
        self._drawn: _Drawn | None = None
        self._seq = -1  # of the last update

    def update(self, state: TableState, board: Board | None) -> Update:
        """The screen for ``state`` (``board``: the open shoe's board, kept by the caller and
        appended to in place between updates; None when no shoe is open)."""
        lab = self.labels
        base, self._seq = self._seq, state.seq
        if state.status != "open" or board is None:
            self._drawn = None
            body = (f'<div class="status-screen"><div class="status-text">'
                    f'{escape(lab["status_" + state.status])}</div></div>')
            return Update(state.seq, _payload(state, _header(state, self.site, lab), body, lab,
                                              self.theme), None)
        head = _header(state, self.site, lab)
        key = (state.shoe_id, state.shoe_number, state.rules)  # all the header but the count
        before = self._drawn
        if before is None or before.key != key or before.board is not board \
                or len(board) < before.coups:
            self._drawn = self._draw(key, state, board)
            return Update(state.seq, self._whole(state, head), None)
        ops = self._changes(before, state, board)
        return Update(state.seq, self._whole(state, head), {
            "type": "update", "table_id": state.table_id, "seq": state.seq, "base": base,
            "status": state.status, "shoe_id": state.shoe_id, "coups": len(state.coups),
            "ops": ops})

    # -- drawing ---------------------------------------------------------------------------
    def _road(self, board: Board, road: str, start: int = 0) -> ScreenRoad:
        return screen_road(board, road, theme=self.theme, labels=self.labels, start=start)

    def _draw(self, key: tuple[Any, ...], state: TableState, board: Board) -> _Drawn:
        roads = {road: self._road(board, road) for road in SCREEN_ROADS}
        return _Drawn(key, board, len(board), roads,
                      {road: list(r.cells) for road, r in roads.items()},
                      _live_parts(state, board, self.labels, self.theme))

    def _changes(self, drawn: _Drawn, state: TableState, board: Board) -> list[list[Any]]:
        """Bring ``drawn`` up to ``board`` and say how, as the page's operations:
        ``["set", selector, {attribute: value}]``, ``["inner", selector, html]``,
        ``["outer", selector, html]`` and ``["tail", selector, from, html]`` (remove the
        element's children from index ``from`` on, then append ``html``)."""
        ops: list[list[Any]] = [["set", ".screen", {"data-seq": str(state.seq)}]]
        if len(board) > drawn.coups:
            changed = json.loads(board.delta_json(drawn.coups))
            for road in SCREEN_ROADS:
                start = changed[road]["from"]
                new = self._road(board, road, start)
                old, cells = drawn.roads[road], drawn.cells[road]
                cells[start:] = new.cells
                where = f".r-{road} "
                if new.grid != old.grid:  # more columns than were drawn: the whole road
                    ops.append(["outer", where + "svg.road-svg", new.svg(cells)])
                else:
                    if new.attrs != old.attrs:
                        ops.append(["set", where + "svg.road-svg", new.attrs])
                    if new.cells or start < len(old.cells):
                        ops.append(["tail", where + "g.marks", start,
                                    "".join(f"<g>{c}</g>" for c in new.cells)])
                    if new.asks != old.asks:
                        ops.append(["inner", where + "g.ask-cells", new.asks])
                drawn.roads[road] = replace(new, start=0, cells=cells)
            drawn.coups = len(board)
        parts = _live_parts(state, board, self.labels, self.theme)
        ops += [[how, selector, html] for selector, (how, html) in parts.items()
                if drawn.parts[selector][1] != html]
        drawn.parts = parts
        return ops

    # -- the whole screen -------------------------------------------------------------------
    def _whole(self, state: TableState, head: str) -> Callable[[], dict[str, Any]]:
        """The whole screen as it is drawn now, drawn when first asked for (from a copy of
        every cell: the next update changes the kept ones in place, maybe on another
        thread than the one that asks)."""
        drawn = self._drawn
        assert drawn is not None
        roads = {road: (drawn.roads[road], tuple(drawn.cells[road])) for road in SCREEN_ROADS}
        parts, lab, theme = drawn.parts, self.labels, self.theme  # parts: replaced, not changed
        return lambda: _whole_screen(state, head, roads, parts, lab, theme)


def _whole_screen(state: TableState, head: str,
                  roads: dict[str, tuple[ScreenRoad, tuple[str, ...]]],
                  parts: dict[str, tuple[str, str]], lab: dict[str, str], theme: str
                  ) -> dict[str, Any]:
    svg = {road: r.svg(cells) for road, (r, cells) in roads.items()}
    derived = "".join(_road(road, lab, svg[road]) for road in DERIVED)
    body = (f'<section class="board">{_road("big_road", lab, svg["big_road"])}'
            f'<div class="derived">{derived}</div>'
            f'<div class="lower">{_road("bead_plate", lab, svg["bead_plate"])}'
            f'{_shares(parts, lab, theme)}{_asks(parts, lab)}'
            f'{parts["section.last-coup"][1]}</div></section>')
    return _payload(state, head, body, lab, theme)


def _payload(state: TableState, head: str, body: str, lab: dict[str, str],
             theme: str) -> dict[str, Any]:
    html = (f'<div class="screen status-{state.status} theme-{theme}" '
            f'data-seq="{state.seq}" style="{theme_style(theme)}">{head}{body}'
            f'<footer><p class="note">{escape(lab["information_only"])}</p>'
            f'</footer></div>')
    return {"type": "state", "table_id": state.table_id, "seq": state.seq,
            "status": state.status, "shoe_id": state.shoe_id, "coups": len(state.coups),
            "html": html}


def screen_payload(state: TableState, site: SiteConfig, lang: str, theme: str) -> dict[str, Any]:
    """The screen's whole content for one state (``seq`` orders the updates)."""
    board = Board.from_coups(state.coups) if state.status == "open" else None
    return ScreenContent(site, lang, theme).update(state, board).full
