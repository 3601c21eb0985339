"""The live service keeps each open shoe's validator state in memory (``OpenShoes``): these
hold it to the journal when others write the same store — a second service (another server
worker), a transaction rolled back — so it never accepts an impossible coup nor refuses a
valid one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roads.ingest.entry import CoupEntry, EntryError
from roads.rules import PRESETS, RuleSet
from roads.store import Store
from roads.store.journal import Transaction
from roads.tables import LiveError, Settings, TableService, actions
from roads.tables.open_shoes import OpenShoes
from tests.floor import DEALER

ONE_DECK = dataclasses.replace(PRESETS["standard-8"], name="one-deck", decks=1)
#: Player naturals (an ace and an eight against two pictures), no card in two of them.
ACE_COUPS = [(("As", "8s"), ("Kd", "Qd")), (("Ah", "8h"), ("Kc", "Qc")),
             (("Ad", "8d"), ("Kh", "Qh")), (("Ac", "8c"), ("Ks", "Qs"))]


def _rules(name: str) -> RuleSet:
    return ONE_DECK if name == "one-deck" else PRESETS[name]


def _two_workers(root: Path) -> tuple[TableService, TableService]:
    """Two services on one store with their own connections, as two server workers."""
    first = TableService(Store.create(root), Settings(rule_set=_rules))
    return first, TableService(Store.open(root), Settings(rule_set=_rules))


def _cards(player: tuple[str, ...], banker: tuple[str, ...]) -> CoupEntry:
    return CoupEntry(player_cards=player, banker_cards=banker, method="cards")


def _keypad() -> CoupEntry:
    return CoupEntry(outcome="B", method="keypad")


def test_coups_another_worker_entered_count_for_the_next_number(tmp_path: Path) -> None:
    a, b = _two_workers(tmp_path)
    a.open_shoe(DEALER, "T1", "S1")
    numbers = [a.enter_coup(DEALER, "T1", _keypad())[0].payload["coup"] for _ in range(3)]
    numbers += [b.enter_coup(DEALER, "T1", _keypad())[0].payload["coup"] for _ in range(2)]
    numbers.append(a.enter_coup(DEALER, "T1", _keypad())[0].payload["coup"])
    assert numbers == [1, 2, 3, 4, 5, 6]
    # Named posts: the next number is the one after the other worker's coup.
    b.enter_coup(DEALER, "T1", _keypad())
    with pytest.raises(LiveError, match="out of order: the next coup of shoe S1 is 8"):
        a.enter_coup(DEALER, "T1", _keypad(), shoe_id="S1", coup=7 + 2)
    event, new = a.enter_coup(DEALER, "T1", _keypad(), shoe_id="S1", coup=7)
    assert (event.payload["coup"], new) == (7, False)  # the other worker's coup 7, the same


def test_cards_another_worker_dealt_count_in_the_inventory(tmp_path: Path) -> None:
    a, b = _two_workers(tmp_path)
    a.open_shoe(DEALER, "T1", "S1", rules="one-deck")
    a.enter_coup(DEALER, "T1", _cards(*ACE_COUPS[0]))  # a reads the shoe: As out
    b.enter_coup(DEALER, "T1", _cards(*ACE_COUPS[1]))  # b deals Ah; a has not seen it
    with pytest.raises(EntryError, match="card Ah would be seen 2 times"):
        a.enter_coup(DEALER, "T1", _cards(("Ah", "8d"), ("Kh", "Qh")))
    with pytest.raises(EntryError, match="card As would be seen 2 times"):
        b.enter_coup(DEALER, "T1", _cards(*ACE_COUPS[0]))
    assert a.enter_coup(DEALER, "T1", _cards(*ACE_COUPS[2]))[0].payload["coup"] == 3


def test_a_shoe_another_worker_closed_or_opened_is_the_one_coups_go_to(
        tmp_path: Path) -> None:
    a, b = _two_workers(tmp_path)
    a.open_shoe(DEALER, "T1", "S1", rules="one-deck")
    for coup in ACE_COUPS[:2]:
        a.enter_coup(DEALER, "T1", _cards(*coup))
    b.close_shoe(DEALER, "T1")
    with pytest.raises(LiveError, match="has no open shoe"):
        a.enter_coup(DEALER, "T1", _keypad())
    b.open_shoe(DEALER, "T1", "S2", rules="one-deck")
    # A fresh deck: the aces S1 dealt are back, and numbering starts again.
    event = a.enter_coup(DEALER, "T1", _cards(*ACE_COUPS[0]))[0]
    assert (event.shoe_id, event.payload["coup"]) == ("S2", 1)


def test_a_rolled_back_coup_leaves_neither_its_number_nor_its_cards(tmp_path: Path) -> None:
    """A commit that fails after the service's state took a coup: the journal does not
    hold it, so neither may the service (its number is free, its cards still in the
    shoe), even when another writer then fills that sequence number."""
    a, b = _two_workers(tmp_path)
    a.open_shoe(DEALER, "T1", "S1", rules="one-deck")
    a.enter_coup(DEALER, "T1", _cards(*ACE_COUPS[0]))
    with pytest.raises(RuntimeError, match="disk full"), a.journal.transaction() as tx:
        _enter(a, tx, _cards(*ACE_COUPS[1]))
        raise RuntimeError("disk full")
    b.enter_coup(DEALER, "T1", _keypad())  # another writer takes the freed sequence number
    event = a.enter_coup(DEALER, "T1", _cards(*ACE_COUPS[1]))[0]  # Ah: still in the shoe
    assert event.payload["coup"] == 3
    assert [e.payload["coup"] for e in a.journal.events("T1", "S1")
            if e.kind == "coup_entered"] == [1, 2, 3]


def _enter(service: TableService, tx: Transaction, entry: CoupEntry) -> None:
    actions.enter_coup("T1", entry, DEALER.name, service._shoes, actions.Posted())(tx)


# -- any interleaving: the kept state decides as a state read from SQLite does ------------
#: Legal coups of a one-deck shoe, some sharing cards (so the inventory refuses some).
HANDS = [*ACE_COUPS, (("As", "7s"), ("Kd", "Jd")), (("2s", "7h"), ("Js", "Qs")),
         (("9h", "Kc"), ("8c", "Jh")), (("Ah", "7c"), ("Jc", "Qh"))]
STEPS = st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from(
    ["coup", "coup", "coup", "keypad", "close", "open", "other"]),
    st.integers(0, len(HANDS) - 1)), min_size=1, max_size=25)


def _decision(run: Callable[..., object], *args: object, **kwargs: object) -> str:
    try:
        run(*args, **kwargs)
    except (LiveError, EntryError) as refused:
        return f"refused: {refused}"
    return "accepted"


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_every_decision_equals_one_from_the_journal_alone(tmp_path_factory: pytest.
                                                          TempPathFactory,
                                                          steps: list[tuple[str, str, int]]
                                                          ) -> None:
    """Two workers and a third table's writer in any order: before each coup, a validator
    with no kept state (read from SQLite in the same transaction, then rolled back) gives
    the decision the worker's kept state then gives."""
    a, b = _two_workers(tmp_path_factory.mktemp("store"))
    workers = {"a": a, "b": b}
    shoes = 0
    for who, step, hand in steps:
        service = workers[who]
        if step == "open":
            shoes += 1
            _decision(service.open_shoe, DEALER, "T1", f"S{shoes}", rules="one-deck")
        elif step == "close":
            _decision(service.close_shoe, DEALER, "T1")
        elif step == "other":  # another table's events move the head on
            _decision(service.open_shoe, DEALER, f"X{shoes}-{hand}", "S1")
        else:
            entry = _keypad() if step == "keypad" else _cards(*HANDS[hand])
            expected = _cold_decision(service, entry)
            assert _decision(service.enter_coup, DEALER, "T1", entry) == expected
    for shoe in {e.shoe_id for e in a.journal.events("T1")}:
        numbers = [e.payload["coup"] for e in a.journal.events("T1", shoe)
                   if e.kind == "coup_entered"]
        assert numbers == list(range(1, len(numbers) + 1))


def _cold_decision(service: TableService, entry: CoupEntry) -> str:
    db = service.journal.connection()
    db.execute("BEGIN IMMEDIATE")
    try:
        return _decision(lambda: actions.enter_coup(
            "T1", entry, DEALER.name, OpenShoes(), actions.Posted(),
            tolerance=service.settings.tolerance)(Transaction(db)))
    finally:
        db.execute("ROLLBACK")
