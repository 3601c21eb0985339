"""Live table operations as check-then-append journal actions.

Each is an :data:`~roads.store.journal.Action` run inside one write-locked transaction, so
two entry points (keypad, card-reading shoe, API) can never give two coups one number or
enter into a closed shoe; each coup is checked by the one live validator
(:func:`roads.ingest.entry.check_coup`) against its shoe: the tableau, the flags, the shoe's
card inventory and capacity, and the journal's clock. Only :mod:`roads.tables.service` calls
these; everything else calls the service.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from roads.errors import InputError
from roads.ingest import bounds
from roads.ingest.entry import CoupEntry, EntryError, canonical_fields, check_coup
from roads.rules import RuleSet
from roads.schema import same_coup
from roads.store.journal import Action, Event, Transaction
from roads.tables.open_shoes import OpenShoes


class LiveError(InputError):
    """An operation the table's state does not allow."""


class CoupConflict(LiveError):
    """A coup number already holds a different coup (never overwritten)."""


def _open_shoe(tx: Transaction, table_id: str) -> Event | None:
    last = tx.last(table_id, ("shoe_opened", "shoe_closed"))
    return last if last is not None and last.kind == "shoe_opened" else None


def _stored(tx: Transaction, table_id: str, shoe_id: str) -> bool:
    return tx.db.execute("SELECT 1 FROM catalog_shoes WHERE table_id = ? AND shoe_id = ? "
                         "LIMIT 1", (table_id, shoe_id)).fetchone() is not None


def _check_ids(**ids: str | None) -> None:
    for name, value in ids.items():
        if (problem := bounds.id_problem(name, value)) is not None:
            raise EntryError(name, problem)


def open_shoe(table_id: str, shoe_id: str, rules: RuleSet, actor: str, source: str = "live",
              burn_cards: list[str] | None = None,
              cut_card_index: int | None = None) -> Action:
    """Open a shoe; refused while another is open, or when the table already holds a shoe
    of that id (dealt live, or stored from an import)."""
    _check_ids(table_id=table_id, shoe_id=shoe_id)
    if burn_cards and len(burn_cards) > 11:
        raise EntryError("burn_cards", "at most 11 cards are burned (a ten exposed, ten burned)")

    def action(tx: Transaction) -> Event:
        current = _open_shoe(tx, table_id)
        if current is not None:
            raise LiveError(f"table {table_id} already has shoe {current.shoe_id} open; "
                            "close it first")
        if tx.exists(table_id, shoe_id, "shoe_opened") or _stored(tx, table_id, shoe_id):
            raise LiveError(f"shoe {shoe_id} is already stored at table {table_id}; "
                            "a new shoe needs a new id")
        return tx.append("shoe_opened", table_id, shoe_id,
                         {"rules": rules.name, "rule_set": rules.to_dict(), "source": source,
                          "burn_cards": burn_cards, "cut_card_index": cut_card_index}, actor)
    return action


@dataclass
class Posted:
    """What :func:`enter_coup` did: the event, and whether it is new."""

    event: Event | None = None
    created: bool = True


def enter_coup(table_id: str, entry: CoupEntry, actor: str, shoes: OpenShoes,
               posted: Posted, shoe_id: str | None = None, coup: int | None = None,
               tolerance: timedelta = bounds.DEALT_AT_TOLERANCE) -> Action:
    """Enter the next coup of the open shoe.

    Naming the shoe and number makes it idempotent: the same coup posted again returns the
    stored event (``posted.created`` False); a different coup under a stored number raises
    :class:`CoupConflict`; a number that is not the next one is refused."""
    content = canonical_fields(entry)  # impossible on its own: refused before the lock

    def action(tx: Transaction) -> Event:
        shoe, ctx = shoes.current(tx, table_id) or (None, None)
        if shoe_id is not None and coup is not None and not (
                shoe is not None and ctx is not None and shoe.shoe_id == shoe_id
                and coup > ctx.coups):  # past the open shoe's newest coup: none stored
            stored = tx.coup_entered(table_id, shoe_id, coup)
            if stored is not None:
                if same_coup(stored.payload, content):
                    posted.event, posted.created = stored, False
                    return stored
                raise CoupConflict(f"coup {coup} of shoe {shoe_id} at table {table_id} is "
                                   "already stored with different content")
        if shoe is None or ctx is None:
            raise LiveError(f"table {table_id} has no open shoe")
        if shoe_id is not None and shoe.shoe_id != shoe_id:
            raise LiveError(f"shoe {shoe_id} is not open at table {table_id} "
                            f"(open: {shoe.shoe_id})")
        number = ctx.coups + 1
        if coup is not None and coup != number:
            raise LiveError(f"coup {coup} is out of order: the next coup of shoe "
                            f"{shoe.shoe_id} is {number}")
        if problem := bounds.coups_per_shoe_problem(number, ctx.decks):
            raise EntryError("coup", problem)
        now = datetime.now(UTC)  # one clock read: the check's "now" is the event's time
        fields = check_coup(entry, ctx, now, tolerance, number, content)
        event = tx.append("coup_entered", table_id, shoe.shoe_id, fields, actor, now)
        shoes.appended(event)
        posted.event, posted.created = event, True
        return event
    return action


