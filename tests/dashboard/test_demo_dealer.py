"""A demo table keeps dealing when someone else closes its shoe (attack7 F4: the dealer's
thread died on the next coup's refusal and the table stopped for good)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

from dashboard.demo import _deal_shoe, _deal_table
from roads.rules import get_rules
from roads.store import Store
from roads.tables import Actor, TableService
from roads.tables.state import TableState
from tests.floor import Floor

TABLE = "DEMO-01"


def _until(service: TableService, ok: Callable[[TableState], bool]) -> TableState:
    """The table's state once ``ok`` holds (the dealer runs on its own thread)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = service.table_state(TABLE)
        if ok(state):
            return state
        time.sleep(0.01)
    raise AssertionError(f"never reached: {service.table_state(TABLE)}")


def test_a_shoe_closed_through_the_api_ends_that_shoe_not_the_table(tmp_path: Path) -> None:
    service = TableService(Store.create(tmp_path / "store"))
    stop = threading.Event()
    dealer = threading.Thread(target=_deal_table, daemon=True,
                              args=(service, TABLE, "standard-8", 0.005, stop, None))
    dealer.start()
    try:
        first = _until(service, lambda s: s.status == "open" and len(s.coups) >= 3)
        service.close_shoe(Actor.user("floor", "supervisor"), TABLE)  # as the API would
        second = _until(service, lambda s: s.status == "open" and s.shoe_id != first.shoe_id
                        and len(s.coups) >= 3)
        assert dealer.is_alive()
        assert [c["coup"] for c in second.coups] == list(range(1, len(second.coups) + 1))
    finally:
        stop.set()
        dealer.join(30)
    assert not dealer.is_alive()


def test_a_table_a_supervisor_closed_stays_closed(tmp_path: Path) -> None:
    """One step of the dealer, on its own thread's code but called here: a closed table is
    looked at and left as it is (before this, the demo opened a new shoe on it)."""
    floor = Floor(tmp_path / "store").sealed_shoe(TABLE, "S1", "BPB")
    closed = floor.service.close_table(Actor.user("floor", "supervisor"), TABLE)
    stop = threading.Event()
    stop.set()  # (the step's one-second wait returns at once)
    _deal_shoe(floor.service, TABLE, "standard-8", get_rules("standard-8"), random.Random(1),
               0.005, stop, None)
    assert floor.service.table_state(TABLE).status == "closed"
    assert floor.service.journal.head()[0] == closed.seq  # nothing written
