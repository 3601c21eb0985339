"""A live floor for tests: one store, its live-table service, a dealer and a supervisor."""

from __future__ import annotations

from pathlib import Path

from roads.ingest.entry import CoupEntry
from roads.store import Event, Store
from roads.tables import Actor, TableService

DEALER = Actor.user("dealer", "dealer")
SUPERVISOR = Actor.user("super", "supervisor")


class Floor:
    """Live tables through the service, as the API and the operator screen drive them."""

    def __init__(self, root: Path | Store) -> None:
        self.store = root if isinstance(root, Store) else Store.create(root)
        self.service = TableService(self.store)

    def open_shoe(self, table: str, shoe: str, rules: str = "standard-8",
                  burn_cards: list[str] | None = None, cut_card_index: int | None = None,
                  who: Actor = DEALER) -> Event:
        return self.service.open_shoe(who, table, shoe, rules, burn_cards, cut_card_index)

    def coup(self, table: str, outcome: str | None = None,
             player: tuple[str, ...] | None = None, banker: tuple[str, ...] | None = None,
             who: Actor = DEALER, **flags: bool) -> Event:
        method = "cards" if player else "keypad"
        entry = CoupEntry(outcome=outcome, player_cards=player, banker_cards=banker,
                          method=method, **flags)  # type: ignore[arg-type]
        return self.service.enter_coup(who, table, entry)[0]

    def coups(self, table: str, outcomes: str) -> None:
        for outcome in outcomes:
            self.coup(table, outcome)

    def void(self, table: str, shoe: str, coup: int, reason: str = "double entry") -> Event:
        request = self.service.request_correction(DEALER, table, shoe, coup, reason)
        return self.service.decide_correction(SUPERVISOR, request.seq, True)

    def amend(self, table: str, shoe: str, coup: int, entry: CoupEntry,
              reason: str = "keyed wrong") -> Event:
        request = self.service.request_correction(DEALER, table, shoe, coup, reason, entry)
        return self.service.decide_correction(SUPERVISOR, request.seq, True)

    def close(self, table: str) -> tuple[Event, Event]:
        return self.service.close_shoe(DEALER, table)

    def sealed_shoe(self, table: str, shoe: str, outcomes: str) -> Floor:
        """Open ``shoe``, deal ``outcomes`` into it and close (seal) it; the floor, to go on."""
        self.open_shoe(table, shoe)
        self.coups(table, outcomes)
        self.close(table)
        return self


class Dealer:
    """A dealer seeding a store through the service (the e2e tests' way of dealing)."""

    def __init__(self, store: Store) -> None:
        self.service, self.who = TableService(store), DEALER

    def open_shoe(self, table: str, shoe: str, rules: str, _by: str,
                  burn: list[str] | None = None) -> None:
        self.service.open_shoe(self.who, table, shoe, rules, burn)

    def enter_coup(self, table: str, entry: CoupEntry, _by: str) -> None:
        self.service.enter_coup(self.who, table, entry)
