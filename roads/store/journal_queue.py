"""The journal writers' queue: a lock on a file beside the journal, waited for a bounded time.

Writers take an exclusive ``flock`` of ``journal.sqlite.lock`` before SQLite's write lock, so
the kernel wakes the next writer the moment a commit ends (SQLite's own busy handler sleeps
up to 100 ms a try). A blocking ``flock`` has no timeout, though, and a holder that hangs
(a stuck process, a stopped one, a disk that stopped answering) would hang every writer
behind it, request threads of a server included. So a writer that finds the lock taken
waits for it on a helper thread while it waits on that thread with a timeout; a writer that
gives up raises :class:`~roads.errors.JournalBusy`, and the helper hands the lock straight
back once it gets it.

The bounded wait (:func:`lock_within`) is the store's writers' lock's too.

The threads of one process queue on one in-process mutex first (a lock with a timeout of
its own), then one of them takes the file lock with the process's one descriptor. The lock
goes with its process, so a killed writer never leaves it held; a forked child lets go of
its copies of the process's lock descriptors at once (:func:`open_lock`'s registry, each
number pointed at ``/dev/null``), so a child that outlives its parent does not keep the
parent's lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable

from roads.errors import RETRY_AFTER_SECONDS, JournalBusy
from roads.store.lock_holders import lock_busy

#: The file beside the journal that its writers queue on.
QUEUE_SUFFIX = ".lock"
#: How long a writer waits for the queue before it gives up, seconds (a commit takes
#: milliseconds; a wait this long means a writer ahead has hung).
QUEUE_WAIT_SECONDS = 5.0


class WritersQueue:
    """One journal's queue, as this process takes it (:meth:`take`, :meth:`give_back`)."""

    def __init__(self, journal_path: str) -> None:
        self.path = f"{journal_path}{QUEUE_SUFFIX}"
        self._fresh()

    def _fresh(self) -> None:
        self._pid = os.getpid()
        self._mutex = threading.Lock()  # held from take to give_back, by one thread
        self._fd: int | None = None

    def take(self, wait: float) -> None:
        """Hold the queue, waiting ``wait`` seconds at most; else :class:`JournalBusy`."""
        if self._pid != os.getpid():  # forked: the parent's mutex is its own, and its
            if self._fd is not None:  # descriptor is /dev/null in this child (_forked)
                with contextlib.suppress(OSError):
                    os.close(self._fd)
            self._fresh()
        deadline = time.monotonic() + wait
        if not self._mutex.acquire(timeout=max(wait, 0.0)):
            raise self._busy()
        try:
            if self._fd is None:
                self._fd = open_lock(self.path)
        except BaseException:
            self._mutex.release()
            raise
        # Given up, the helper keeps the mutex until its ``flock`` returns, then unlocks and
        # lets the mutex go: the process's next writer then finds the queue as it really is.
        lock_within(self._fd, fcntl.LOCK_EX, deadline, self._busy, self._mutex.release,
                    f"the journal's writers' queue {self.path}")

    def give_back(self) -> None:
        """Let the next writer in (only the thread that took it calls this)."""
        try:
            assert self._fd is not None
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._mutex.release()

    def close(self) -> None:
        """Close the descriptor unless a writer holds or waits for the queue."""
        if self._pid == os.getpid() and self._fd is not None \
                and self._mutex.acquire(blocking=False):
            try:
                close_lock(self._fd)
                self._fd = None
            finally:
                self._mutex.release()

    def _busy(self) -> JournalBusy:
        return lock_busy("the journal is busy: a writer ahead of this one has not let its "
                         "queue go", self.path)


def open_lock(path: str | os.PathLike[str]) -> int:
    """A descriptor of the lock file ``path`` (made if missing), readable by the store's
    owner only: anyone who can open a lock can hold it exclusively, and hold every writer
    behind it. A file an earlier version made 0644 is made 0600 here when this process
    owns it (another owner's is left as it is: only its owner may change it)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        stat = os.fstat(fd)
        if stat.st_mode & 0o077 and stat.st_uid == os.geteuid():
            os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    with _open_guard:
        _open_locks.add(fd)
    return fd


def close_lock(fd: int) -> None:
    """Close a descriptor :func:`open_lock` gave (which lets its lock go)."""
    with _open_guard:
        _open_locks.discard(fd)
    os.close(fd)


#: The lock descriptors this process has open (:func:`open_lock`), for :func:`_forked`.
_open_locks: set[int] = set()
_open_guard = threading.Lock()


def _forked() -> None:
    """In a forked child: let go of every lock descriptor the parent had open. A ``flock``
    belongs to the open file, which the child's copy of the descriptor shares: kept, it
    held the parent's queue (or writers' lock) for as long as the child lived, after the
    parent let it go by dying, and no writer got past it. (Replacing the child's copy leaves
    the parent's lock as it is; ``O_CLOEXEC`` covers an ``exec`` only.)"""
    global _open_guard
    _open_guard = threading.Lock()  # (another thread of the parent may have held it)
    if not _open_locks:
        return
    # /dev/null in each one's place, not a bare close: the child's copies of the objects
    # holding these numbers (a queue, a ``with store.writing()`` block) may still close
    # them, and a number left free could by then be another file of the child's.
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        for fd in _open_locks:
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
    finally:
        os.close(null)
    _open_locks.clear()


os.register_at_fork(after_in_child=_forked)


def lock_within(fd: int, operation: int, deadline: float, busy: Callable[[], JournalBusy],
                abandon: Callable[[], None], what: str) -> None:
    """``flock(fd, operation)`` (``LOCK_EX`` or ``LOCK_SH``) of ``what`` taken by
    ``deadline`` (:func:`time.monotonic`), else ``busy()`` raised: the journal's queue, and
    the store's writers' lock (:meth:`~roads.store.store.Store.writing`). Tried without
    blocking first; when the lock is taken, this blocks in ``flock`` on a helper thread and
    waits for that thread with a timeout. ``abandon`` undoes what the caller set up for the
    lock (lets a mutex go, closes the descriptor) when the caller does not get it: called
    once, by whichever thread finds the lock not the caller's, and after the lock is let go
    (a helper that gets it after its waiter gave up unlocks it first)."""
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    except BaseException:
        abandon()
        raise
    granted = threading.Lock()
    granted.acquire()
    guard = threading.Lock()
    state = {"given_up": False, "held": False}

    def lock() -> None:
        try:
            fcntl.flock(fd, operation)
        except OSError:  # (the descriptor was closed under it: nothing is held)
            with guard:
                if state["given_up"]:
                    abandon()
                    return
            granted.release()
            return
        with guard:
            if state["given_up"]:
                fcntl.flock(fd, fcntl.LOCK_UN)
                abandon()
                return
            state["held"] = True
        granted.release()

    threading.Thread(target=lock, name=f"waiting for {what}", daemon=True).start()
    if not granted.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
        with guard:
            if not state["held"]:
                state["given_up"] = True  # the helper abandons, not this thread
                raise busy()
    if not state["held"]:  # flock failed on the helper: an error, not a wait
        abandon()
        raise JournalBusy(f"could not lock {what}", RETRY_AFTER_SECONDS)
