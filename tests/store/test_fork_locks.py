"""A forked child never holds its parent's locks: a ``flock`` belongs to the open file, and
a child's copy of the descriptor kept the parent's writers' queue (or writers' lock) held
after the parent died, for as long as the child lived, and every writer gave up behind it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from roads.errors import JournalBusy
from roads.store import Store
from roads.store.journal import Journal

#: Holds the queue (a transaction) or the writers' lock, forks a child that lives on, and
#: then hangs until it is killed (a parent that dies holding the lock).
PARENT = """
import os, sys, time
from pathlib import Path
from roads.store import Store

store = Store.open(Path(sys.argv[1]))
held = store.journal.transaction() if sys.argv[2] == "queue" else store.writing()
with held:
    child = os.fork()
    if child == 0:  # (it says so itself: its fork hooks have run by then, the parent's
        print(os.getpid(), flush=True)  # word raced them)
        time.sleep(600)
        os._exit(0)
    time.sleep(600)
"""


@contextmanager
def orphaned_child(root: Path, lock: str) -> Iterator[None]:
    """A parent holding ``lock`` forks a child and is killed; the child lives on in the
    block (then it is killed too)."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(root), lock],
                              stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    try:
        os.kill(child, 0)  # still alive
        yield
    finally:
        os.kill(child, signal.SIGKILL)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    Store.create(tmp_path / "store")
    return tmp_path / "store"


def test_a_child_of_a_dead_writer_does_not_hold_the_journal_queue(root: Path) -> None:
    with orphaned_child(root, "queue"):
        journal = Journal(root / "journal.sqlite", queue_wait=2.0)
        try:
            event = journal.append("table_closed", "T1", None, {}, "test")
        except JournalBusy as busy:  # the code before: the child kept the queue taken
            pytest.fail(f"the forked child holds the parent's queue: {busy}")
        assert event.seq == journal.head()[0]


def test_a_child_of_a_dead_writer_does_not_hold_the_writers_lock(root: Path) -> None:
    with orphaned_child(root, "writing"):
        assert not Store.open(root).writer_running()


def test_a_forked_child_keeps_the_lock_numbers_taken_by_dev_null(tmp_path: Path) -> None:
    from roads.store.journal_queue import close_lock, open_lock

    fd = open_lock(tmp_path / "z.lock")
    try:
        child = os.fork()
        if child == 0:  # the child: the number is /dev/null's now, not free for reuse
            ok = os.fstat(fd).st_rdev == os.stat(os.devnull).st_rdev
            os._exit(0 if ok else 1)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert os.fstat(fd).st_ino == os.stat(tmp_path / "z.lock").st_ino  # the parent's
    finally:
        close_lock(fd)
