"""Simulated tables for ``roads serve --demo``: the engine deals real shoes, and each coup
goes through the live-table service as the operator screen's and the API's do, entered by
the demo dealer and stored with source ``demo`` — never mistakable for a real table's.

Pace: ``seconds`` per coup on average (a real table deals about one coup a minute; the demo
default is faster so a screen visibly moves). Each table is one daemon thread; shoe ids and
seeds are drawn fresh per shoe, so a restarted demo never collides with a stored shoe.
"""

from __future__ import annotations

import logging
import random
import threading
from datetime import UTC, datetime

from roads.engine import deal_shoe
from roads.errors import InputError, JournalBusy
from roads.ingest.sources import from_dealer
from roads.rules import RuleSet, get_rules
from roads.tables import DEMO_DEALER, TableService

_log = logging.getLogger(__name__)


def _deal_table(service: TableService, table_id: str, rules_name: str, seconds: float,
                stop: threading.Event, max_coups: int | None) -> None:
    """Deal shoe after shoe until ``stop``. A shoe someone else closed (through the API or
    the operator screen) or a busy journal ends that shoe, not the table's thread: before,
    the next coup's refusal killed the thread and the table stopped dealing."""
    rules = get_rules(rules_name)
    rng = random.Random()
    while not stop.is_set():
        try:
            _deal_shoe(service, table_id, rules_name, rules, rng, seconds, stop, max_coups)
        except (InputError, JournalBusy) as exc:
            _log.info("demo table %s: %s; dealing a new shoe", table_id, exc)
            stop.wait(1.0)


def _deal_shoe(service: TableService, table_id: str, rules_name: str, rules: RuleSet,
               rng: random.Random, seconds: float, stop: threading.Event,
               max_coups: int | None) -> None:
    """One shoe, from the open to the shuffle break. Each coup names its shoe and number,
    so a coup never lands in a shoe the demo did not open."""
    state = service.table_state(table_id)
    if state.status == "closed":  # a supervisor closed the table: the demo leaves it closed
        stop.wait(1.0)
        return
    if state.status == "open" and state.shoe_id:
        service.close_shoe(DEMO_DEALER, table_id)  # a shoe left open by a restart
    seed = rng.getrandbits(63)
    shoe = deal_shoe(rules, seed)
    shoe_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{seed % 10000:04d}"
    service.open_shoe(DEMO_DEALER, table_id, shoe_id, rules_name, list(shoe.burn_cards),
                      shoe.cut_card_index, source="demo")
    for n, (player, banker) in enumerate(shoe.coups, start=1):
        if stop.wait(rng.uniform(0.5, 1.5) * seconds) or (max_coups and n > max_coups):
            break
        service.enter_coup(DEMO_DEALER, table_id, from_dealer(player, banker),
                           shoe_id=shoe_id, coup=n)
    if stop.is_set():
        return
    service.close_shoe(DEMO_DEALER, table_id)
    stop.wait(max(2.0, 3 * seconds))  # the shuffle break: screens show "between shoes"


def start_demo(service: TableService, tables: list[str], seconds: float,
               rules: str = "standard-8", max_coups: int | None = None) -> threading.Event:
    """Start one dealing thread per table; set the returned event to stop them."""
    stop = threading.Event()
    for table_id in tables:
        threading.Thread(target=_deal_table, name=f"demo-{table_id}", daemon=True,
                         args=(service, table_id, rules, seconds, stop, max_coups)).start()
    return stop
