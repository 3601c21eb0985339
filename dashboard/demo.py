"""Simulated tables for ``roads serve --demo``: the engine deals real shoes, and each coup
goes through the same journal action the operator screen and the API use.

Pace: ``seconds`` per coup on average (a real table deals about one coup a minute; the demo
default is faster so a screen visibly moves). Each table is one daemon thread; shoe ids and
seeds are drawn fresh per shoe, so a restarted demo never collides with a stored shoe.
"""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime

from roads.engine import deal_shoe
from roads.errors import InputError
from roads.rules import get_rules
from roads.store.live import CoupEntry, close_shoe, enter_coup, open_shoe
from roads.store.store import Store
from roads.store.tables import table_state

DEALER = "demo-dealer"


def _deal_table(store: Store, table_id: str, rules_name: str, seconds: float,
                stop: threading.Event, max_coups: int | None) -> None:
    rules = get_rules(rules_name)
    rng = random.Random()
    while not stop.is_set():
        state = table_state(store, table_id)
        if state.status == "open" and state.shoe_id:
            store.journal.run(close_shoe(table_id, DEALER))  # a shoe left open by a restart
            store.seal(table_id, state.shoe_id)
        seed = rng.getrandbits(63)
        shoe = deal_shoe(rules, seed)
        shoe_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{seed % 10000:04d}"
        try:
            store.journal.run(open_shoe(table_id, shoe_id, rules_name, DEALER,
                                        list(shoe.burn_cards), shoe.cut_card_index))
        except InputError:
            stop.wait(1.0)
            continue
        for n, (player, banker) in enumerate(shoe.coups, start=1):
            if stop.wait(rng.uniform(0.5, 1.5) * seconds) or (max_coups and n > max_coups):
                break
            store.journal.run(enter_coup(table_id, CoupEntry(player_cards=player,
                                                             banker_cards=banker), DEALER))
        if stop.is_set():
            return
        event = store.journal.run(close_shoe(table_id, DEALER))
        store.seal(table_id, event.shoe_id or shoe_id)
        stop.wait(max(2.0, 3 * seconds))  # the shuffle break: screens show "between shoes"


def start_demo(store: Store, tables: list[str], seconds: float, rules: str = "standard-8",
               max_coups: int | None = None) -> threading.Event:
    """Start one dealing thread per table; set the returned event to stop them."""
    stop = threading.Event()
    for table_id in tables:
        threading.Thread(target=_deal_table, name=f"demo-{table_id}", daemon=True,
                         args=(store, table_id, rules, seconds, stop, max_coups)).start()
    return stop
