"""The one renderer: roads and whole scoreboards as SVG, from a :class:`Board`.

Screens (a window of the last N columns) and compliance reports (the full shoe) call the
same functions, so what a screen showed is what a report shows. Pure string building: no
I/O, no browser, deterministic output (snapshot-tested).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

from roads.board import DERIVED, BeadCell, BigRoadCell, Board, CoupInfo, Mark
from roads.render.themes import Theme, get_theme

CELL = 24
ROWS = 6
DEFAULT_LABELS: dict[str, str] = {
    "bead_plate": "Bead Plate",
    "big_road": "Big Road",
    "big_eye_boy": "Big Eye Boy",
    "small_road": "Small Road",
    "cockroach_pig": "Cockroach Pig",
    "B": "B", "P": "P", "T": "T",
    "banker": "Banker", "player": "Player", "tie": "Tie",
    "banker_pair": "B pair", "player_pair": "P pair", "natural": "Natural",
    "coup": "Coup", "ask_banker": "B?", "ask_player": "P?",
}
_OUTCOME_OF = {"banker": "B", "player": "P", "tie": "T"}
_BLINK = '<animate attributeName="opacity" values="1;0.15;1" dur="1s" repeatCount="indefinite"/>'


def _f(x: float) -> str:
    """Compact, deterministic number formatting."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


@dataclass(frozen=True, slots=True)
class _Frame:
    """Where a road is drawn: origin, cell size, first visible column, column count."""

    x: float
    y: float
    cell: float
    first: int
    columns: int

    def centre(self, col: int, row: int) -> tuple[float, float] | None:
        if not self.first <= col < self.first + self.columns:
            return None
        return (self.x + (col - self.first + 0.5) * self.cell,
                self.y + (row + 0.5) * self.cell)

    @property
    def width(self) -> float:
        return self.columns * self.cell

    @property
    def height(self) -> float:
        return ROWS * self.cell


def _grid(frame: _Frame, theme: Theme) -> str:
    parts = [f'<rect x="{_f(frame.x)}" y="{_f(frame.y)}" width="{_f(frame.width)}" '
             f'height="{_f(frame.height)}" fill="{theme.background}" stroke="{theme.grid}"/>']
    for c in range(1, frame.columns):
        x = frame.x + c * frame.cell
        parts.append(f'<line x1="{_f(x)}" y1="{_f(frame.y)}" x2="{_f(x)}" '
                     f'y2="{_f(frame.y + frame.height)}" stroke="{theme.grid}" '
                     f'stroke-width="0.5"/>')
    for r in range(1, ROWS):
        y = frame.y + r * frame.cell
        parts.append(f'<line x1="{_f(frame.x)}" y1="{_f(y)}" x2="{_f(frame.x + frame.width)}" '
                     f'y2="{_f(y)}" stroke="{theme.grid}" stroke-width="0.5"/>')
    return "".join(parts)


def _shape(kind: str, cx: float, cy: float, r: float, colour: str, filled: bool,
           stroke: float) -> str:
    """A round, square or diamond mark, hollow or filled."""
    paint = (f'fill="{colour}"' if filled
             else f'fill="none" stroke="{colour}" stroke-width="{_f(stroke)}"')
    if kind == "square":
        side = r * 1.75
        return (f'<rect x="{_f(cx - side / 2)}" y="{_f(cy - side / 2)}" width="{_f(side)}" '
                f'height="{_f(side)}" rx="{_f(r * 0.3)}" {paint}/>')
    if kind == "diamond":
        pts = " ".join(f"{_f(px)},{_f(py)}" for px, py in
                       ((cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)))
        return f'<polygon points="{pts}" {paint}/>'
    return f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(r)}" {paint}/>'


def _kind(theme: Theme, outcome_or_colour: str) -> str:
    """Shape of a mark: round unless the theme separates by shape too."""
    if not theme.shapes:
        return "circle"
    return {"P": "square", "blue": "square", "T": "diamond"}.get(outcome_or_colour, "circle")


def _outcome_colour(theme: Theme, outcome: str) -> str:
    return {"B": theme.banker, "P": theme.player}.get(outcome, theme.tie)


