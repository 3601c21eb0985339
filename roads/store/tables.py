"""A live table's state, read from the journal: what every screen and the API show.

One function builds it from the journal alone (no Parquet scan), with corrections applied by
:func:`~roads.store.store.apply_corrections` (the one place that applies them), so a screen,
the API and an export agree coup for coup. ``seq`` — the table's newest journal sequence
number — versions the state: screens never draw an older state over a newer one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from roads.store.journal import Event, Journal
from roads.store.store import Store, apply_corrections

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

    def summary(self) -> dict[str, Any]:
        """The ``GET /api/tables`` entry."""
        last = self.coups[-1] if self.coups else None
        return {"table_id": self.table_id, "state": self.status, "shoe_id": self.shoe_id,
                "shoe_number": self.shoe_number, "coups": len(self.coups),
                "rules": self.rules, "last_outcome": last["outcome"] if last else None,
                "seq": self.seq}


def live_frames(store: Store, table_id: str, shoe_id: str
                ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A journaled shoe's canonical coups (corrections applied) and shoe row."""
    events = store.journal.events(table_id, shoe_id)
    coups, shoe = store.shoe_frames(events)
    return apply_corrections(coups, events).sort("coup"), shoe


def _rows(coups: pl.DataFrame) -> list[dict[str, Any]]:
    return coups.with_columns(pl.col("outcome").cast(pl.String),
                              pl.col("source").cast(pl.String)).to_dicts()


def _coup_rows(store: Store, events: list[Event]) -> list[dict[str, Any]]:
    coups, _ = store.shoe_frames(events)
    return _rows(apply_corrections(coups, events).sort("coup"))


def _pending(events: list[Event]) -> list[dict[str, Any]]:
    decided = {e.payload.get("request") for e in events
               if e.kind in ("coup_voided", "coup_amended", "correction_rejected")}
    return [{"request": e.seq, "coup": e.payload["coup"], "action": e.payload["action"],
             "reason": e.payload["reason"], "new": e.payload.get("new"), "by": e.actor,
             "at": e.at} for e in events
            if e.kind == "correction_requested" and e.seq not in decided]


def table_state(store: Store, table_id: str) -> TableState:
    """The table's state from its journal events (cheap: indexed queries on one table)."""
    journal: Journal = store.journal
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
                      coups=_coup_rows(store, events), pending_corrections=_pending(events),
                      opened_at=last.at)


def shoe_coups(store: Store, table_id: str, shoe_id: str) -> list[dict[str, Any]]:
    """A shoe's coups with corrections applied, live or sealed (the history browser)."""
    events = store.journal.events(table_id, shoe_id)
    if events and not any(e.kind == "shoe_sealed" for e in events):
        return _coup_rows(store, events)
    return _rows(store.read_coups(table_id, shoe_id))