def close_shoe(table_id: str, actor: str) -> Action:
    def action(tx: Transaction) -> Event:
        shoe = _open_shoe(tx, table_id)
        if shoe is None:
            raise LiveError(f"table {table_id} has no open shoe")
        return tx.append("shoe_closed", table_id, shoe.shoe_id, {}, actor)
    return action


def close_table(table_id: str, actor: str) -> Action:
    """The table closes for the day (screens show "closed"); refused while a shoe is open."""
    def action(tx: Transaction) -> Event:
        shoe = _open_shoe(tx, table_id)
        if shoe is not None:
            raise LiveError(f"table {table_id} has shoe {shoe.shoe_id} open; close it first")
        return tx.append("table_closed", table_id, None, {}, actor)
    return action


def _voided(tx: Transaction, table_id: str, shoe_id: str, coup: int) -> bool:
    return tx.coup_event(table_id, shoe_id, "coup_voided", coup)


def request_correction(table_id: str, shoe_id: str, coup: int, actor: str, reason: str,
                       amended: CoupEntry | None, in_record: bool) -> Action:
    """Ask to void (``amended`` None) or amend a coup; nothing changes until a supervisor
    approves (:func:`decide_correction`). ``in_record``: the coup is in the stored record
    (the service checked the read port; a live coup is checked here)."""
    if not reason.strip():
        raise EntryError("reason", "a correction needs a reason")
    new = canonical_fields(amended) if amended is not None else None

    def action(tx: Transaction) -> Event:
        if _voided(tx, table_id, shoe_id, coup):  # (first: a voided stored coup is in no
            raise LiveError(f"coup {coup} of shoe {shoe_id} is already void")  # record)
        if not in_record and not tx.coup_event(table_id, shoe_id, "coup_entered", coup):
            raise LiveError(f"shoe {shoe_id} at table {table_id} has no coup {coup}")
        body: dict[str, Any] = {"coup": coup, "action": "void" if new is None else "amend",
                                "reason": reason}
        if new is not None:
            body["new"] = new
        return tx.append("correction_requested", table_id, shoe_id, body, actor)
    return action


def decide_correction(request_seq: int, approver: str, approve: bool,
                      note: str = "") -> Action:
    """A supervisor approves (the void or amendment is applied, naming both people) or
    rejects a pending request; each request is decided once. Rejecting changes no result,
    so the requester may withdraw their own request; approving needs another person."""
    def action(tx: Transaction) -> Event:
        req = tx.get(request_seq)
        if req is None or req.kind != "correction_requested" or req.shoe_id is None:
            raise LiveError(f"no correction request {request_seq}")
        if tx.decided(request_seq) is not None:
            raise LiveError(f"correction request {request_seq} was already decided")
        if approve and req.actor == approver:
            raise LiveError("a correction needs an approver other than the person who asked")
        p = req.payload
        if not approve:
            return tx.append("correction_rejected", req.table_id, req.shoe_id,
                             {"coup": p["coup"], "request": request_seq, "reason": note},
                             approver)
        if _voided(tx, req.table_id, req.shoe_id, p["coup"]):
            raise LiveError(f"coup {p['coup']} of shoe {req.shoe_id} is already void")
        body = {"coup": p["coup"], "reason": p["reason"], "approver": approver,
                "request": request_seq}
        requester = req.actor or ""
        if p["action"] == "void":
            return tx.append("coup_voided", req.table_id, req.shoe_id, body, requester)
        return tx.append("coup_amended", req.table_id, req.shoe_id, {**body, "new": p["new"]},
                         requester)
    return action


def seen_cards(events: list[Event]) -> Counter[str]:
    """Cards out of a journaled shoe so far (burn included)."""
    seen: Counter[str] = Counter()
    for e in events:
        if e.kind == "shoe_opened":
            seen.update(e.payload.get("burn_cards") or ())
        elif e.kind == "coup_entered":
            seen.update(e.payload.get("player_cards") or ())
            seen.update(e.payload.get("banker_cards") or ())
    return seen