def _mark_colour(theme: Theme, colour: str) -> str:
    return theme.banker if colour == "red" else theme.player


def _star(cx: float, cy: float, r: float, colour: str) -> str:
    pts = []
    for i in range(10):
        rad = r if i % 2 == 0 else r * 0.45
        a = -math.pi / 2 + i * math.pi / 5
        pts.append(f"{_f(cx + rad * math.cos(a))},{_f(cy + rad * math.sin(a))}")
    return f'<polygon points="{" ".join(pts)}" fill="{colour}"/>'


def _decorations(info: CoupInfo, cx: float, cy: float, s: float, theme: Theme) -> str:
    """Pair dots (Banker top-left, Player bottom-right) and the natural star (bottom-left)."""
    out = []
    dot = s * 0.1
    if info.banker_pair:
        out.append(f'<circle cx="{_f(cx - s * 0.32)}" cy="{_f(cy - s * 0.32)}" r="{_f(dot)}" '
                   f'fill="{theme.banker}" stroke="{theme.background}" stroke-width="0.6"/>')
    if info.player_pair:
        out.append(f'<circle cx="{_f(cx + s * 0.32)}" cy="{_f(cy + s * 0.32)}" r="{_f(dot)}" '
                   f'fill="{theme.player}" stroke="{theme.background}" stroke-width="0.6"/>')
    if info.natural:
        out.append(_star(cx - s * 0.32, cy + s * 0.32, s * 0.13, theme.natural))
    return "".join(out)


def _text(x: float, y: float, text: str, size: float, colour: str, anchor: str = "middle",
          weight: str = "normal") -> str:
    return (f'<text x="{_f(x)}" y="{_f(y)}" font-size="{_f(size)}" fill="{colour}" '
            f'text-anchor="{anchor}" dominant-baseline="central" font-weight="{weight}" '
            f'font-family="DejaVu Sans, Arial, sans-serif">{escape(text)}</text>')


def _tie_slash(cx: float, cy: float, s: float, ties: int, theme: Theme) -> str:
    h = s * 0.36
    out = (f'<line x1="{_f(cx - h)}" y1="{_f(cy + h)}" x2="{_f(cx + h)}" y2="{_f(cy - h)}" '
           f'stroke="{theme.tie}" stroke-width="{_f(s * 0.1)}" stroke-linecap="round"/>')
    if ties > 1:
        out += _text(cx, cy, str(ties), s * 0.42, theme.text, weight="bold")
    return out


def _bead_cell(cell: BeadCell, frame: _Frame, theme: Theme, labels: Mapping[str, str],
               bead_text: str) -> str:
    centre = frame.centre(cell.col, cell.row)
    if centre is None:
        return ""
    s = frame.cell
    cx, cy = centre
    colour = _outcome_colour(theme, cell.outcome)
    total = cell.info.winning_total
    text = str(total) if bead_text == "total" and total is not None else labels[cell.outcome]
    return (_shape(_kind(theme, cell.outcome), cx, cy, s * 0.42, colour, True, 0)
            + _text(cx, cy, text, s * 0.5, "#ffffff", weight="bold")
            + _decorations(cell.info, cx, cy, s, theme))


def _big_road_cell(cell: BigRoadCell, frame: _Frame, theme: Theme) -> str:
    centre = frame.centre(cell.col, cell.row)
    if centre is None:
        return ""
    s = frame.cell
    cx, cy = centre
    out = ""
    if cell.outcome != "T":
        out = (_shape(_kind(theme, cell.outcome), cx, cy, s * 0.36,
                      _outcome_colour(theme, cell.outcome), False, s * 0.11)
               + _decorations(cell.info, cx, cy, s, theme))
    if cell.ties:
        out += _tie_slash(cx, cy, s, cell.ties, theme)
    return out


def _derived_mark(road: str, colour: str, cx: float, cy: float, s: float,
                  theme: Theme) -> str:
    paint = _mark_colour(theme, colour)
    if road == "big_eye_boy":
        return _shape(_kind(theme, colour), cx, cy, s * 0.34, paint, False, s * 0.14)
    if road == "small_road":
        return _shape(_kind(theme, colour), cx, cy, s * 0.34, paint, True, 0)
    h = s * 0.34
    lean = -1 if theme.shapes and colour == "red" else 1  # colour-blind: red leans back
    return (f'<line x1="{_f(cx - h * lean)}" y1="{_f(cy + h)}" x2="{_f(cx + h * lean)}" '
            f'y2="{_f(cy - h)}" stroke="{paint}" stroke-width="{_f(s * 0.16)}" '
            f'stroke-linecap="round"/>')


