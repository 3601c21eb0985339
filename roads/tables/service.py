"""The live-table service: every live action and read model, behind one front.

The HTTP API, the operator pages, the demo dealers and the CLI call this and nothing
below it, so each rule lives here once: who may do what (:mod:`roads.tables.policy`), how a
coup is checked (the one live validator), what "close the shoe" means (close, then seal,
as one crash-safe operation: a shoe closed but not yet sealed is read from the journal and
sealed by :meth:`TableService.recover` after a crash, or by closing it again), and how a
correction goes from request to decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from roads.ingest import bounds
from roads.ingest.entry import CoupEntry
from roads.rules import PRESETS, RulesError, RuleSet
from roads.store import Event, Selection, Store
from roads.store.journal import (
    SERVER_HEAP_BYTES,
    SYSTEM,
    Action,
    GroupCommitter,
    Transaction,
    limit_heap,
)
from roads.tables import actions
from roads.tables.actions import LiveError, Posted
from roads.tables.open_shoes import OpenShoes
from roads.tables.policy import Actor, Forbidden, authorize
from roads.tables.state import LiveTables, TableState, corrected_coups, coup_rows

DEMO_DEALER = Actor("demo-dealer", "dealer")


def preset_rule_set(name: str) -> RuleSet:
    """A rule set by preset name (live requests name rule sets, never give paths)."""
    try:
        return PRESETS[name]
    except KeyError:
        raise RulesError(f"unknown rule set {name!r}; known: {', '.join(PRESETS)}") from None


@dataclass(frozen=True, slots=True)
class Settings:
    """What a deployment chooses: how far a coup's ``dealt_at`` may be from the journal's
    clock, which rule sets its tables may name (presets, or the site's registered files),
    the tables on its floor (none listed: any table id may be opened), and how long a write
    waits for the journal's writers' queue before it gives up (a writer ahead has hung)."""

    tolerance: timedelta = bounds.DEALT_AT_TOLERANCE
    rule_set: Callable[[str], RuleSet] = preset_rule_set
    tables: frozenset[str] = frozenset()
    queue_wait: float | None = None  # (None: the journal's own, QUEUE_WAIT_SECONDS)


class TableService:
    """Live tables of one store."""

    def __init__(self, store: Store, settings: Settings | None = None,
                 committer: GroupCommitter | None = None) -> None:
        self.store = store
        self.journal = store.journal
        self.settings = settings or Settings()
        if self.settings.queue_wait is not None:
            self.journal.queue_wait = self.settings.queue_wait
        self._shoes = OpenShoes()  # each open shoe's validator state, versioned by the head
        self._committer = committer
        self.live = LiveTables(self.journal)  # the tables' states, kept event by event

    def _run(self, action: Action) -> Event:
        """Run an action in its own transaction, or in the next shared commit when a
        :class:`GroupCommitter` batches many submitters (the server under load)."""
        if self._committer is not None:
            return self._committer.run(action)
        return self.journal.run(action)

    # -- writes -----------------------------------------------------------------------------
    def open_shoe(self, actor: Actor, table_id: str, shoe_id: str, rules: str = "standard-8",
                  burn_cards: list[str] | None = None, cut_card_index: int | None = None,
                  source: str = "live") -> Event:
        authorize(actor, "open_shoe", table_id)
        rule_set = self.settings.rule_set(rules)
        opening = actions.open_shoe(table_id, shoe_id, rule_set, actor.name, source,
                                    burn_cards, cut_card_index)
        if table_id in self.settings.tables or self.journal.table_head(table_id) > 0:
            return self._run(opening)  # a known table stays known: no lock needed to say so

        def first_shoe(tx: Transaction) -> Event:
            self._new_table(tx, actor, table_id)
            return opening(tx)

        return self._run(first_shoe)

    def _new_table(self, tx: Transaction, actor: Actor, table_id: str) -> None:
        """Refuse a table id that only looks like a known table, and, on a floor that lists
        its tables, a first shoe at an unlisted table by anyone but a supervisor (a table key
        was issued for its table by one). Asked inside the transaction that would open the
        shoe (``tx``): two workers opening ``t09`` and ``T09`` at once both found neither."""
        known = {*self.settings.tables, *(r[0] for r in tx.db.execute(
            "SELECT DISTINCT table_id FROM events WHERE table_id != ? UNION "
            "SELECT DISTINCT table_id FROM shoe_index", (SYSTEM,)))}
        if table_id in known:
            return
        twin = bounds.lookalike(table_id, known)
        if twin is not None:
            raise LiveError(f"table {table_id!r} looks like table {twin!r}; use its id as "
                            "written, or choose an id that does not read the same")
        if self.settings.tables and actor.role is not None and not actor.may("open_table"):
            raise Forbidden(f"table {table_id} is not on this floor's list of tables; a "
                            "supervisor opens a new table's first shoe")

    def enter_coup(self, actor: Actor, table_id: str, entry: CoupEntry,
                   shoe_id: str | None = None, coup: int | None = None) -> tuple[Event, bool]:
        """Enter the next coup; naming the shoe and number makes it idempotent. Returns the
        event and whether it is new."""
        authorize(actor, "enter_coup", table_id)
        posted = Posted()
        event = self._run(actions.enter_coup(
            table_id, entry, actor.name, self._shoes, posted, shoe_id, coup,
            self.settings.tolerance))
        return event, posted.created

    def close_shoe(self, actor: Actor, table_id: str) -> tuple[Event, Event]:
        """Close the open shoe and seal it into Parquet; returns both events.

        A close whose seal failed after the close committed (a busy journal, which
        tells the client to try again) leaves the table's last shoe closed but not sealed;
        closing again seals that shoe and answers as the close did (its close event), so
        the retry the error asks for completes the close instead of finding no open shoe."""
        authorize(actor, "close_shoe", table_id)
        try:
            closed = self._run(actions.close_shoe(table_id, actor.name))
        except LiveError:
            unsealed = self._unsealed_close(table_id)
            if unsealed is None:
                raise
            closed = unsealed
        sealed = self.store.seal(table_id, closed.shoe_id or "", actor.name, self._run)
        return closed, sealed

    def _unsealed_close(self, table_id: str) -> Event | None:
        """The close of the table's last shoe when that shoe is not sealed, else None."""
        last = self.journal.last(table_id, ("shoe_opened", "shoe_closed"))
        if last is None or last.kind != "shoe_closed" or last.shoe_id is None:
            return None
        if any(e.kind == "shoe_sealed" for e in self.journal.events(table_id, last.shoe_id)):
            return None
        return last

    def close_table(self, actor: Actor, table_id: str) -> Event:
        authorize(actor, "close_table", table_id)
        return self._run(actions.close_table(table_id, actor.name))

    def request_correction(self, actor: Actor, table_id: str, shoe_id: str, coup: int,
                           reason: str, amended: CoupEntry | None = None) -> Event:
        """Ask for a void (``amended`` None) or an amendment of a coup of the record (live,
        sealed or imported); a supervisor decides (:meth:`decide_correction`)."""
        authorize(actor, "request_correction", table_id)
        in_record = self._coup(table_id, shoe_id, coup) is not None
        if not in_record and not self.journal.events(table_id, shoe_id):
            raise LiveError(f"shoe {shoe_id} at table {table_id} has no coup {coup}")
        return self._run(actions.request_correction(
            table_id, shoe_id, coup, actor.name, reason, amended, in_record))

    def decide_correction(self, actor: Actor, request: int, approve: bool,
                          note: str = "") -> Event:
        event = self.journal.at(request)
        authorize(actor, "decide_correction", event.table_id if event else None)
        return self._run(actions.decide_correction(request, actor.name, approve, note))

    def recover(self) -> list[tuple[str, str]]:
        """Seal every shoe closed before a crash but not sealed; run at start-up."""
        return self.store.seal_pending(self._run)

    # -- reads ------------------------------------------------------------------------------
    def table_state(self, table_id: str) -> TableState:
        return self.live.state(table_id)

    def tables(self, configured: Sequence[str] = ()) -> list[str]:
        """Configured tables first, then every other table the journal knows."""
        known = self.journal.tables()
        return [*configured, *(t for t in known if t not in configured)]

    def known(self, table_id: str, configured: Sequence[str] = ()) -> bool:
        return table_id in configured or self.journal.table_head(table_id) > 0

    def shoe_coups(self, table_id: str, shoe_id: str) -> list[dict[str, Any]]:
        """A shoe's coups with corrections applied, live or stored (the history page)."""
        return coup_rows(self.store.read.coups(Selection(table_id, shoe_id)))

    def shoe_page(self, table_id: str | None = None, start: date | None = None,
                  end: date | None = None, still_open: bool | None = None, offset: int = 0,
                  limit: int = 50) -> tuple[pl.DataFrame, int]:
        """One page of the record's shoes, newest first, and how many match (the history
        page): a query of the store's shoe index, never the shoe files."""
        return self.store.read.shoe_page(table_id, start, end, still_open, offset, limit)

    def record_tables(self) -> list[str]:
        """Every table of the record, stored or live (the history page's table filter)."""
        return self.store.read.tables()

    def _coup(self, table_id: str, shoe_id: str, coup: int) -> dict[str, Any] | None:
        rows = [r for r in self.shoe_coups(table_id, shoe_id) if r["coup"] == coup]
        return rows[0] if rows else None

    def open_shoe_frames(self, table_id: str) -> tuple[TableState, pl.DataFrame | None,
                                                       pl.DataFrame | None]:
        """The table's state and, when a shoe is open, its corrected coups and shoe row."""
        state = self.table_state(table_id)
        if state.status != "open" or state.shoe_id is None:
            return state, None, None
        events = self.journal.events(table_id, state.shoe_id)
        from roads.store import shoe_frames

        return state, corrected_coups(events), shoe_frames(events)[1]

    def request(self, seq: int) -> Event | None:
        event = self.journal.at(seq)
        return event if event is not None and event.kind == "correction_requested" else None


def open_service(root: Path, settings: Settings | None = None, create: bool = False,
                 group_commit: bool = False) -> TableService:
    """The service over the store at ``root`` (made when ``create``; else it must exist).

    ``group_commit``: concurrent writers share commits (a server's request threads: one
    fsync per commit instead of one per coup, each answer still after its own commit); the
    process's SQLite caches are then bounded too (:data:`SERVER_HEAP_BYTES`: a connection
    per request thread each filled its own cache as the journal grew)."""
    if group_commit:
        limit_heap(SERVER_HEAP_BYTES)
    store = Store.create(root) if create else Store.open(root)
    return TableService(store, settings, GroupCommitter(store.journal) if group_commit else None)


__all__ = ["DEMO_DEALER", "Settings", "TableService", "open_service", "preset_rule_set"]
