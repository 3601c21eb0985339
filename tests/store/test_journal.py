"""The live journal: hash chain, tamper detection, durability under SIGKILL, group commit."""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roads.errors import JournalBusy
from roads.ingest.entry import CoupEntry
from roads.store import Store
from roads.store.journal import (
    GENESIS,
    SYSTEM,
    Action,
    Event,
    GroupCommitter,
    Journal,
    JournalError,
    Transaction,
    canonical,
    canonical_body_digest,
    link_hash,
)
from roads.store.journal_queue import QUEUE_SUFFIX
from roads.tables import LiveError, TableService
from tests.floor import DEALER, Floor
from tests.hung_writer import hung_writer, returns

#: How long a test waits for a thread that should be woken at once (a lost wake-up fails
#: the test in words instead of hanging it).
WAKE_SECONDS = 10


def _tamper(path: Path, sql: str) -> None:
    """What someone with file access could do: drop the guards and edit the database."""
    db = sqlite3.connect(path)
    db.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;" + sql)
    db.commit()
    db.close()


def _journal_with_coups(tmp_path: Path, coups: int = 5) -> Journal:
    floor = Floor(tmp_path)
    floor.open_shoe("T1", "S1")
    for i in range(coups):
        floor.coup("T1", "BPT"[i % 3])
    return floor.store.journal


def test_chain_links_every_event(tmp_path: Path) -> None:
    journal = _journal_with_coups(tmp_path)
    events = journal.events()
    assert [e.seq for e in events] == list(range(1, 7))
    assert events[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(events))
    report = journal.verify()
    assert report.ok and report.events == 6 and report.head == events[-1].hash


def test_updates_and_deletes_are_refused(tmp_path: Path) -> None:
    journal = _journal_with_coups(tmp_path)
    db = sqlite3.connect(tmp_path / "journal.sqlite")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("UPDATE events SET actor = 'x' WHERE seq = 2")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("DELETE FROM events WHERE seq = 2")
    assert journal.verify().ok


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE events SET payload = replace(payload, '\"B\"', '\"P\"') WHERE seq = 2;",
         "event 2 was altered"),
        ("DELETE FROM events WHERE seq = 3;", "event 3 is missing"),
        ("UPDATE events SET actor = 'someone else' WHERE seq = 4;", "event 4 was altered"),
        ("UPDATE events SET prev_hash = hash WHERE seq = 5;", "event 5 does not link"),
    ],
)
def test_tampering_is_detected(tmp_path: Path, sql: str, message: str) -> None:
    _journal_with_coups(tmp_path)
    _tamper(tmp_path / "journal.sqlite", sql)
    report = Journal(tmp_path / "journal.sqlite").verify()
    assert not report.ok and message in (report.reason or "")


def test_unknown_event_kind(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="unknown journal event kind"):
        Journal(tmp_path / "j.sqlite").append("coup_deleted", "T1", "S1", {})


def test_group_commit_numbers_coups_without_gaps(tmp_path: Path) -> None:
    store = Store.create(tmp_path)
    committer = GroupCommitter(store.journal)
    service = TableService(store, committer=committer)
    service.open_shoe(DEALER, "T1", "S1")
    with ThreadPoolExecutor(8) as pool:
        events = list(pool.map(
            lambda i: service.enter_coup(DEALER, "T1", CoupEntry(outcome="B"))[0],
            range(100)))
    committer.close()
    assert sorted(e.payload["coup"] for e in events) == list(range(1, 101))
    assert store.journal.verify().ok


def test_seals_in_shared_commits_beside_coups_of_other_tables_are_whole(tmp_path: Path
                                                                          ) -> None:
    """Shoes closed while other tables deal: each seal's event rides in a shared commit
    with their coups, and the store then verifies whole (files, catalogue, checkpoints)
    and reads every coup once."""
    from roads.store import Selection
    from roads.store.verify import verify

    store = Store.create(tmp_path)
    committer = GroupCommitter(store.journal)
    service = TableService(store, committer=committer)

    def table(t: int) -> None:
        for shoe in range(3):
            service.open_shoe(DEALER, f"T{t}", f"S{shoe}")
            for _ in range(5 + t):
                service.enter_coup(DEALER, f"T{t}", CoupEntry(outcome="BPT"[t % 3]))
            closed, sealed = service.close_shoe(DEALER, f"T{t}")
            assert sealed.kind == "shoe_sealed" and sealed.seq > closed.seq

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(table, range(6)))
    committer.close()
    assert len(store.journal.of_kinds(("shoe_sealed",))) == 18
    assert verify(store).ok and store.read.split_shoes() == set()  # one coups file a shoe
    for t in range(6):
        coups = store.read.coups(Selection(f"T{t}"))
        assert coups.height == 3 * (5 + t) and set(coups["outcome"]) == {"BPT"[t % 3]}
    assert store.read.shoes()["open"].to_list() == [False] * 18


