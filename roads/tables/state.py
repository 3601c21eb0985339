"""The read models of live tables: what every screen, the operator page and the API show.

A table's state is built from its journal events alone (indexed queries on one table), its
open shoe's coups converted and corrected by the store (the same functions its read port
uses), so a screen, the API and an export agree coup for coup. ``seq`` — the table's newest
journal sequence number — versions the state: screens never draw an older state over a newer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from roads.store import Event, Journal, apply_corrections, shoe_frames

TableStatus = Literal["idle", "open", "between_shoes", "closed"]


@dataclass(frozen=True, slots=True)
class TableState:
    """A table now: ``open`` (a shoe in play), ``between_shoes``, ``closed`` or ``idle``."""

    table_id: str
    status: TableStatus
    seq: int
    shoe_id: str | None = None
    shoe_number: int = 0
    rules: str | None = None
    burn_cards: list[str] | None = None
    coups: list[dict[str, Any]] = field(default_factory=list)
    pending_corrections: list[dict[str, Any]] = field(default_factory=list)
    opened_at: str | None = None
    source: str = "live"

    def summary(self) -> dict[str, Any]:
        """The ``GET /api/tables`` entry."""
        last = self.coups[-1] if self.coups else None
        return {"table_id": self.table_id, "state": self.status, "shoe_id": self.shoe_id,
                "shoe_number": self.shoe_number, "coups": len(self.coups),
                "rules": self.rules, "last_outcome": last["outcome"] if last else None,
                "seq": self.seq}


def corrected_coups(events: list[Event]) -> pl.DataFrame:
    """A journaled shoe's canonical coups with its corrections applied, in coup order."""
    coups, _ = shoe_frames(events)
    return apply_corrections(coups, events).sort("coup")


def coup_rows(coups: pl.DataFrame) -> list[dict[str, Any]]:
    return coups.with_columns(pl.col("outcome").cast(pl.String),
                              pl.col("source").cast(pl.String),
                              pl.col("entry").cast(pl.String)).to_dicts()


def pending(events: list[Event]) -> list[dict[str, Any]]:
    """Correction requests of a shoe still waiting for a decision."""
    decided = {e.payload.get("request") for e in events
               if e.kind in ("coup_voided", "coup_amended", "correction_rejected")}
    return [{"request": e.seq, "coup": e.payload["coup"], "action": e.payload["action"],
             "reason": e.payload["reason"], "new": e.payload.get("new"), "by": e.actor,
             "at": e.at} for e in events
            if e.kind == "correction_requested" and e.seq not in decided]


def table_state(journal: Journal, table_id: str) -> TableState:
    """The table's state from its journal events."""
    seq = journal.table_head(table_id)
    last = journal.last(table_id, ("shoe_opened", "shoe_closed", "table_closed"))
    if last is None:
        return TableState(table_id, "idle", seq)
    shoes = journal.count(table_id, "shoe_opened")
    if last.kind == "table_closed":
        return TableState(table_id, "closed", seq, shoe_number=shoes)
    if last.kind == "shoe_closed":
        return TableState(table_id, "between_shoes", seq, shoe_id=last.shoe_id,
                          shoe_number=shoes)
    events = journal.events(table_id, last.shoe_id)
    return TableState(table_id, "open", seq, shoe_id=last.shoe_id, shoe_number=shoes,
                      rules=last.payload.get("rules"), burn_cards=last.payload.get("burn_cards"),
                      coups=coup_rows(corrected_coups(events)), pending_corrections=pending(events),
                      opened_at=last.at, source=str(last.payload.get("source", "live")))
