"""Draw the renderer's SVG on a PDF page as vector primitives.

The report shows exactly what :mod:`roads.render.svg` drew, element for element — the same
renderer as the screens — but a general SVG engine (fpdf2's own) spends ~2 ms per element,
~20 s on a table-day. The renderer emits only ``rect``, ``line``, ``circle``, ``polygon``
and ``text`` with a fixed set of attributes, so this translator maps each one to the fpdf2
call that draws it (~20 µs); anything else is an error, never silently dropped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from fpdf import FPDF

_NS = "{http://www.w3.org/2000/svg}"
_IGNORED = {"g", "animate", "svg"}


def _rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def _paint(pdf: FPDF, el: ET.Element, scale: float) -> str:
    """Set fill/stroke from the element; the fpdf2 style string ('F', 'D', 'DF' or '')."""
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


def draw_svg(pdf: FPDF, svg: str, x: float, y: float, width: float, font: str) -> float:
    """Draw ``svg`` with its top-left at (x, y), ``width`` wide; returns the drawn height."""
    root = ET.fromstring(svg)
    w_px, h_px = float(root.get("width", "0")), float(root.get("height", "0"))
    k = width / w_px

    def X(v: str | None) -> float:
        return x + float(v or 0) * k

    def Y(v: str | None) -> float:
        return y + float(v or 0) * k

    for el in root.iter():
        tag = el.tag.removeprefix(_NS)
        a = el.get
        if tag in _IGNORED:
            continue
        if tag == "rect":
            rw = w_px if a("width") == "100%" else float(a("width") or 0)
            rh = h_px if a("height") == "100%" else float(a("height") or 0)
            style = _paint(pdf, el, k)
            if style:
                rx = float(a("rx") or 0) * k
                pdf.rect(X(a("x")), Y(a("y")), rw * k, rh * k, style=style,
                         round_corners=rx > 0, corner_radius=rx)
        elif tag == "line":
            pdf.set_draw_color(*_rgb(a("stroke") or "#000000"))
            pdf.set_line_width(float(a("stroke-width") or 1) * k)
            pdf.line(X(a("x1")), Y(a("y1")), X(a("x2")), Y(a("y2")))
        elif tag == "circle":
            r = float(a("r") or 0) * k
            style = _paint(pdf, el, k)
            if style:
                pdf.circle(X(a("cx")), Y(a("cy")), r, style=style)
        elif tag == "polygon":
            pts = [tuple(float(v) for v in p.split(",")) for p in (a("points") or "").split()]
            style = _paint(pdf, el, k)
            if style:
                pdf.polygon([(x + px * k, y + py * k) for px, py in pts], style=style)
        elif tag == "text":
            _text(pdf, el, X(a("x")), Y(a("y")), k, font)
        else:
            raise ValueError(f"the report cannot draw SVG element <{tag}>")
    pdf.set_draw_color(0)
    pdf.set_line_width(0.2)
    return h_px * k


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