def test_refused_action_in_a_shared_commit_leaves_the_others(tmp_path: Path) -> None:
    store = Store.create(tmp_path)
    committer = GroupCommitter(store.journal)
    service = TableService(store, committer=committer)
    with pytest.raises(LiveError, match="has no open shoe"):
        service.enter_coup(DEALER, "T9", CoupEntry(outcome="B"))
    committer.close()
    assert store.journal.verify().ok and store.journal.head()[0] == 0


def _holding(release: threading.Event, running: threading.Event | None = None) -> Any:
    """An action that holds the writer until ``release``, so the next ones queue into one
    batch; it sets ``running`` once the writer runs it (its own batch is formed then: what
    queues afterwards goes into the next one)."""
    def blocker(tx: Any) -> Any:
        if running is not None:
            running.set()
        release.wait(WAKE_SECONDS)
        return tx.append("shoe_opened", "T0", "S0", {}, "d")
    return blocker


def _opening(table: str) -> Any:
    return lambda tx: tx.append("shoe_opened", table, "S1", {}, "d")


def _failing(tx: Any) -> Any:
    """An unexpected error (not a refusal) after an append."""
    tx.append("shoe_opened", "TX", "S1", {}, "d")
    raise RuntimeError("the disk is full")


def test_a_failing_action_does_not_fail_the_others_of_its_shared_commit(tmp_path: Path
                                                                         ) -> None:
    """An unexpected error (not a refusal) in one action of a shared commit rolls the batch
    back; the others are then committed on their own, the failing one alone gets the error."""
    journal = Store.create(tmp_path).journal
    committer = GroupCommitter(journal)
    release = threading.Event()
    first = committer.submit(_holding(release))
    queued = [committer.submit(_opening("T1")), committer.submit(_failing),
              committer.submit(_opening("T2"))]
    release.set()
    first.result(30)
    assert queued[0].result(30).table_id == "T1" and queued[2].result(30).table_id == "T2"
    with pytest.raises(RuntimeError, match="disk is full"):
        queued[1].result(30)
    committer.close()
    assert sorted(e.table_id for e in journal.of_kinds(("shoe_opened",))) == ["T0", "T1", "T2"]
    assert journal.verify().ok


def test_run_answers_each_caller_with_its_own_outcome(tmp_path: Path) -> None:
    """``GroupCommitter.run`` (what the service's request threads call): callers that shared
    one commit each get their own durable event, or their own error, and nothing else."""
    journal = Store.create(tmp_path).journal
    committer = GroupCommitter(journal)
    release = threading.Event()

    def refused(tx: Any) -> Any:
        raise LiveError("table T8 has no open shoe")

    def call(action: Any) -> Any:
        try:
            return committer.run(action)
        except Exception as exc:  # (the outcome under test)
            return exc

    running = threading.Event()
    first = committer.submit(_holding(release, running))
    assert running.wait(WAKE_SECONDS), f"the writer did not start within {WAKE_SECONDS} s"
    with ThreadPoolExecutor(4) as pool:
        calls = [pool.submit(call, a)
                 for a in (_opening("T1"), refused, _failing, _opening("T2"))]
        deadline = time.monotonic() + WAKE_SECONDS
        while committer._queue.qsize() < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        queued = committer._queue.qsize()
        release.set()
        assert queued == 4, f"only {queued} of the 4 callers queued within {WAKE_SECONDS} s"
        waiting = wait(calls, timeout=WAKE_SECONDS).not_done
        assert not waiting, (f"{len(waiting)} caller(s) not woken {WAKE_SECONDS} s after "
                             "their commit (a lost wake-up in GroupCommitter.run)")
        outcomes = [c.result() for c in calls]
    first.result(WAKE_SECONDS)
    committer.close()
    assert [o.table_id for o in (outcomes[0], outcomes[3])] == ["T1", "T2"]
    assert isinstance(outcomes[1], LiveError) and "T8" in str(outcomes[1])
    assert isinstance(outcomes[2], RuntimeError) and "disk is full" in str(outcomes[2])
    durable = {e.seq: e for e in journal.events()}
    assert durable[outcomes[0].seq] == outcomes[0] and durable[outcomes[3].seq] == outcomes[3]
    assert sorted(e.table_id for e in durable.values()) == ["T0", "T1", "T2"]
    assert journal.verify().ok


