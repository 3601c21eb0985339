"""Who holds a lock, as a busy message says it: only a process that has the file open now is
named (``/proc/locks`` names the process that took the lock, which may have passed it on)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from roads.errors import JournalBusy
from roads.store.lock_holders import held_by, holders

# Takes the lock, forks a child that keeps it, closes its own copy and ends; the child
# prints its pid, then waits for its stdin to close.
TAKER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    child = os.fork()
    if child == 0:
        os.write(1, b"%d\\n" % os.getpid())  # one write each: the two lines never interleave
        sys.stdin.read()
        os._exit(0)
    os.close(fd)
    os.write(1, b"%d\\n" % os.getpid())
""")


def test_a_lock_passed_to_a_child_does_not_name_the_ended_taker(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    proc = subprocess.Popen([sys.executable, "-c", TAKER, str(lock)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    pids = {int(proc.stdout.readline()), int(proc.stdout.readline())}
    proc.wait(timeout=30)
    taker = proc.pid
    try:
        assert taker in pids and holders(lock) == [taker]  # what the kernel says
        said = held_by(lock)
        assert said == f" (held by process {taker} (since ended or passed on))"
    finally:
        proc.stdin.close()


def test_a_holder_is_named_while_it_has_the_lock_open(tmp_path: Path) -> None:
    import fcntl

    lock = tmp_path / "y.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert held_by(lock).startswith(f" (held by process {os.getpid()}: ")
        assert "(" not in held_by(lock)[2:]  # a command line's parentheses are not kept
    finally:
        os.close(fd)
    assert held_by(lock) == ""


def test_the_public_message_drops_every_parenthesised_detail() -> None:
    busy = JournalBusy("the store is busy: another bulk run holds its bulk lock "
                       "(/srv/store/.bulk.lock) (held by process 12 (since ended or passed "
                       "on)); try again when it has ended", 1)
    assert busy.public == ("the store is busy: another bulk run holds its bulk lock; try "
                           "again when it has ended")
    assert "/srv/store" in str(busy)


def test_only_a_lock_held_elsewhere_is_busy() -> None:
    from dashboard.app import _locked

    busy = sqlite3.OperationalError("database is locked")
    busy.sqlite_errorcode = sqlite3.SQLITE_BUSY
    ours = sqlite3.OperationalError("database table is locked")
    ours.sqlite_errorcode = sqlite3.SQLITE_LOCKED
    assert _locked(busy) and not _locked(ours)