def _derived_cell(road: str, mark: Mark, frame: _Frame, theme: Theme) -> str:
    centre = frame.centre(mark.col, mark.row)
    return "" if centre is None else _derived_mark(road, mark.color, *centre, frame.cell, theme)


def _cells(board: Board, road: str, frame: _Frame, theme: Theme, labels: Mapping[str, str],
           bead_text: str, start: int = 0) -> list[str]:
    """The markup of each cell of ``road`` from index ``start`` on, in the order of the road's
    list in the JSON contract (a coup's bead, a Big Road entry, a derived mark); a cell
    outside the frame is an empty string."""
    if road == "bead_plate":
        return [_bead_cell(c, frame, theme, labels, bead_text)
                for c in board.bead_plate[start:]]
    if road == "big_road":
        return [_big_road_cell(c, frame, theme) for c in board.big_road[start:]]
    return [_derived_cell(road, m, frame, theme) for m in board.marks(road)[start:]]


def _ask_overlay(board: Board, road: str, frame: _Frame, theme: Theme, ask: str,
                 blink: bool = True) -> str:
    """The hypothetical next cell of ``road`` if the next coup were ``ask``, blinking
    (``blink`` False leaves the blinking to the page's CSS, for overlays shown on request:
    a hidden SMIL animation still costs the browser a repaint every frame)."""
    a = board.ask(ask)  # type: ignore[arg-type]
    if road == "big_road":
        centre = frame.centre(*a.big_road_cell)
        body = "" if centre is None else _shape(
            _kind(theme, ask), *centre, frame.cell * 0.36, _outcome_colour(theme, ask), False,
            frame.cell * 0.11)
    else:
        cell, colour = a.cells[road], a.colors[road]
        centre = frame.centre(*cell) if cell else None
        body = ("" if centre is None or colour is None
                else _derived_mark(road, colour, *centre, frame.cell, theme))
    return f'<g class="ask-{ask.lower()}">{body}{_BLINK if blink else ""}</g>' if body else ""


def _last_column(board: Board, road: str, with_asks: bool) -> int:
    if road == "bead_plate":
        return (len(board) - 1) // ROWS + (1 if with_asks else 0)
    cols = ([c.col for c in board.big_road] if road == "big_road"
            else [m.col for m in board.marks(road)])
    if with_asks:
        for outcome in ("B", "P"):
            a = board.ask(outcome)
            if road == "big_road":
                cols.append(a.big_road_cell[0])
            elif a.cells[road] is not None:
                cols.append(a.cells[road][0])  # type: ignore[index]
    return max(cols, default=-1)


def _frame_for(board: Board, road: str, x: float, y: float, cell: float,
               window: int | None, with_asks: bool, min_columns: int = 1) -> _Frame:
    """Full shoe (``window`` None) or the last ``window`` columns holding the newest cell."""
    last = _last_column(board, road, with_asks)
    if window is None:
        return _Frame(x, y, cell, 0, max(last + 1, min_columns))
    return _Frame(x, y, cell, max(0, last - window + 1), window)


def road_svg(board: Board, road: str, *, theme: str = "classic", window: int | None = None,
             cell: float = CELL, labels: Mapping[str, str] | None = None,
             bead_text: str = "outcome", ask: str | None = None) -> str:
    """One road as a standalone SVG document."""
    t = get_theme(theme)
    lab = {**DEFAULT_LABELS, **(labels or {})}
    size = cell if road in ("bead_plate", "big_road") else cell / 2
    frame = _frame_for(board, road, 0, 0, size, window, ask is not None)
    body = _road_body(board, road, frame, t, lab, bead_text, ask)
    return _document(frame.width, frame.height, t, body)


