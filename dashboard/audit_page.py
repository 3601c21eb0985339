"""The audit page's data: the journal's events in words, filtered and a page at a time.

A page is one indexed query of the journal (the events and how many match) plus, when
corrections are on it, one read of the record for the coups they changed
(:func:`roads.audit.trail.trail_page`); the export form under it starts from the same
filters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from dashboard import listing
from dashboard.context import Context
from roads.audit.trail import ACTION_GROUPS, ACTIONS, NO_TABLE, EventFilter, trail_page


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """The audit page's filters, as its form sends them."""

    table: str | None = None
    shoe: str | None = None
    actor: str | None = None
    action: str | None = None  # a kind of event, or a group of kinds
    start: date | None = None
    end: date | None = None
    page: int = 1

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> AuditQuery:
        """The filters of a query string; :class:`~dashboard.listing.FilterError` naming
        the field when one cannot be used."""
        start, end = listing.days(query)
        return cls(listing.text(query, "table"), listing.text(query, "shoe"),
                   listing.text(query, "actor"),
                   listing.choice(query, "action", {**ACTIONS, **ACTION_GROUPS}),
                   start, end, listing.page_number(query))

    def events(self) -> EventFilter:
        """The journal's filter for these choices."""
        kinds = ACTION_GROUPS[self.action][1] if self.action in ACTION_GROUPS else \
            (self.action,) if self.action else ()
        return EventFilter(self.table, self.shoe, self.actor, kinds, self.start, self.end)

    def kept(self) -> dict[str, str]:
        return listing.kept(table=self.table, shoe=self.shoe, actor=self.actor,
                            action=self.action, start=self.start, end=self.end)

    def export_values(self) -> dict[str, str]:
        """The export form's fields from these filters (a bundle is a table's shoe, day or
        range: the events of no table export everything in the range)."""
        values = {k: v for k, v in self.kept().items() if k in ("shoe", "from", "to")}
        if self.table and self.table != NO_TABLE:
            values["table"] = self.table
        return values


def audit_view(ctx: Context, query: AuditQuery) -> dict[str, Any]:
    """What the audit template shows: the page's events in words, the pager, the choices."""
    trail = trail_page(ctx.service.store, query.events(), listing.offset(query.page),
                       listing.PAGE_SIZE)
    tables = ctx.service.journal.tables()
    actors = ctx.service.journal.actors()
    for known, wanted in ((tables, query.table), (actors, query.actor)):
        if wanted and wanted != NO_TABLE and wanted not in known:
            known.insert(0, wanted)  # what the URL asked for stays selected
    return {
        "rows": trail.rows, "values": query.kept(),
        "tables": [(NO_TABLE, "none (logins, users, whole-store exports)"),
                   *((t, t) for t in tables)],
        "actors": actors, "actions": sorted(ACTIONS.items(), key=lambda kv: kv[1]),
        "groups": [(key, label) for key, (label, _) in ACTION_GROUPS.items()],
        "pages": listing.Pager("/audit", query.page, trail.total, ("event", "events"),
                               query.kept()),
        "export_tables": ctx.table_ids(), "export_values": query.export_values()}