WRITER = """
import sys
from pathlib import Path
from roads.ingest.entry import CoupEntry
from roads.store import Store
from roads.tables import Actor, TableService
service = TableService(Store.create(Path(sys.argv[1])))
dealer = Actor.user("dealer", "dealer")
print("ready", flush=True)
for shoe in range(1, 1000):
    service.open_shoe(dealer, "T1", f"S{shoe}")
    for i in range(60):
        event = service.enter_coup(dealer, "T1", CoupEntry(outcome="BP"[i % 2]))[0]
        print(shoe, event.payload["coup"], flush=True)  # acknowledged: durable by now
    service.close_shoe(dealer, "T1")
"""


def test_sigkill_mid_write_keeps_every_acknowledged_coup(tmp_path: Path) -> None:
    path = tmp_path
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    acknowledged: list[tuple[str, int]] = []
    deadline = time.monotonic() + 30
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        shoe, coup = proc.stdout.readline().split()
        acknowledged.append((f"S{shoe}", int(coup)))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    journal = Journal(path / "journal.sqlite")
    assert journal.verify().ok
    stored = [(e.shoe_id or "", int(e.payload["coup"])) for e in journal.events()
              if e.kind == "coup_entered"]
    assert set(acknowledged) <= set(stored)
    for shoe_id in {s for s, _ in stored}:
        numbers = [c for s, c in stored if s == shoe_id]
        assert numbers == list(range(1, len(numbers) + 1))
    # What the kill interrupted reads back whole: every stored coup, once.
    from roads.store import Store

    assert sorted(Store.open(path).read.coups().select("shoe_id", "coup").rows()) == \
        sorted(stored)


