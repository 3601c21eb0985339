"""Reading a server-rendered listing back out of its HTML (the tests read what a person
sees: each row's cell texts and links, the form's chosen values)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Row:
    cells: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


class _Table(HTMLParser):
    def __init__(self, css_class: str, form: str | None = None) -> None:
        super().__init__()
        self.css_class, self.depth = css_class, 0
        self.rows: list[Row] = []
        self.form, self.in_form = form, form is None
        self.row: Row | None = None
        self.cell: list[str] | None = None
        self.selected: dict[str, str] = {}
        self.values: dict[str, str] = {}
        self._select: str | None = None
        self._option: tuple[str | None, bool] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and self.css_class in (a.get("class") or "").split():
            self.depth = 1
        elif self.depth and tag == "tr" and self.cell is None:
            self.row = Row()
        elif self.row is not None and tag == "td":
            self.cell = []
        elif self.cell is not None and tag == "a":
            self.row.links.append(a.get("href") or "")  # type: ignore[union-attr]
        if tag == "form":
            self.in_form = self.form is None or a.get("action") == self.form
        if not self.in_form:
            return
        if tag == "select":
            self._select = a.get("name")
        elif tag == "option" and self._select:
            self._option = (a.get("value"), "selected" in a)
        elif tag == "input" and a.get("name") and a.get("value") is not None:
            self.values.setdefault(a["name"] or "", a["value"] or "")

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)
        if self._option is not None and self._option[1] and self._select:
            self.selected.setdefault(self._select, self._option[0]
                                     if self._option[0] is not None else data.strip())

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self.cell is not None and self.row is not None:
            self.row.cells.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row.cells:
                self.rows.append(self.row)
            self.row = None
        elif tag == "table":
            self.depth = 0
        elif tag == "select":
            self._select = None
        elif tag == "option":
            self._option = None
        elif tag == "form" and self.form is not None:
            self.in_form = False


def table_rows(html: str, css_class: str) -> list[Row]:
    """The body rows of the first table of class ``css_class``."""
    parser = _Table(css_class)
    parser.feed(html)
    return parser.rows


def form_values(html: str, action: str) -> tuple[dict[str, str], dict[str, str]]:
    """The input values and selected options, by field name, of the page's first form
    that posts to ``action``."""
    parser = _Table("", action)
    parser.feed(html)
    return parser.values, parser.selected
