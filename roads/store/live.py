"""Live tables on the journal: open a shoe, enter coups, correct them, close the shoe.

Each operation is a check-then-append :data:`~roads.store.journal.Action` run inside one
write-locked transaction, so two entry points (keypad, card-reading shoe, API) can never give
two coups the same number or enter into a closed shoe. Cards, when given, are replayed
through the tableau: an impossible coup is refused, never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from roads.cards import parse_cards
from roads.errors import InputError
from roads.rules import get_rules
from roads.store.journal import Action, Event, Journal, Transaction
from roads.tableau import expected_hands

OUTCOME_LABELS = {"B": "B", "P": "P", "T": "T"}


class LiveError(InputError):
    """An operation the table's state does not allow, or an impossible coup."""


@dataclass(frozen=True, slots=True)
class CoupEntry:
    """A coup as entered: an outcome (keypad) or the cards (card-reading shoe), or both."""

    outcome: str | None = None
    player_cards: tuple[str, ...] | None = None
    banker_cards: tuple[str, ...] | None = None
    player_pair: bool | None = None
    banker_pair: bool | None = None
    natural: bool | None = None
    player_total: int | None = None
    banker_total: int | None = None
    dealt_at: str | None = None

    def payload(self) -> dict[str, Any]:
        """The canonical coup fields, derived from the cards where there are cards."""
        dealt = self.dealt_at or datetime.now(UTC).isoformat(timespec="microseconds")
        if self.player_cards is not None or self.banker_cards is not None:
            return self._from_cards(dealt)
        if self.outcome not in OUTCOME_LABELS:
            raise LiveError(f"outcome must be B, P or T (got {self.outcome!r})")
        for name in ("player_total", "banker_total"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 9:
                raise LiveError(f"{name} must be 0-9 (got {value})")
        return {"outcome": self.outcome, "player_cards": None, "banker_cards": None,
                "player_total": self.player_total, "banker_total": self.banker_total,
                "natural": self.natural, "player_pair": self.player_pair,
                "banker_pair": self.banker_pair, "dealt_at": dealt}

    def _from_cards(self, dealt: str) -> dict[str, Any]:
        player = parse_cards(list(self.player_cards or ()))
        banker = parse_cards(list(self.banker_cards or ()))
        if len(player) not in (2, 3) or len(banker) not in (2, 3):
            raise LiveError("each side needs two or three cards")
        try:
            coup = expected_hands(player, banker)
        except InputError as exc:
            raise LiveError(f"impossible coup: {exc}") from None
        if (list(coup.player_cards), list(coup.banker_cards)) != (player, banker):
            raise LiveError(
                f"impossible coup: by the tableau the Player takes {len(coup.player_cards)} "
                f"and the Banker {len(coup.banker_cards)} cards")
        checks = {"outcome": coup.outcome, "player_total": coup.player_total,
                  "banker_total": coup.banker_total, "natural": coup.natural,
                  "player_pair": coup.player_pair, "banker_pair": coup.banker_pair}
        for name, value in checks.items():
            given = getattr(self, name)
            if given is not None and given != value:
                raise LiveError(f"{name} {given!r} does not match the cards ({value!r})")
        return {**checks, "player_cards": player, "banker_cards": banker, "dealt_at": dealt}


def _open_shoe(tx: Transaction, table_id: str) -> Event | None:
    last = tx.last(table_id, ("shoe_opened", "shoe_closed"))
    return last if last is not None and last.kind == "shoe_opened" else None


def open_shoe(table_id: str, shoe_id: str, rules: str, actor: str,
              burn_cards: list[str] | None = None,
              cut_card_index: int | None = None) -> Action:
    get_rules(rules)  # unknown rule set: refused before anything is written
    burn = parse_cards(burn_cards) if burn_cards else None

    def action(tx: Transaction) -> Event:
        current = _open_shoe(tx, table_id)
        if current is not None:
            raise LiveError(f"table {table_id} already has shoe {current.shoe_id} open; "
                            "close it first")
        if tx.exists(table_id, shoe_id, "shoe_opened"):
            raise LiveError(f"shoe {shoe_id} was already dealt at table {table_id}")
        return tx.append("shoe_opened", table_id, shoe_id,
                         {"rules": rules, "burn_cards": burn, "cut_card_index": cut_card_index},
                         actor)
    return action


def enter_coup(table_id: str, entry: CoupEntry, actor: str) -> Action:
    payload = entry.payload()  # an impossible coup is refused here, before the lock

    def action(tx: Transaction) -> Event:
        shoe = _open_shoe(tx, table_id)
        if shoe is None:
            raise LiveError(f"table {table_id} has no open shoe")
        last = tx.last(table_id, ("coup_entered",), shoe.shoe_id)
        number = 1 if last is None else int(last.payload["coup"]) + 1
        return tx.append("coup_entered", table_id, shoe.shoe_id,
                         {"coup": number, "source": "live", **payload}, actor)
    return action


_CONTENT = ("outcome", "player_cards", "banker_cards", "player_total", "banker_total",
            "natural", "player_pair", "banker_pair")


class CoupConflict(LiveError):
    """A coup number already holds a different coup (never overwritten)."""


def post_coup(journal: Journal, table_id: str, entry: CoupEntry, actor: str,
              shoe_id: str | None = None, coup: int | None = None) -> tuple[Event, bool]:
    """Enter a coup that names its shoe and number (API, card-reading shoe): idempotent.

    Returns ``(event, created)``. Posting the same coup again returns the stored event with
    ``created`` False; a different coup under a stored number raises :class:`CoupConflict`;
    a number that is not the next one is refused.
    """
    payload = entry.payload()
    with journal.transaction() as tx:
        if shoe_id is not None and coup is not None:
            stored = tx.coup_entered(table_id, shoe_id, coup)
            if stored is not None:
                if all(stored.payload.get(k) == payload.get(k) for k in _CONTENT
                       if payload.get(k) is not None):
                    return stored, False
                raise CoupConflict(f"coup {coup} of shoe {shoe_id} at table {table_id} is "
                                   "already stored with different content")
        shoe = _open_shoe(tx, table_id)
        if shoe is None:
            raise LiveError(f"table {table_id} has no open shoe")
        if shoe_id is not None and shoe.shoe_id != shoe_id:
            raise LiveError(f"shoe {shoe_id} is not open at table {table_id} "
                            f"(open: {shoe.shoe_id})")
        last = tx.last(table_id, ("coup_entered",), shoe.shoe_id)
        number = 1 if last is None else int(last.payload["coup"]) + 1
        if coup is not None and coup != number:
            raise LiveError(f"coup {coup} is out of order: the next coup of shoe "
                            f"{shoe.shoe_id} is {number}")
        return tx.append("coup_entered", table_id, shoe.shoe_id,
                         {"coup": number, "source": "live", **payload}, actor), True


def _correction_check(tx: Transaction, table_id: str, shoe_id: str, coup: int,
                      actor: str, reason: str, approver: str) -> None:
    if not reason.strip():
        raise LiveError("a correction needs a reason")
    if not approver or approver == actor:
        raise LiveError("a correction needs an approver other than the operator who asks")
    if tx.coup_event(table_id, shoe_id, "coup_voided", coup):
        raise LiveError(f"coup {coup} of shoe {shoe_id} is already void")
    if tx.exists(table_id, shoe_id, "shoe_opened") and not tx.coup_event(
            table_id, shoe_id, "coup_entered", coup):
        raise LiveError(f"shoe {shoe_id} at table {table_id} has no coup {coup}")


def void_coup(table_id: str, shoe_id: str, coup: int, actor: str, reason: str,
              approver: str) -> Action:
    def action(tx: Transaction) -> Event:
        _correction_check(tx, table_id, shoe_id, coup, actor, reason, approver)
        return tx.append("coup_voided", table_id, shoe_id,
                         {"coup": coup, "reason": reason, "approver": approver}, actor)
    return action


def amend_coup(table_id: str, shoe_id: str, coup: int, entry: CoupEntry, actor: str,
               reason: str, approver: str) -> Action:
    new = entry.payload()

    def action(tx: Transaction) -> Event:
        _correction_check(tx, table_id, shoe_id, coup, actor, reason, approver)
        return tx.append("coup_amended", table_id, shoe_id,
                         {"coup": coup, "reason": reason, "approver": approver, "new": new},
                         actor)
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


def request_correction(table_id: str, shoe_id: str, coup: int, actor: str, reason: str,
                       entry: CoupEntry | None = None) -> Action:
    """A dealer asks to void (``entry`` None) or amend a coup; nothing changes until a
    supervisor approves (:func:`decide_correction`)."""
    if not reason.strip():
        raise LiveError("a correction needs a reason")
    new = entry.payload() if entry is not None else None

    def action(tx: Transaction) -> Event:
        if not tx.coup_event(table_id, shoe_id, "coup_entered", coup):
            raise LiveError(f"shoe {shoe_id} at table {table_id} has no coup {coup}")
        if tx.coup_event(table_id, shoe_id, "coup_voided", coup):
            raise LiveError(f"coup {coup} of shoe {shoe_id} is already void")
        return tx.append("correction_requested", table_id, shoe_id,
                         {"coup": coup, "action": "void" if new is None else "amend",
                          "reason": reason, **({"new": new} if new is not None else {})},
                         actor)
    return action


def decide_correction(request_seq: int, approver: str, approve: bool,
                      note: str = "") -> Action:
    """A supervisor approves (the void or amendment is applied, naming both people) or
    rejects a pending correction request; each request is decided once. Rejecting changes
    no result, so the requester may withdraw their own request; approving needs another
    person."""
    def action(tx: Transaction) -> Event:
        req = tx.get(request_seq)
        if req is None or req.kind != "correction_requested" or req.shoe_id is None:
            raise LiveError(f"no correction request {request_seq}")
        if tx.decided(request_seq) is not None:
            raise LiveError(f"correction request {request_seq} was already decided")
        if approve and req.actor == approver:
            raise LiveError("a correction needs an approver other than the operator who asks")
        p = req.payload
        if not approve:
            return tx.append("correction_rejected", req.table_id, req.shoe_id,
                             {"coup": p["coup"], "request": request_seq, "reason": note},
                             approver)
        requester = req.actor or ""
        _correction_check(tx, req.table_id, req.shoe_id, p["coup"], requester, p["reason"],
                          approver)
        body = {"coup": p["coup"], "reason": p["reason"], "approver": approver,
                "request": request_seq}
        if p["action"] == "void":
            return tx.append("coup_voided", req.table_id, req.shoe_id, body, requester)
        return tx.append("coup_amended", req.table_id, req.shoe_id, {**body, "new": p["new"]},
                         requester)
    return action


class LiveTables:
    """Convenience front for one journal: each call is durable when it returns."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def open_shoe(self, table_id: str, shoe_id: str, rules: str, actor: str,
                  burn_cards: list[str] | None = None,
                  cut_card_index: int | None = None) -> Event:
        return self.journal.run(open_shoe(table_id, shoe_id, rules, actor, burn_cards,
                                          cut_card_index))

    def enter_coup(self, table_id: str, entry: CoupEntry, actor: str) -> Event:
        return self.journal.run(enter_coup(table_id, entry, actor))

    def void_coup(self, table_id: str, shoe_id: str, coup: int, actor: str, reason: str,
                  approver: str) -> Event:
        return self.journal.run(void_coup(table_id, shoe_id, coup, actor, reason, approver))

    def amend_coup(self, table_id: str, shoe_id: str, coup: int, entry: CoupEntry, actor: str,
                   reason: str, approver: str) -> Event:
        return self.journal.run(amend_coup(table_id, shoe_id, coup, entry, actor, reason,
                                           approver))

    def close_shoe(self, table_id: str, actor: str) -> Event:
        return self.journal.run(close_shoe(table_id, actor))
