"""Each table's open shoe and its validator state, kept in memory between live actions.

A coup is checked against its shoe: which shoe is open at the table, how many coups it
holds, which cards are out (burn included), when it opened. Read from SQLite, that is two
indexed queries and the shoe's rule set parsed from JSON for every coup, inside the write
lock every other entry waits behind. :class:`OpenShoes` keeps it in memory instead.

It is right whoever else writes (another worker process, another service on the same
store, a seal on another thread) because it is *versioned by the journal's head*: the
sequence number and hash of the newest event it has seen. The hash chain makes that pair
name the whole journal up to it, so when the head a transaction sees is the one the cache
holds, nothing was written since; when it is further on and the cache's head is still in
the journal, the events after it are applied (one indexed query); anything else — a
rolled-back commit whose events are gone, a backlog too long to be worth applying — drops
the cache, and each table is read from SQLite again on its next coup.

Only actions running inside a write-locked journal transaction touch it, and SQLite holds
one such transaction at a time, so it needs no lock of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from roads.ingest.entry import ShoeContext
from roads.store.journal import GENESIS, Event, Transaction

#: More events than this since the cache's head and it starts again (tables reread on use)
#: instead of applying the backlog.
BACKLOG = 2000
#: Events that change what :class:`OpenShoes` keeps.
KINDS = ("shoe_opened", "shoe_closed", "coup_entered")


@dataclass(slots=True)
class OpenShoe:
    """A table as the validator sees it: its open shoe's ``shoe_opened`` event (None when
    no shoe is open) and that shoe's context (None until its first coup asks for it)."""

    opened: Event | None
    context: ShoeContext | None = None


@dataclass(slots=True)
class OpenShoes:
    """The open shoe of every table a live action asked about, as of journal head
    ``head`` (sequence, hash)."""

    head: tuple[int, str] = (0, GENESIS)
    tables: dict[str, OpenShoe] = field(default_factory=dict)

    def current(self, tx: Transaction, table_id: str
                ) -> tuple[Event, ShoeContext] | None:
        """The open shoe and its context in one look-up (what entering a coup asks for);
        None when no shoe is open at the table."""
        table = self._table(tx, table_id)
        if table.opened is None:
            return None
        if table.context is None:
            table.context = _read_context(tx, table.opened)
        return table.opened, table.context

    def appended(self, event: Event) -> None:
        """An event this process just appended in the current transaction."""
        self._apply(event)
        self.head = (event.seq, event.hash)

    # -- keeping up with the journal --------------------------------------------------------
    def _table(self, tx: Transaction, table_id: str) -> OpenShoe:
        self._sync(tx)
        table = self.tables.get(table_id)
        if table is None:
            table = self.tables[table_id] = OpenShoe(_read_open_shoe(tx, table_id))
        return table

    def _sync(self, tx: Transaction) -> None:
        if self.head == (tx.seq, tx.prev):
            return
        seq, digest = self.head
        behind = tx.seq - seq
        if self.tables and 0 < behind <= BACKLOG and _holds(tx, seq, digest):
            for event in tx.since(seq, KINDS):
                self._apply(event)
        else:
            self.tables.clear()
        self.head = (tx.seq, tx.prev)

    def _apply(self, e: Event) -> None:
        table = self.tables.get(e.table_id)
        if table is None:
            return  # not kept: read when first asked for
        if e.kind == "shoe_opened":
            table.opened, table.context = e, None
        elif e.kind == "shoe_closed":
            table.opened, table.context = None, None
        elif (e.kind == "coup_entered" and table.context is not None
              and table.opened is not None and e.shoe_id == table.opened.shoe_id):
            _count(table.context, e.payload.get("player_cards"), e.payload.get("banker_cards"))
            table.context.coups = int(e.payload["coup"])


def _holds(tx: Transaction, seq: int, digest: str) -> bool:
    """Whether the journal still holds event ``seq`` with hash ``digest`` (a commit that
    was rolled back leaves the number free for another event)."""
    if seq == 0:
        return digest == GENESIS
    event = tx.db.execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
    return event is not None and event[0] == digest


def _read_open_shoe(tx: Transaction, table_id: str) -> Event | None:
    last = tx.last(table_id, ("shoe_opened", "shoe_closed"))
    return last if last is not None and last.kind == "shoe_opened" else None


def _read_context(tx: Transaction, opened: Event) -> ShoeContext:
    """The shoe's context from its journal events: decks, opening time, burn cards, every
    entered coup's cards, the newest coup number."""
    context = ShoeContext(int(opened.payload.get("rule_set", {}).get("decks") or 8),
                          datetime.fromisoformat(opened.at).astimezone(UTC))
    context.add(opened.payload.get("burn_cards") or ())
    for coup, player, banker in tx.db.execute(
            "SELECT json_extract(payload, '$.coup'), json_extract(payload, '$.player_cards'), "
            "json_extract(payload, '$.banker_cards') FROM events WHERE table_id = ? AND "
            "shoe_id = ? AND kind = 'coup_entered' ORDER BY seq",
            (opened.table_id, opened.shoe_id)):
        _count(context, *(json.loads(hand) if hand else None for hand in (player, banker)))
        context.coups = int(coup)
    return context


def _count(context: ShoeContext, *hands: object) -> None:
    for hand in hands:
        if isinstance(hand, list):
            context.add(str(card) for card in hand)


__all__ = ["BACKLOG", "OpenShoe", "OpenShoes"]
