"""Draw the renderer's SVG on a PDF page as vector primitives.

The report shows exactly what :mod:`roads.render.svg` drew, element for element — the same
renderer as the screens — but a general SVG engine (fpdf2's own) spends ~2 ms per element,
~20 s on a table-day. The renderer emits only ``rect``, ``line``, ``circle``, ``polygon``
and ``text`` with a fixed set of attributes, so this translator writes each shape as PDF
path operators and each text through fpdf2 (fonts, encoding); anything else is an error,
never silently dropped.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

from fpdf import FPDF

_NS = "{http://www.w3.org/2000/svg}"
_IGNORED = {"g", "animate", "svg"}


def _rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def _colour(colour: str, operator: str) -> str:
    """A PDF colour operator: ``rg`` fills, ``RG`` strokes."""
    r, g, b = _rgb(colour)
    return f"{r / 255:.3f} {g / 255:.3f} {b / 255:.3f} {operator}"


#: Bezier control distance for a quarter circle of radius 1.
_KAPPA = 4 / 3 * (math.sqrt(2) - 1)


class _Shapes:
    """Shapes written straight into the page as PDF path operators.

    fpdf2's drawing calls keep a full graphics state per call (~100 µs each, a third of a
    table-day export); a board is ~800 plain shapes a shoe, so they are written as the same
    operators fpdf2 itself would write, each run wrapped in ``q``/``Q`` so fpdf2's idea of
    the current colours and line width stays true.
    """

    def __init__(self, pdf: FPDF) -> None:
        self.pdf, self.ops = pdf, ["q"]
        self.k, self.h = pdf.k, pdf.h
        self.state: dict[str, str] = {}  # the run's current colours and width

    def _set(self, op: str) -> None:
        kind = op.rsplit(" ", 1)[1]
        if self.state.get(kind) != op:
            self.state[kind] = op
            self.ops.append(op)

    def _xy(self, x: float, y: float) -> str:
        return f"{x * self.k:.2f} {(self.h - y) * self.k:.2f}"

    def paint(self, fill: str | None, stroke: str | None, width: float) -> str | None:
        """Set the colours; the path-painting operator, or None when nothing shows."""
        if fill:
            self._set(_colour(fill, "rg"))
        if stroke:
            self._set(_colour(stroke, "RG"))
            self._set(f"{width * self.k:.2f} w")
        if fill and stroke:
            return "B"
        return "f" if fill else "S" if stroke else None

    def rect(self, x: float, y: float, w: float, h: float, op: str) -> None:
        self.ops.append(f"{self._xy(x, y)} {w * self.k:.2f} {-h * self.k:.2f} re {op}")

    def line(self, x1: float, y1: float, x2: float, y2: float) -> None:
        self.ops.append(f"{self._xy(x1, y1)} m {self._xy(x2, y2)} l S")

    def circle(self, cx: float, cy: float, r: float, op: str) -> None:
        c = _KAPPA * r
        xy = self._xy
        self.ops.append(
            f"{xy(cx + r, cy)} m {xy(cx + r, cy - c)} {xy(cx + c, cy - r)} {xy(cx, cy - r)} c "
            f"{xy(cx - c, cy - r)} {xy(cx - r, cy - c)} {xy(cx - r, cy)} c "
            f"{xy(cx - r, cy + c)} {xy(cx - c, cy + r)} {xy(cx, cy + r)} c "
            f"{xy(cx + c, cy + r)} {xy(cx + r, cy + c)} {xy(cx + r, cy)} c {op}")

    def polygon(self, points: list[tuple[float, float]], op: str) -> None:
        if not points:
            return
        first, *rest = points
        path = " ".join(f"{self._xy(px, py)} l" for px, py in rest)
        self.ops.append(f"{self._xy(*first)} m {path} h {op}")

    def flush(self) -> None:
        """Write the pending shapes (before fpdf2 draws again: text keeps the order)."""
        if len(self.ops) > 1:
            self.pdf._out("\n".join([*self.ops, "Q"]))
        self.ops, self.state = ["q"], {}


def draw_svg(pdf: FPDF, svg: str, x: float, y: float, width: float, font: str) -> float:
    """Draw ``svg`` with its top-left at (x, y), ``width`` wide; returns the drawn height."""
    root = ET.fromstring(svg)
    w_px, h_px = float(root.get("width", "0")), float(root.get("height", "0"))
    k = width / w_px
    shapes = _Shapes(pdf)

    def X(v: str | None) -> float:
        return x + float(v or 0) * k

    def Y(v: str | None) -> float:
        return y + float(v or 0) * k

    def paint(el: ET.Element) -> str | None:
        fill, stroke = el.get("fill", "#000000"), el.get("stroke")
        return shapes.paint(None if fill == "none" else fill,
                            None if not stroke or stroke == "none" else stroke,
                            float(el.get("stroke-width", "1")) * k)

    for el in root.iter():
        tag = el.tag.removeprefix(_NS)
        a = el.get
        if tag in _IGNORED:
            continue
        if tag == "rect":
            rw = w_px if a("width") == "100%" else float(a("width") or 0)
            rh = h_px if a("height") == "100%" else float(a("height") or 0)
            rx = float(a("rx") or 0) * k
            if rx > 0:  # rounded: rare, fpdf2 draws its corner arcs
                shapes.flush()
                style = _paint(pdf, el, k)
                if style:
                    pdf.rect(X(a("x")), Y(a("y")), rw * k, rh * k, style=style,
                             round_corners=True, corner_radius=rx)
            elif op := paint(el):
                shapes.rect(X(a("x")), Y(a("y")), rw * k, rh * k, op)
        elif tag == "line":
            shapes.paint(None, a("stroke") or "#000000", float(a("stroke-width") or 1) * k)
            shapes.line(X(a("x1")), Y(a("y1")), X(a("x2")), Y(a("y2")))
        elif tag == "circle":
            if op := paint(el):
                shapes.circle(X(a("cx")), Y(a("cy")), float(a("r") or 0) * k, op)
        elif tag == "polygon":
            pts = [tuple(float(v) for v in p.split(",")) for p in (a("points") or "").split()]
            if op := paint(el):
                shapes.polygon([(x + px * k, y + py * k) for px, py in pts], op)
        elif tag == "text":
            shapes.flush()
            _text(pdf, el, X(a("x")), Y(a("y")), k, font)
        else:
            raise ValueError(f"the report cannot draw SVG element <{tag}>")
    shapes.flush()
    pdf.set_draw_color(0)
    pdf.set_line_width(0.2)
    return h_px * k


def _paint(pdf: FPDF, el: ET.Element, scale: float) -> str:
    """Set fill/stroke through fpdf2; its style string ('F', 'D', 'DF' or '')."""
    fill, stroke = el.get("fill", "#000000"), el.get("stroke")
    style = ""
    if fill != "none":
        pdf.set_fill_color(*_rgb(fill))
        style += "F"
    if stroke and stroke != "none":
        pdf.set_draw_color(*_rgb(stroke))
        pdf.set_line_width(float(el.get("stroke-width", "1")) * scale)
        style = "D" + style
    return style


def _text(pdf: FPDF, el: ET.Element, x: float, y: float, k: float, font: str) -> None:
    size_pt = float(el.get("font-size") or 10) * k / 0.3528  # user units (mm) -> points
    style = "B" if el.get("font-weight") == "bold" else ""
    pdf.set_font(font, style, size_pt)
    pdf.set_text_color(*_rgb(el.get("fill") or "#000000"))
    text: Any = el.text or ""
    if font != "body":  # the core fonts are Latin-1
        text = text.encode("latin-1", "replace").decode("latin-1")
    width = pdf.get_string_width(text)
    anchor = el.get("text-anchor", "start")
    left = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
    # dominant-baseline="central": the glyphs' middle on y (cap height ~0.7 em).
    pdf.text(left, y + size_pt * 0.3528 * 0.35, text)
    pdf.set_text_color(0)