def _grid_tiles(frame: _Frame, theme: Theme, road: str) -> str:
    """The grid as one tiled pattern: what a screen road's 70-odd columns of lines would
    otherwise cost in markup (half the screen's message) for the same picture."""
    c = _f(frame.cell)
    return (f'<defs><pattern id="cells-{road}" width="{c}" height="{c}" '
            f'patternUnits="userSpaceOnUse"><path d="M {c} 0 L 0 0 0 {c}" fill="none" '
            f'stroke="{theme.grid}" stroke-width="1"/></pattern></defs>'
            f'<rect x="{_f(frame.x)}" y="{_f(frame.y)}" width="{_f(frame.width)}" '
            f'height="{_f(frame.height)}" fill="{theme.background}" stroke="{theme.grid}"/>'
            f'<rect x="{_f(frame.x)}" y="{_f(frame.y)}" width="{_f(frame.width)}" '
            f'height="{_f(frame.height)}" fill="url(#cells-{road})"/>')


def _road_body(board: Board, road: str, frame: _Frame, theme: Theme,
               labels: Mapping[str, str], bead_text: str, ask: str | None) -> str:
    return "".join([f'<g class="road {road}">', _grid(frame, theme),
                    *_cells(board, road, frame, theme, labels, bead_text),
                    _ask_overlays(board, road, frame, theme, ask), "</g>"])


def _ask_overlays(board: Board, road: str, frame: _Frame, theme: Theme,
                  ask: str | None) -> str:
    if ask not in ("B", "P", "both") or road == "bead_plate":
        return ""
    return "".join(_ask_overlay(board, road, frame, theme, outcome, ask != "both")
                   for outcome in (("B", "P") if ask == "both" else (ask,)))


def _document(width: float, height: float, theme: Theme, body: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
            f'viewBox="0 0 {_f(width)} {_f(height)}" role="img">'
            f'<rect width="100%" height="100%" fill="{theme.panel}"/>{body}</svg>')


def _ask_marks(board: Board, outcome: str, x: float, cy: float, step: float, cell: float,
               theme: Theme) -> str:
    """The three derived roads' marks if the next coup were ``outcome`` (blank where none)."""
    a = board.ask(outcome)  # type: ignore[arg-type]
    return "".join(_derived_mark(road, colour, x + i * step, cy, cell, theme)
                   for i, road in enumerate(DERIVED)
                   if (colour := a.colors[road]) is not None)


def _ask_box(board: Board, outcome: str, x: float, y: float, cell: float, theme: Theme,
             labels: Mapping[str, str]) -> str:
    """A "B?"/"P?" box: the label, then the three predicted marks (blank where none)."""
    w, h = cell * 4.5, cell * 1.3
    return "".join([
        f'<g class="ask-box ask-{outcome.lower()}">',
        f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" rx="{_f(cell * 0.2)}" '
        f'fill="{theme.background}" stroke="{_outcome_colour(theme, outcome)}" '
        f'stroke-width="2"/>',
        _text(x + cell * 0.75, y + h / 2,
              labels["ask_banker" if outcome == "B" else "ask_player"],
              cell * 0.6, _outcome_colour(theme, outcome), weight="bold"),
        _ask_marks(board, outcome, x + cell * 1.9, y + h / 2, cell * 0.95, cell * 0.8, theme),
        "</g>"])


