"""Two first shoes of new look-alike tables (``t09`` and ``T09``) opened at once, as two
server workers would: the check that no known table reads the same must be made inside
the journal's write transaction, so only one of the two becomes a table."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from roads.ingest import bounds
from roads.tables import LiveError
from tests.floor import DEALER, Floor


def test_look_alike_first_shoes_at_once_make_one_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first opener stops in its look-alike check until the second has opened (or has
    waited 3 s: with the check under the journal's lock it cannot). Before the fix both
    checks found no table and both tables were made."""
    floor = Floor(tmp_path / "store")
    second_done = threading.Event()
    real = bounds.lookalike

    def first_waits(value: str, known: object) -> str | None:
        if threading.current_thread().name == "first":
            second_done.wait(3)
        return real(value, known)  # type: ignore[arg-type]

    monkeypatch.setattr(bounds, "lookalike", first_waits)
    outcome: dict[str, object] = {}

    def open_first_shoe(table: str) -> None:
        try:
            outcome[table] = floor.service.open_shoe(DEALER, table, "S1")
        except Exception as exc:  # the outcome is what the test judges
            outcome[table] = exc
        finally:
            if threading.current_thread().name == "second":
                second_done.set()

    first = threading.Thread(target=open_first_shoe, args=("t09",), name="first")
    second = threading.Thread(target=open_first_shoe, args=("T09",), name="second")
    first.start()
    second.start()
    first.join(120)
    second.join(120)
    refused = [t for t, o in outcome.items() if isinstance(o, LiveError)]
    assert len(refused) == 1, outcome
    assert "looks like table" in str(outcome[refused[0]])
    assert [t for t in ("t09", "T09") if floor.store.journal.table_head(t)] == \
        [t for t in ("t09", "T09") if t not in refused]