def _queue_free(journal: Journal) -> bool:
    """Whether another writer (a descriptor of its own) could take the writers' queue now."""
    fd = os.open(f"{journal.path}{QUEUE_SUFFIX}", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_transaction_holds_the_writers_queue_until_it_ends(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite")
    with journal.transaction() as tx:
        tx.append("table_closed", "T1", None, {}, "x")
        assert not _queue_free(journal)
    assert _queue_free(journal)
    with pytest.raises(JournalError), journal.transaction() as tx:
        assert not _queue_free(journal)
        tx.append("no_such_kind", "T1", None, {}, "x")
    assert _queue_free(journal)
    journal.close()  # its descriptor goes with its connections (nothing open at a fork)
    queue = os.path.realpath(f"{journal.path}{QUEUE_SUFFIX}")
    assert queue not in {os.path.realpath(f"/proc/self/fd/{fd}")
                         for fd in os.listdir("/proc/self/fd")}


HOLDER = """
import sys, time
from pathlib import Path
from roads.store.journal import Journal
with Journal(Path(sys.argv[1])).transaction() as tx:
    tx.append("table_closed", "T1", None, {}, "x")
    print("holding", flush=True)
    time.sleep(60)
"""


def test_a_writer_killed_in_its_transaction_leaves_the_queue_to_the_next(
        tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    Journal(path).close()
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
    journal = Journal(path)
    assert not _queue_free(journal)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    event = journal.append("table_closed", "T2", None, {}, "y")
    assert (event.seq, [e.table_id for e in journal.events()]) == (1, ["T2"])


def test_a_refused_action_takes_back_only_its_own_events_whenever_they_were_inserted(
        tmp_path: Path) -> None:
    """One shared commit: an action refused after appending — before its event reached
    SQLite, or after a read inserted it — leaves no event; the others of the batch stay,
    numbered without a gap."""
    journal = Journal(tmp_path / "j.sqlite")
    committer = GroupCommitter(journal)
    gate = threading.Event()

    def first(tx: Transaction) -> Event:  # holds the writer until the rest are queued
        gate.wait()
        return tx.append("login", SYSTEM, None, {"n": 0}, "a")

    def good(n: int) -> Action:
        return lambda tx: tx.append("login", SYSTEM, None, {"n": n}, "a")

    def refused(read: bool) -> Action:
        def action(tx: Transaction) -> Event:
            tx.append("login", SYSTEM, None, {"n": -1}, "a")
            if read:
                tx.last(SYSTEM, ("login",))  # a read inserts what was appended
            raise JournalError("refused after appending")
        return action

    futures = [committer.submit(first)]
    futures += [committer.submit(a) for a in (good(1), refused(False), good(2),
                                              refused(True), good(3))]
    gate.set()
    outcomes = []
    for future in futures:
        try:
            outcomes.append(future.result().payload["n"])
        except JournalError:
            outcomes.append("refused")
    committer.close()
    assert outcomes == [0, 1, "refused", 2, "refused", 3]
    assert [(e.seq, e.payload["n"]) for e in journal.events()] == \
        [(1, 0), (2, 1), (3, 2), (4, 3)]
    assert journal.verify().ok


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8),
       st.none() | st.text(max_size=8), st.text(max_size=8), st.text(max_size=8))
def test_an_appended_event_digests_its_body_as_canonical_json_of_the_whole(
        payload: Any, actor: str | None, kind: str, at: str) -> None:
    """The body digest spelled out around the payload's JSON is that of the whole body."""
    whole = hashlib.sha256(canonical({"at": at, "kind": kind, "actor": actor,
                                      "payload": payload}).encode()).hexdigest()
    assert canonical_body_digest(at, kind, actor, canonical(payload)) == whole


@given(st.integers(0, 2**62), st.text(max_size=8), st.none() | st.text(max_size=8),
       st.text(max_size=64))
def test_a_link_hashes_its_header_as_canonical_json(seq: int, table_id: str,
                                                    shoe_id: str | None, body: str) -> None:
    """The chain link spelled out is the one the docs define: the previous hash, a newline
    and the canonical JSON of ``[seq, table_id, shoe_id, body_sha256]``."""
    header = canonical([seq, table_id, shoe_id, body])
    assert link_hash(GENESIS, seq, table_id, shoe_id, body) == hashlib.sha256(
        f"{GENESIS}\n{header}".encode()).hexdigest()


def test_a_servers_service_bounds_the_processs_sqlite_caches(tmp_path: Path) -> None:
    """A connection per request thread, each with its own page cache, grew a server for as
    long as the journal grew: a server's service (group commit) sets SQLite's process-wide
    soft heap limit (what it saves is measured by the soak, benchmarks.floor)."""
    import sqlite3

    from roads.store.journal import SERVER_HEAP_BYTES
    from roads.tables import open_service

    def limit() -> int:
        db = sqlite3.connect(":memory:")
        try:
            return int(db.execute("PRAGMA soft_heap_limit").fetchone()[0])
        finally:
            db.close()

    before = limit()
    try:
        service = open_service(tmp_path / "store", create=True, group_commit=True)
        assert limit() == SERVER_HEAP_BYTES
        service.journal.close()
    finally:
        db = sqlite3.connect(":memory:")
        db.execute(f"PRAGMA soft_heap_limit={before}")
        db.close()


def test_a_writer_behind_a_hung_writer_gives_up_with_journal_busy(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite", queue_wait=0.2)
    journal.append("table_closed", "T0", None, {}, "x")
    with hung_writer(journal.path):
        busy = returns(lambda: journal.append("table_closed", "T1", None, {}, "x"))
        assert isinstance(busy, JournalBusy) and busy.retry_after >= 1
        assert "busy" in str(busy) and str(journal.path) in str(busy)
        # The next writer of this process gives up too (the first one's wait is still on).
        assert isinstance(returns(lambda: journal.append("table_closed", "T2")), JournalBusy)
        assert not _queue_free(journal)
    # The hung writer gone, the queue is free again and nothing of the refused writes stayed.
    assert returns(lambda: journal.append("table_closed", "T3", None, {}, "x")).seq == 2
    assert [e.table_id for e in journal.events()] == ["T0", "T3"] and journal.verify().ok
    assert _queue_free(journal)


def test_shared_commits_behind_a_hung_writer_answer_every_submitter(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite", queue_wait=0.3)
    committer = GroupCommitter(journal)

    def append(table: str) -> Action:
        return lambda tx: tx.append("table_closed", table, None, {}, "x")

    try:
        with hung_writer(journal.path):
            with ThreadPoolExecutor(6) as pool:
                answers = list(pool.map(lambda t: returns(lambda: committer.run(append(t))),
                                        [f"T{i}" for i in range(6)]))
            assert all(isinstance(a, JournalBusy) for a in answers), answers
            assert committer.commits == 0
        assert returns(lambda: committer.run(append("T9"))).seq == 1
        assert [e.table_id for e in journal.events()] == ["T9"]
    finally:
        committer.close()
