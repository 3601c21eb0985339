"""Who holds a lock file: the processes ``/proc/locks`` lists on its inode (Linux).

A write turned away because a lock stayed taken says who took it, so an operator can tell
a long ingest from a stuck process without reading ``/proc`` by hand. Best effort: where
``/proc/locks`` is missing or unreadable, or the holder's command line is not ours to
read, less (or nothing) is said; it never raises.
"""

from __future__ import annotations

import os
from pathlib import Path

from roads.errors import RETRY_AFTER_SECONDS, JournalBusy

#: How much of a holder's command line is shown (one line of an error message).
COMMAND_CHARS = 80


def holders(path: str | os.PathLike[str]) -> list[int]:
    """The process ids holding a ``flock`` of ``path`` (waiters not included), in the
    order the kernel lists them; empty when none is known."""
    try:
        stat = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    where = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    found: list[int] = []
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5408268 0 EOF"; a waiter's has "->" after
        # the number
        if len(fields) < 6 or fields[1] != "FLOCK" or fields[5] != where:
            continue
        try:
            pid = int(fields[4])
        except ValueError:
            continue
        if pid not in found:
            found.append(pid)
    return found


def lock_busy(what: str, path: str | os.PathLike[str], after: str = "",
              then: str = "try again shortly") -> JournalBusy:
    """A write turned away by the lock file ``path`` staying taken, in the one form every
    lock says it: ``WHAT (PATH)AFTER (held by …); THEN``, to be tried again after
    :data:`~roads.errors.RETRY_AFTER_SECONDS` (the path and the holder are what
    :attr:`JournalBusy.public` leaves out for an HTTP client)."""
    return JournalBusy(f"{what} ({path}){after}{held_by(path)}; {then}", RETRY_AFTER_SECONDS)


def held_by(path: str | os.PathLike[str]) -> str:
    """`` (held by process 1234: roads ingest day.csv)`` for a message naming the lock, or
    "" when no holder is known. ``/proc/locks`` names the process that *took* the lock; a
    child it forked may hold it now, and the taker's id may since belong to another
    program: a process is named only while it has the file open, else said to be gone."""
    try:
        stat = os.stat(path)
    except OSError:
        return ""
    named = [_named(pid) if _has_open(pid, stat) else f"{pid} (since ended or passed on)"
             for pid in holders(path)]
    if not named:
        return ""
    return f" (held by {'process' if len(named) == 1 else 'processes'} {', '.join(named)})"


def _has_open(pid: int, stat: os.stat_result) -> bool:
    """Whether process ``pid`` has the file of ``stat`` open (False where not ours to see)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            other = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (stat.st_dev, stat.st_ino):
            return True
    return False


def _named(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return str(pid)
    words = [w.decode(errors="replace") for w in raw.split(b"\0") if w]
    if words:
        words[0] = os.path.basename(words[0])
    command = " ".join(words)
    # (no parentheses: JournalBusy.public cuts the message's parenthesised details)
    command = " ".join("".join(c if c.isprintable() and c not in "()" else " "
                               for c in command).split())
    if len(command) > COMMAND_CHARS:
        command = command[:COMMAND_CHARS - 1] + "…"
    return f"{pid}: {command}" if command else str(pid)
