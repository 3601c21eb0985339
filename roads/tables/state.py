"""The read models of live tables: what every screen, the operator page and the API show.

A table's state is built from its journal events alone (indexed queries on one table), its
open shoe's coups converted and corrected by the store (the same functions its read port
uses), so a screen, the API and an export agree coup for coup. ``seq`` — the table's newest
journal sequence number — versions the state: screens never draw an older state over a newer.

:func:`table_state` builds a table from the journal; :class:`LiveTables` builds each table
that way once and then applies each new event to it (what every read of a live table uses).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

import polars as pl

from roads.schema import COUPS
from roads.store import Event, Journal, apply_corrections, coup_row, shoe_frames

if TYPE_CHECKING:  # the boards' compiled kernels load on first use, not with this module
    from roads.board import Board

TableStatus = Literal["idle", "open", "between_shoes", "closed"]
#: More events than this behind the journal and the incremental model starts again from the
#: journal (tables rebuilt on next use) instead of loading the backlog: memory stays bounded.
BACKLOG = 5000
_UTC = ZoneInfo("UTC")
_DECISIONS = ("coup_voided", "coup_amended", "correction_rejected")


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
    decided = {e.payload.get("request") for e in events if e.kind in _DECISIONS}
    return [_request(e) for e in events
            if e.kind == "correction_requested" and e.seq not in decided]


def _request(e: Event) -> dict[str, Any]:
    return {"request": e.seq, "coup": e.payload["coup"], "action": e.payload["action"],
            "reason": e.payload["reason"], "new": e.payload.get("new"), "by": e.actor,
            "at": e.at}


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


# -- the incremental read model ---------------------------------------------------------------


def live_coup(event: Event) -> dict[str, Any]:
    """A ``coup_entered`` event as the record :func:`coup_rows` makes of it through the
    store's conversion (same keys in the same order, same values), without a data frame:
    the per-coup cost of a live table is that of the coup, not of polars."""
    row = coup_row(event)
    dealt = row["dealt_at"]
    row["dealt_at"] = None if dealt is None else dealt.astimezone(_UTC)
    return {name: row.get(name) for name in COUPS}


def _board(coups: list[dict[str, Any]] | None = None) -> Board:
    from roads.board import Board

    return Board.from_coups(coups) if coups else Board()


def _append(board: Board, coup: dict[str, Any]) -> None:
    from roads.board import CoupInfo

    board.append(CoupInfo(str(coup["outcome"]), coup["player_pair"], coup["banker_pair"],
                          coup["natural"], coup["player_total"], coup["banker_total"]))


@dataclass(slots=True)
class LiveTable:
    """One table in the read model: its state, and the open shoe's board kept coup by coup
    (None between shoes). A new board object means the shoe was opened or rebuilt."""

    state: TableState
    board: Board | None


class LiveTables:
    """Every asked-for table's state, kept up to date from the journal event by event.

    :func:`table_state` rebuilds a table from its journal events (the open shoe's coups
    through polars): milliseconds per read, more as the shoe grows. This model builds a
    table that way once, then applies each new event to it — a coup is one record and one
    ``Board.append``; only a correction of the open shoe rebuilds that shoe (from its events
    up to the correction). Every state it gives equals what :func:`table_state` gives at
    the same journal head (tested). Thread-safe; the events since the last refresh are one
    indexed query."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.head = journal.head()[0]
        self._tables: dict[str, LiveTable] = {}
        self._lock = threading.RLock()

    # -- reads ------------------------------------------------------------------------------
    def state(self, table_id: str) -> TableState:
        """The table's state now (built on first use, then kept up to date)."""
        return self.table(table_id).state

    def table(self, table_id: str, refresh: bool = True) -> LiveTable:
        """The table's state and open board, up to date with the journal; with ``refresh``
        False, as of the last :meth:`refresh` (built now if it is not kept): what a caller
        that refreshes once for many tables reads, since the tables a refresh inside this
        read changed would be lost to that caller's own."""
        with self._lock:
            if refresh:
                self.refresh()
            live = self._tables.get(table_id)
            if live is None:
                live = self._tables[table_id] = self._build(table_id)
            return live

    def tracked(self) -> list[str]:
        with self._lock:
            return list(self._tables)

    def forget(self, table_id: str) -> None:
        """Stop keeping a table (it is built again if asked for)."""
        with self._lock:
            self._tables.pop(table_id, None)

    # -- keeping up -------------------------------------------------------------------------
    def refresh(self) -> set[str]:
        """Apply the journal's new events; the tracked tables whose state changed."""
        with self._lock:
            head = self.journal.head()[0]
            if head == self.head:
                return set()
            if head - self.head > BACKLOG:
                changed = set(self._tables)
                self._tables.clear()
                self.head = head
                return changed
            changed = set()
            for event in self.journal.events(since=self.head):
                live = self._tables.get(event.table_id)
                if live is not None and self._apply(live, event):
                    changed.add(event.table_id)
                self.head = max(self.head, event.seq)
            return changed

    def _build(self, table_id: str) -> LiveTable:
        """From the journal: a build that saw no new event of the table during it is
        exactly the table at its head (else it is tried again)."""
        while True:
            state = table_state(self.journal, table_id)
            if self.journal.table_head(table_id) == state.seq:
                break
        return LiveTable(state, _board(state.coups) if state.status == "open" else None)

    def _apply(self, live: LiveTable, e: Event) -> bool:
        s = live.state
        if e.seq <= s.seq:
            return False  # already in the state (built after the event)
        p = e.payload
        if e.kind == "shoe_opened":
            live.state = TableState(
                s.table_id, "open", e.seq, shoe_id=e.shoe_id, shoe_number=s.shoe_number + 1,
                rules=p.get("rules"), burn_cards=p.get("burn_cards"), opened_at=e.at,
                source=str(p.get("source", "live")))
            live.board = _board()
        elif e.kind == "shoe_closed":
            live.state = TableState(s.table_id, "between_shoes", e.seq, shoe_id=e.shoe_id,
                                    shoe_number=s.shoe_number)
            live.board = None
        elif e.kind == "table_closed":
            live.state = TableState(s.table_id, "closed", e.seq, shoe_number=s.shoe_number)
            live.board = None
        elif s.status != "open" or e.shoe_id != s.shoe_id or live.board is None:
            live.state = replace(s, seq=e.seq)  # another shoe's event (e.g. its seal)
        elif e.kind == "coup_entered":
            coup = live_coup(e)
            _append(live.board, coup)
            live.state = replace(s, seq=e.seq, coups=[*s.coups, coup])
        elif e.kind in ("coup_voided", "coup_amended"):
            # A correction rebuilds this shoe only, from its events up to the correction.
            events = [x for x in self.journal.events(s.table_id, s.shoe_id) if x.seq <= e.seq]
            coups = coup_rows(corrected_coups(events))
            live.state = replace(s, seq=e.seq, coups=coups, pending_corrections=pending(events))
            live.board = _board(coups)
        elif e.kind == "correction_requested":
            live.state = replace(s, seq=e.seq, pending_corrections=[
                *s.pending_corrections, _request(e)])
        elif e.kind == "correction_rejected":
            live.state = replace(s, seq=e.seq, pending_corrections=[
                r for r in s.pending_corrections if r["request"] != p.get("request")])
        else:
            live.state = replace(s, seq=e.seq)
        return True
