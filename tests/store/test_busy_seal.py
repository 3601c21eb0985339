"""A close whose seal the journal refuses (``JournalBusy``: a writer ahead has hung, or a
process holds the store's writers' lock): nothing of the seal is left on disk, and closing
again completes the close, as the error's "try again" says."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from roads.errors import JournalBusy
from roads.store import Selection
from roads.store.journal_queue import QUEUE_WAIT_SECONDS
from roads.store.layout import WRITERS_LOCK, walk
from roads.store.verify import verify
from roads.tables import LiveError
from tests.floor import Floor
from tests.hung_writer import holding, hung_from_seal, returns


def _floor(tmp_path: Path) -> Floor:
    floor = Floor(tmp_path / "store")
    floor.store.journal.queue_wait = 0.2
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPB")
    return floor


def _closed_behind_a_hung_writer(floor: Floor) -> None:
    with hung_from_seal(floor.store), pytest.raises(JournalBusy, match="busy"):
        floor.close("T1")
    assert floor.store.unsealed_closed() == [("T1", "S1")]  # the close committed
    _patient(floor)


def _patient(floor: Floor) -> None:
    """The default wait again: the given-up waiter's helper lets go as soon as it is run,
    which on a loaded machine can take longer than the short wait of a test."""
    floor.store.journal.queue_wait = QUEUE_WAIT_SECONDS


def test_a_seal_the_journal_refuses_leaves_no_temporaries(tmp_path: Path) -> None:
    floor = _floor(tmp_path)
    _closed_behind_a_hung_writer(floor)
    assert walk(floor.store.root).temporaries == []
    assert verify(floor.store).problems == []


def test_closing_again_after_a_refused_seal_seals_the_shoe(tmp_path: Path) -> None:
    floor = _floor(tmp_path)
    _closed_behind_a_hung_writer(floor)
    close = floor.store.journal.last("T1", ("shoe_closed",))
    closed, sealed = floor.close("T1")  # the retry the 503 asks for
    assert close is not None and closed.seq == close.seq  # answered as the close was
    assert (sealed.kind, sealed.table_id, sealed.shoe_id) == ("shoe_sealed", "T1", "S1")
    assert floor.store.unsealed_closed() == []
    assert floor.store.journal.count("T1", "shoe_closed") == 1
    stored = floor.store.read.coups(Selection("T1", "S1"))
    assert stored["outcome"].cast(str).to_list() == ["B", "P", "B"]
    assert verify(floor.store).problems == []
    with pytest.raises(LiveError, match="no open shoe"):  # sealed: not a retry any more
        floor.close("T1")


def test_a_seal_behind_an_exclusive_holder_of_the_writers_lock_gives_up(
        tmp_path: Path) -> None:
    floor = _floor(tmp_path)
    lock = floor.store.root / WRITERS_LOCK
    assert stat.S_IMODE(os.stat(lock).st_mode) == 0o600  # the store's owner's only
    with holding(lock):
        busy = returns(lambda: floor.close("T1"))
        assert isinstance(busy, JournalBusy) and "writers' lock" in str(busy), busy
        assert busy.retry_after >= 1
        # The next writers give up too, on the process's one waiter: the first one's helper
        # still waits in flock, and no other thread is left waiting with it.
        for _ in range(3):
            assert isinstance(returns(lambda: floor.close("T1")), JournalBusy)
        waiting = [t for t in threading.enumerate() if str(lock) in t.name]
        assert len(waiting) == 1, waiting
    assert floor.store.unsealed_closed() == [("T1", "S1")]
    _patient(floor)
    closed, sealed = returns(lambda: floor.close("T1"))  # the holder gone: the retry seals
    assert (closed.kind, sealed.kind) == ("shoe_closed", "shoe_sealed")
    assert floor.store.unsealed_closed() == []
    assert walk(floor.store.root).temporaries == [] and verify(floor.store).problems == []
