"""The store's bulk lock is waited for a bounded time, then JournalBusy naming it and its
holder (before, a second bulk run blocked in ``flock`` for as long as the first held it, or
for ever behind a stopped one, with nothing said)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import EXIT_BUSY, main
from roads.errors import JournalBusy
from roads.store import Store, journal_queue
from roads.store.layout import BULK_LOCK
from roads.store.lock_holders import held_by, holders
from tests.hung_writer import HOLDER, returns


@contextmanager
def held(path: Path) -> Iterator[int]:
    """``path`` locked exclusively by another process until the block ends; its pid."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store.create(tmp_path / "store")
    store.journal.queue_wait = 0.3
    return store


def test_a_bulk_run_behind_a_holder_gives_up_naming_the_lock_and_who_holds_it(
        store: Store) -> None:
    lock = store.root / BULK_LOCK
    with held(lock) as pid:
        started = time.monotonic()
        busy = returns(lambda: store.compact(date(2030, 1, 1)))
        waited = time.monotonic() - started
        assert isinstance(busy, JournalBusy), busy
        message = str(busy)
        assert BULK_LOCK in message and "bulk run" in message
        assert f"held by process {pid}: " in message and "holding" not in message
        assert busy.retry_after >= 1
        assert waited >= store.journal.queue_wait  # it waited, then gave up
        assert not store.writer_running()  # the writers' lock taken for it was let go
    done = returns(lambda: store.compact(date(2030, 1, 1)))  # the holder gone: it runs
    assert isinstance(done, dict), done


def test_an_ingest_behind_a_bulk_run_exits_busy_in_one_line(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal_queue, "QUEUE_WAIT_SECONDS", 0.3)
    csv = tmp_path / "coups.csv"
    csv.write_text("table,shoe,coup,outcome\nT1,s1,1,B\nT1,s1,2,P\n")
    runner = CliRunner()
    with held(store.root / BULK_LOCK) as pid:
        result = returns(lambda: runner.invoke(main, ["ingest", str(csv), "--store",
                                                      str(store.root)]))
    assert result.exit_code == EXIT_BUSY == 75, result.output  # try again, not "found"
    [line] = result.output.strip().splitlines()
    assert line.startswith("roads: error: the store is busy") and BULK_LOCK in line
    assert f"process {pid}" in line
    assert store.journal.count_after(("import_committed",), 0) == 0
    again = runner.invoke(main, ["ingest", str(csv), "--store", str(store.root)])
    assert again.exit_code == 0, again.output  # the holder gone, the same run stores
    assert store.journal.count_after(("import_committed",), 0) == 1


def test_holders_are_the_processes_holding_the_lock_not_its_waiters(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    lock.touch()
    assert holders(lock) == [] and held_by(lock) == ""
    assert holders(tmp_path / "missing.lock") == []
    with held(lock) as pid:
        waiter = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not _waiting(waiter.pid) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert holders(lock) == [pid]  # the waiter is not a holder
            assert held_by(lock).startswith(f" (held by process {pid}: ")
        finally:
            waiter.kill()
            waiter.wait()
    assert holders(lock) == []


def _waiting(pid: int) -> bool:
    """Whether ``pid`` is blocked in a lock (its "->" line in /proc/locks)."""
    with open("/proc/locks") as fh:
        return any(line.split()[1] == "->" and line.split()[5] == str(pid)
                   for line in fh if len(line.split()) > 5)


def test_a_bulk_lock_is_let_go_when_the_run_ends(store: Store) -> None:
    with store.bulk_lock():
        assert holders(store.root / BULK_LOCK) == [os.getpid()]
    assert holders(store.root / BULK_LOCK) == []
