"""The bundle's PDF report: what a compliance officer reads, drawn by the screens' renderer.

fpdf2 (pure Python, maintained, Unicode fonts, vector drawing) writes A4 or Letter pages: a
cover (casino, tables, shoes, rule sets, road conventions, period, software and schema
versions, who exported and when), then per shoe the full-shoe board from
:func:`roads.render.scoreboard_svg` (translated element by element,
:mod:`roads.audit.svgpdf`) and every coup, then every correction (original and
amended values, who asked, who approved, when, why), then the statistics, randomness tests
and integrity findings. Every page carries its number and the bundle's data digest, which
``roads verify`` recomputes from the bundle's data files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
from fpdf import FPDF

from roads.audit.svgpdf import draw_svg
from roads.board import Board
from roads.render import scoreboard_svg
from roads.store import MARK

FORMATS = ("A4", "Letter")
_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")


class _Report(FPDF):
    def __init__(self, page_format: str, digest: str, title: str, unicode: bool) -> None:
        super().__init__(orientation="P", unit="mm", format=page_format)
        self.digest = digest
        self.title_line = title
        self.set_auto_page_break(auto=True, margin=16)
        self.set_margins(14, 14, 14)
        self.alias_nb_pages()
        if unicode and (_FONT_DIR / "DejaVuSans.ttf").is_file():
            # A Unicode font, so table names and operators in any script print as typed
            # (only when some text needs it: embedding it costs half a second).
            self.add_font("body", "", str(_FONT_DIR / "DejaVuSans.ttf"))
            self.add_font("body", "B", str(_FONT_DIR / "DejaVuSans-Bold.ttf"))
            self.family = "body"
        else:
            self.family = "helvetica"

    def text_safe(self, text: str) -> str:
        if self.family == "body":
            return text
        text = text.replace("–", "-").replace("—", "-")
        return text.encode("latin-1", "replace").decode("latin-1")

    def header(self) -> None:
        self.set_font(self.family, "", 7)
        self.set_text_color(90)
        self.cell(0, 4, self.text_safe(self.title_line), new_x="LMARGIN", new_y="NEXT")
        self.ln(2)
        self.set_text_color(0)

    def footer(self) -> None:
        self.set_y(-11)
        self.set_font(self.family, "", 7)
        self.set_text_color(90)
        self.cell(0, 4, f"Page {self.page_no()} of {{nb}}    bundle data digest (SHA-256) "
                        f"{self.digest}", align="C")
        self.set_text_color(0)

    def heading(self, text: str, size: int = 13) -> None:
        self.set_font(self.family, "B", size)
        self.cell(0, 8, self.text_safe(text), new_x="LMARGIN", new_y="NEXT")
        self.set_font(self.family, "", 8)

    def wrap(self, text: str, width: float) -> list[str]:
        """Greedy word wrap to ``width`` mm (long words split): nothing is ever cut off."""
        if self.get_string_width(text) <= width:
            return [text]
        lines, line = [], ""
        for word in text.split(" "):
            candidate = f"{line} {word}" if line else word
            if self.get_string_width(candidate) <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            while self.get_string_width(word) > width:
                cut = max(1, int(len(word) * width / self.get_string_width(word)))
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        return [*lines, line] if line else lines

    def grid(self, head: list[str], widths: list[float], rows: Iterable[list[str]]) -> None:
        """A table that wraps long values and repeats its header on every page it spans.

        Drawn with low-level text and rectangles: fpdf2's table layout costs ~1 ms a cell,
        ten seconds for a table-day."""
        def draw(cells: list[str], bold: bool) -> None:
            self.set_font(self.family, "B" if bold else "", 7)
            lines = [self.wrap(c, w - 1.2) for c, w in zip(cells, widths, strict=True)]
            height = 3.3 * max(len(x) for x in lines) + 1.2
            if self.will_page_break(height):
                self.add_page()
                if not bold:
                    draw(head, True)
                    self.set_font(self.family, "", 7)
            x, y = self.l_margin, self.get_y()
            for cell, w in zip(lines, widths, strict=True):
                if bold:
                    self.set_fill_color(230, 233, 238)
                self.rect(x, y, w, height, style="DF" if bold else "D")
                for i, line in enumerate(cell):
                    self.text(x + 0.6, y + 3.2 + i * 3.3, line)
                x += w
            self.set_xy(self.l_margin, y + height)

        draw(head, True)
        for row in rows:
            draw([self.text_safe(t) for t in row], False)


def _cards(value: Any) -> str:
    return " ".join(value) if value else ""


def _flags(row: dict[str, Any]) -> str:
    names = (("player_pair", "P pair"), ("banker_pair", "B pair"), ("natural", "natural"))
    return ", ".join(label for key, label in names if row.get(key))


def _totals(row: dict[str, Any]) -> str:
    if row.get("player_total") is None:
        return ""
    return f"{row['player_total']}-{row['banker_total']}"


def _cover(pdf: _Report, meta: dict[str, Any], coups: pl.DataFrame,
           shoes: pl.DataFrame) -> None:
    pdf.add_page()
    pdf.heading(meta.get("casino") or "Baccarat Roads", 18)
    pdf.heading("Compliance export", 14)
    times = coups["dealt_at"].drop_nulls()
    period = "no coup times recorded"
    if times.len():
        first, last = times.min(), times.max()
        assert isinstance(first, datetime) and isinstance(last, datetime)
        period = f"{first:%Y-%m-%d %H:%M:%S} – {last:%Y-%m-%d %H:%M:%S} UTC"
    rules = sorted({str(r) for r in shoes["rules"].drop_nulls()}) if shoes.height else []
    voided = coups.filter(pl.col(MARK) == "voided").height if MARK in coups.columns else 0
    open_shoes = [f"{t}/{s}" for t, s, o in shoes.select("table_id", "shoe_id", "open")
                  .iter_rows() if o] if "open" in shoes.columns else []
    lines = [
        ("Tables", ", ".join(sorted(set(coups["table_id"].to_list())))),
        ("Shoes", f"{coups.select('table_id', 'shoe_id').unique().height}: " +
         ", ".join(sorted(set(coups["shoe_id"].to_list())))[:600]),
        ("Coups", f"{coups.height:,}" + (f" ({voided:,} voided, listed and marked)"
                                          if voided else "")),
        ("Open shoes", ", ".join(open_shoes) or "none: every shoe was closed"),
        ("Rule sets", ", ".join(rules) or "not recorded"),
        ("Road conventions", "ROADS.md: leading ties drawn on the first Big Road cell "
                             "(first-cell); derived roads from logical column lengths; "
                             "dragon tails turn right at row 6"),
        ("Period", period),
        ("Selection", meta.get("selection", "")),
        ("Software", f"baccarat-roads {meta['software_version']}, canonical schema "
                     f"v{meta['schema_version']}"),
        ("Exported by", f"{meta['exported_by']} at {meta['created_at']}"),
        ("Data digest", pdf.digest),
    ]
    for label, value in lines:
        pdf.set_font(pdf.family, "B", 9)
        pdf.cell(38, 6, label)
        pdf.set_font(pdf.family, "", 9)
        pdf.multi_cell(0, 6, pdf.text_safe(str(value)), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font(pdf.family, "", 8)
    pdf.multi_cell(0, 4.5, "The files of this bundle are listed with their SHA-256 in "
                   "manifest.json; `roads verify BUNDLE` re-checks every digest, row count, "
                   "the journal hash chain, the signature when present, and this digest. "
                   "Statistics are information about the recorded coups, not advice.")


def _shoe_pages(pdf: _Report, shoe: pl.DataFrame, still_open: bool) -> None:
    first = shoe.row(0, named=True)
    pdf.add_page()
    rows = shoe.to_dicts()
    standing = [r for r in rows if r.get(MARK) != "voided"]
    state = ", OPEN: still in play when exported" if still_open else ""
    pdf.heading(f"Table {first['table_id']} — shoe {first['shoe_id']} ({len(standing)} coups"
                f"{state})")
    svg = scoreboard_svg(Board.from_coups(standing), theme="classic")
    usable = pdf.w - pdf.l_margin - pdf.r_margin
    width = float(svg.split('width="', 1)[1].split('"', 1)[0])
    height = float(svg.split('height="', 1)[1].split('"', 1)[0])
    draw_w = min(usable, width * 0.3)
    draw_h = draw_w * height / width
    if pdf.will_page_break(draw_h):
        pdf.add_page()
    draw_svg(pdf, svg, pdf.l_margin, pdf.get_y(), draw_w, pdf.family)
    pdf.set_font(pdf.family, "", 7)
    pdf.set_y(pdf.get_y() + draw_h + 4)
    pdf.grid(["coup", "outcome", "player cards", "banker cards", "totals", "pairs / natural",
               "entered (by)", "dealt at (UTC)", "correction"],
              [10, 13, 22, 22, 11, 24, 32, 33, 15],
              ([str(r["coup"]), str(r["outcome"]), _cards(r["player_cards"]),
                _cards(r["banker_cards"]), _totals(r), _flags(r),
                f"{r['entry'] or r['source']} ({r['entered_by'] or '-'})",
                f"{r['dealt_at']:%Y-%m-%d %H:%M:%S}" if r["dealt_at"] else "",
                str(r.get(MARK) or "")]
               for r in rows))


def _corrections(pdf: _Report, corrections: pl.DataFrame) -> None:
    pdf.add_page()
    pdf.heading(f"Corrections ({corrections.height})")
    if corrections.is_empty():
        pdf.cell(0, 6, "No coup in this export was voided or amended.")
        pdf.ln()
        return
    pdf.grid(["#", "when (UTC)", "table / shoe / coup", "change", "original", "amended",
               "asked by", "approved by", "reason"],
              [8, 29, 24, 11, 25, 22, 20, 21, 22],
              ([str(r["seq"]), str(r["at"])[:19].replace("T", " "),
                f"{r['table_id']}/{r['shoe_id']}/{r['coup']}",
                "void" if r["kind"] == "coup_voided" else "amend",
                " ".join(x for x in (r["original_outcome"], r["original_player_cards"],
                                     r["original_banker_cards"]) if x),
                "—" if r["kind"] == "coup_voided" else
                " ".join(x for x in (r["amended_outcome"], r["amended_player_cards"],
                                     r["amended_banker_cards"]) if x),
                str(r["requested_by"] or ""), str(r["approved_by"] or ""),
                str(r["reason"] or "")]
               for r in corrections.iter_rows(named=True)))


def _statistics(pdf: _Report, report: dict[str, Any]) -> None:
    pdf.add_page()
    pdf.heading("Statistics")
    stats = report.get("statistics") or {}
    if stats.get("coups"):
        def share(m: dict[str, Any] | None) -> list[str]:
            if not m or m.get("share") is None:
                return ["", "", "", ""]
            lo, hi = m["ci99"]
            return [f"{m['count']:,}", f"{m['share']:.4%}", f"{m['expected_share']:.4%}",
                    f"{lo:.2%} – {hi:.2%}" + ("  OUTSIDE" if m["outside_ci99"] else "")]
        rows = [["Banker", *share(stats["outcomes"]["banker"])],
                ["Player", *share(stats["outcomes"]["player"])],
                ["Tie", *share(stats["outcomes"]["tie"])],
                ["Player pair", *share(stats["pairs"]["player"])],
                ["Banker pair", *share(stats["pairs"]["banker"])],
                ["Natural", *share(stats["naturals"])]]
        pdf.grid(["", "count", "share", "exact expectation", "99% interval"],
                  [30, 25, 30, 35, 60], rows)
        pdf.ln(3)
        streaks = stats.get("streaks", {})
        pdf.cell(0, 5, f"Coups {stats['coups']:,} in {stats['shoes']:,} shoe(s); longest "
                       f"Banker run {streaks.get('longest_banker_run')}, longest Player run "
                       f"{streaks.get('longest_player_run')}.")
        pdf.ln(7)
    tests = (report.get("randomness") or {}).get("tests", [])
    pdf.heading("Randomness tests (Holm-adjusted, flagged at 99%)", 11)
    pdf.grid(["test", "kind", "p-value", "adjusted", "flag"], [60, 35, 30, 30, 25],
              ([t["test"], t["kind"], f"{t['p_value']:.5f}", f"{t['p_adjusted']:.5f}",
                "FLAG" if t["flagged"] else ""] for t in tests))
    pdf.ln(4)
    findings = report.get("integrity") or []
    pdf.heading(f"Integrity findings ({len(findings)})", 11)
    if not findings:
        pdf.cell(0, 6, "None: every check passed.")
        pdf.ln()
    for f in findings:
        pdf.multi_cell(0, 4.5, pdf.text_safe(
            f"[{f['severity']}] {f['table_id']}/{f['shoe_id']} {f['check']}: "
            f"{f['explanation']}"), new_x="LMARGIN", new_y="NEXT")


def _needs_unicode(meta: dict[str, Any], coups: pl.DataFrame,
                   corrections: pl.DataFrame) -> bool:
    """Whether any recorded text falls outside Latin-1 (the PDF core fonts)."""
    texts = [str(v) for v in meta.values() if v is not None]
    texts += coups["table_id"].unique().to_list() + coups["shoe_id"].unique().to_list()
    for column in ("requested_by", "approved_by", "reason"):
        texts += [t for t in corrections[column].to_list() if t]

    def latin1(text: str) -> bool:
        try:
            text.replace("–", "-").replace("—", "-").encode("latin-1")
        except UnicodeEncodeError:
            return False
        return True
    return not all(latin1(t) for t in texts)


def write_pdf(path: Path, *, coups: pl.DataFrame, shoes: pl.DataFrame,
              corrections: pl.DataFrame, report: dict[str, Any], meta: dict[str, Any],
              digest: str, page_format: str = "A4",
              progress: Callable[[int], None] | None = None) -> None:
    """Write the report to ``path`` (the caller publishes it atomically)."""
    title = f"{meta.get('casino') or 'Baccarat Roads'} — {meta.get('selection', '')}"
    pdf = _Report(page_format, digest, title, _needs_unicode(meta, coups, corrections))
    pdf.set_title("Baccarat Roads compliance export")
    pdf.set_creator(f"baccarat-roads {meta['software_version']}")
    _cover(pdf, meta, coups, shoes)
    still_open = {(t, s) for t, s, o in shoes.select("table_id", "shoe_id", "open").iter_rows()
                  if o} if "open" in shoes.columns else set()
    for (table_id, shoe_id), shoe in coups.sort("table_id", "shoe_id", "coup").group_by(
            "table_id", "shoe_id", maintain_order=True):
        _shoe_pages(pdf, shoe, (table_id, shoe_id) in still_open)
        if progress is not None:
            progress(shoe.height)
    _corrections(pdf, corrections)
    _statistics(pdf, report)
    pdf.output(str(path))
