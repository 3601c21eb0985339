"""A writer that takes the journal's writers' queue and never lets it go (a hung process)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
def hung_writer(journal: Path) -> Iterator[None]:
    """Hold ``journal``'s writers' queue from another process until the block ends (then the
    process is killed: the lock goes with it)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, f"{journal}{QUEUE_SUFFIX}"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        yield
    finally:
        proc.kill()
        proc.wait()
