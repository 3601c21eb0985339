"""The history page's data: every shoe of the record, newest first, a page at a time.

A page is one call of the service's :meth:`~roads.tables.TableService.shoe_page` (an
indexed query over the store's shoe index, never the shoe files), so its cost does not
grow with the record; the table filter offers every table of the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from dashboard import listing
from dashboard.context import Context

#: The state filter: its values and how the form says them.
STATES = {"": "open and closed", "open": "in play", "closed": "closed"}


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """The history page's filters, as its form sends them."""

    table: str | None = None
    start: date | None = None
    end: date | None = None
    state: str | None = None
    page: int = 1

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> HistoryQuery:
        """The filters of a query string; :class:`~dashboard.listing.FilterError` naming
        the field when one cannot be used."""
        start, end = listing.days(query)
        return cls(listing.text(query, "table"), start, end,
                   listing.choice(query, "state", STATES), listing.page_number(query))

    def kept(self) -> dict[str, str]:
        return listing.kept(table=self.table, start=self.start, end=self.end,
                            state=self.state)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""


def history_view(ctx: Context, query: HistoryQuery) -> dict[str, Any]:
    """What the history template shows: the page's shoes, the pager and the tables."""
    still_open = None if query.state is None else query.state == "open"
    shoes, total = ctx.service.shoe_page(query.table, query.start, query.end, still_open,
                                         listing.offset(query.page), listing.PAGE_SIZE)
    rows = [{"table_id": r["table_id"], "shoe_id": r["shoe_id"],
             "href": f"/shoes/{quote(r['table_id'], safe='')}/{quote(r['shoe_id'], safe='')}",
             "state": "in play" if r["open"] else "closed", "started": _when(r["started_at"]),
             "ended": "" if r["open"] else _when(r["ended_at"]), "coups": r["coups"],
             "rules": r["rules"] or "", "source": r["source"] or ""}
            for r in shoes.iter_rows(named=True)]
    tables = ctx.service.record_tables()
    if query.table and query.table not in tables:
        tables = [query.table, *tables]
    return {"rows": rows, "tables": tables, "query": query, "values": query.kept(),
            "states": list(STATES.items()),
            "pages": listing.Pager("/history", query.page, total, ("shoe", "shoes"),
                                   query.kept())}
