"""A writer that takes the journal's writers' queue and never lets it go (a hung process),
or any other of the store's locks exclusively."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from roads.store import Event, Store
from roads.store.journal_queue import QUEUE_SUFFIX

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("holding", flush=True)
while True:
    time.sleep(60)
"""


@contextmanager
def holding(path: Path | str) -> Iterator[None]:
    """Hold ``path`` locked exclusively (``flock``) from another process until the block
    ends (then the process is killed: the lock goes with it)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        yield
    finally:
        proc.kill()
        proc.wait()


def hung_writer(journal: Path) -> AbstractContextManager[None]:
    """Hold ``journal``'s writers' queue from another process until the block ends."""
    return holding(f"{journal}{QUEUE_SUFFIX}")


@contextmanager
def hung_from_seal(store: Store) -> Iterator[None]:
    """The journal's writers' queue taken by a hung writer from the moment a seal of
    ``store`` begins (a ``close_shoe``'s close committed, its seal not) until the block
    ends: the seal's commit waits the journal's ``queue_wait`` and gives up."""
    with ExitStack() as held, pytest.MonkeyPatch.context() as patch:
        seal = store.seal
        hung: list[None] = []

        def seal_behind_a_hung_writer(*args: Any, **kwargs: Any) -> Event:
            if not hung:  # (one holder: a second would wait for the first for ever)
                hung.append(held.enter_context(hung_writer(store.journal.path)))
            return seal(*args, **kwargs)

        patch.setattr(store, "seal", seal_behind_a_hung_writer)
        yield


def returns(call: Callable[[], Any]) -> Any:
    """``call()``'s result or error, run on a thread: a call that hangs fails the test
    (after a minute) instead of hanging the suite."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert outcome, "the call never returned"
    return outcome[0]