def scoreboard_svg(board: Board, *, theme: str = "classic", window: int | None = None,
                   cell: float = CELL, labels: Mapping[str, str] | None = None,
                   title: str | None = None, bead_text: str = "outcome",
                   ask: str | None = None) -> str:
    """The whole scoreboard: the five roads, the ask boxes and the shoe's counts.

    ``window``: visible Big Road columns (screens); None draws the full shoe (exports).
    ``ask``: ``"B"`` or ``"P"`` blinks the hypothetical next cell on every road; ``"both"``
    draws both (groups ``ask-b`` / ``ask-p``) for a screen that shows one on request.
    """
    t = get_theme(theme)
    lab = {**DEFAULT_LABELS, **(labels or {})}
    pad, head = cell * 0.5, cell * 1.1
    top = pad + head + (head if title else 0)
    bead_window = None if window is None else max(7, (window + 1) // 2)
    # At least 7 columns: the counts and the ask boxes sit under the Bead Plate.
    bead = _frame_for(board, "bead_plate", pad, top, cell, bead_window, False, 7)
    right_x = bead.x + bead.width + pad
    big = _frame_for(board, "big_road", right_x, top, cell, window, ask is not None)
    derived_window = None if window is None else window * 2
    frames = {"bead_plate": bead, "big_road": big}
    y = big.y + big.height + head
    for road in DERIVED:
        frames[road] = _frame_for(board, road, right_x, y, cell / 2, derived_window,
                                  ask is not None)
        y += frames[road].height + head
    # Derived roads and the Big Road share one width so the board reads as one block.
    width = max(f.width for n, f in frames.items() if n != "bead_plate")
    for name in ("big_road", *DERIVED):
        f = frames[name]
        cols = max(f.columns, round(width / f.cell))
        if window is None:
            frames[name] = _Frame(f.x, f.y, f.cell, f.first, cols)
    total_w = right_x + max(f.width for n, f in frames.items() if n != "bead_plate") + pad
    total_h = max(y - head + pad, bead.y + bead.height + cell * 7)
    parts = []
    if title:
        parts.append(_text(pad, pad + head / 2, title, cell * 0.65, t.text, "start", "bold"))
    for name, frame in frames.items():
        parts.append(_text(frame.x, frame.y - head / 2, lab[name], cell * 0.45, t.text, "start"))
        parts.append(_road_body(board, name, frame, t, lab, bead_text, ask))
    counts = board.counts()
    rows = [("banker", counts["banker"], t.banker), ("player", counts["player"], t.player),
            ("tie", counts["tie"], t.tie), ("banker_pair", counts["banker_pairs"], t.banker),
            ("player_pair", counts["player_pairs"], t.player),
            ("natural", counts["naturals"], t.natural), ("coup", counts["coups"], t.text)]
    cy = bead.y + bead.height + cell * 0.8
    parts.append('<g class="counts">')
    for i, (key, value, colour) in enumerate(rows):
        col_x = bead.x + (i % 2) * bead.width / 2
        row_y = cy + (i // 2) * cell * 0.8
        parts.append(_text(col_x, row_y, f"{lab[key]} {value}", cell * 0.45, colour, "start"))
    parts.append("</g>")
    box_y = cy + 4 * cell * 0.8
    parts.append(_ask_box(board, "B", bead.x, box_y, cell, t, lab))
    parts.append(_ask_box(board, "P", bead.x, box_y + cell * 1.6, cell, t, lab))
    total_h = max(total_h, box_y + cell * 3.2 + pad)
    return _document(total_w, total_h, t, "".join(parts))


#: Columns every screen road is drawn with at least: empty grid for the widest screen's box.
SCREEN_COLUMNS = 72


def _newest_column(board: Board, road: str) -> int:
    """The rightmost column a screen must show: the next bead's column on the Bead Plate,
    the newest cell or hypothetical (ask) cell elsewhere."""
    if road == "bead_plate":
        return len(board) // ROWS
    return _last_column(board, road, True)


@dataclass(frozen=True, slots=True)
class ScreenRoad:
    """A screen road in the parts a live screen replaces one by one: the ``<svg>``
    element's changing attributes, the grid, each cell's markup from index ``start`` on (in
    the order of the road's list in the JSON contract, so a board delta's ``from`` says
    which to redraw), and the ask overlays."""

    road: str
    attrs: dict[str, str]  # viewBox, data-columns, data-last
    grid: str
    start: int
    cells: list[str]
    asks: str
    label: str

    def svg(self, cells: Sequence[str] | None = None) -> str:
        """The whole ``<svg>``; ``cells``: every cell's markup (else this road's own, which
        must then start at the first cell)."""
        if cells is None:
            if self.start:
                raise ValueError("a road drawn from a later cell needs every cell's markup")
            cells = self.cells
        a = self.attrs
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="road-svg" '
                f'viewBox="{a["viewBox"]}" preserveAspectRatio="xMinYMin meet" '
                f'data-cell="{CELL}" data-rows="{ROWS}" data-columns="{a["data-columns"]}" '
                f'data-last="{a["data-last"]}" role="img" aria-label="{self.label}">'
                f'<g class="road {self.road}">{self.grid}<g class="marks">'
                f'{"".join(f"<g>{c}</g>" for c in cells)}</g>'
                f'<g class="ask-cells">{self.asks}</g></g></svg>')


def screen_road(board: Board, road: str, *, theme: str = "dark",
                labels: Mapping[str, str] | None = None, ask: str | None = "both",
                visible: int = 24, min_columns: int = SCREEN_COLUMNS,
                start: int = 0) -> ScreenRoad:
    """One road for a screen that decides itself how many columns fit, in parts
    (:class:`ScreenRoad`; ``start``: draw the cells from that index on only).

    A screen gives each road its own box, so every road (derived ones too) is drawn at
    ``CELL`` units per cell, with every column of the shoe plus empty grid up to
    ``min_columns``. ``data-last`` is the newest column and ``data-columns`` the drawn
    ones: the page's script sets the viewBox to the newest columns that fit the box at
    square cells. The initial viewBox shows the newest ``visible`` columns (no script).
    Each cell is its own group, so a live screen can replace cells from one on.
    """
    t = get_theme(theme)
    lab = {**DEFAULT_LABELS, **(labels or {})}
    last = _newest_column(board, road)
    frame = _Frame(0, 0, CELL, 0, max(last + 1, min_columns))
    shown = min(visible, frame.columns)
    first = max(0, last + 1 - shown)
    attrs = {"viewBox": f"{_f(first * CELL)} 0 {_f(shown * CELL)} {_f(frame.height)}",
             "data-columns": str(frame.columns), "data-last": str(last)}
    return ScreenRoad(road, attrs, _grid_tiles(frame, t, road), start,
                      _cells(board, road, frame, t, lab, "outcome", start),
                      _ask_overlays(board, road, frame, t, ask),
                      escape(lab[road], {'"': "&quot;"}))


def screen_road_svg(board: Board, road: str, *, theme: str = "dark",
                    labels: Mapping[str, str] | None = None, ask: str | None = "both",
                    visible: int = 24, min_columns: int = SCREEN_COLUMNS) -> str:
    """:func:`screen_road` as one ``<svg>``."""
    return screen_road(board, road, theme=theme, labels=labels, ask=ask, visible=visible,
                       min_columns=min_columns).svg()


def ask_marks_svg(board: Board, outcome: str, theme: str = "dark") -> str:
    """The three marks an ask box shows (Big Eye Boy, Small Road, Cockroach Pig), if the
    next coup were ``outcome``, as a small standalone SVG of three cells."""
    t = get_theme(theme)
    body = _ask_marks(board, outcome, CELL / 2, CELL / 2, CELL * 1.25, CELL, t)
    width = CELL * (1.25 * (len(DERIVED) - 1) + 1)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="ask-marks" '
            f'viewBox="0 0 {_f(width)} {CELL}" role="img">{body}</svg>')


def key_mark_svg(count: str, theme: str = "dark") -> str:
    """The key beside a count (``banker``, ``player``, ``tie``, ``banker_pair``,
    ``player_pair``, ``natural``): the mark that count has on the roads — the Bead Plate's
    disc (a square or diamond in the colour-blind theme), a pair dot in its corner of a
    cell (Banker top-left, Player bottom-right), the natural star — as a one-cell SVG."""
    t = get_theme(theme)
    c, s = CELL / 2, CELL
    if count in _OUTCOME_OF:
        outcome = _OUTCOME_OF[count]
        mark = _shape(_kind(t, outcome), c, c, s * 0.42, _outcome_colour(t, outcome), True, 0)
    elif count in ("banker_pair", "player_pair"):
        corner = -1 if count == "banker_pair" else 1
        mark = (_shape("circle", c, c, s * 0.36, t.grid, False, s * 0.08)
                + f'<circle cx="{_f(c + corner * s * 0.27)}" cy="{_f(c + corner * s * 0.27)}" '
                f'r="{_f(s * 0.17)}" fill="{t.banker if corner < 0 else t.player}"/>')
    elif count == "natural":
        mark = _star(c, c, s * 0.46, t.natural)
    else:
        raise ValueError(f"no key mark for {count!r}")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="key" viewBox="0 0 {CELL} {CELL}" '
            f'aria-hidden="true">{mark}</svg>')
