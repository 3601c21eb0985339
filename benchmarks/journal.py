"""Live journal throughput: acknowledged (durable) coups per second with concurrent readers.

Run: .venv/bin/python -m benchmarks.journal
Target (issue 4): >= 2,000 acknowledged coups/s, synchronous commit, 10 concurrent readers.
Ten tables enter coups concurrently through one GroupCommitter (each future resolves only
after the COMMIT, synchronous=FULL, that holds it); ten reader processes keep reading the
newest events of random tables every 10 ms, as screens polling through other server workers
do (tight-loop readers on this 2-core machine measure CPU starvation, not the journal).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from roads.store.journal import Event, GroupCommitter, Journal
from roads.store.live import CoupEntry, LiveTables, enter_coup

READER = """
import random, sys, time
from pathlib import Path
from roads.store.journal import Journal
journal = Journal(Path(sys.argv[1]))
reads, start = 0, time.perf_counter()
try:
    while True:
        journal.events(f"T{random.randrange(10)}", since=max(0, journal.head()[0] - 20))
        reads += 1
        time.sleep(0.01)  # a screen polling 100 times a second (10x a 100 ms live screen)
except KeyboardInterrupt:
    print(reads / (time.perf_counter() - start))
"""
TABLES = 10
READERS = 10
SECONDS = 5.0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "journal.sqlite")
        live = LiveTables(journal)
        for t in range(TABLES):
            live.open_shoe(f"T{t}", "S1", "standard-8", "dealer")
        committer = GroupCommitter(journal)
        stop = threading.Event()
        readers = [subprocess.Popen([sys.executable, "-c", READER, str(journal.path)],
                                    stdout=subprocess.PIPE, text=True)
                   for _ in range(READERS)]

        def table(t: int) -> int:
            done = 0
            entry = CoupEntry(outcome="B")
            while not stop.is_set():
                pending: list[Future[Event]] = [
                    committer.submit(enter_coup(f"T{t}", entry, "dealer")) for _ in range(4)]
                for f in pending:
                    f.result()
                done += len(pending)
            return done

        time.sleep(1.0)  # let the readers start
        with ThreadPoolExecutor(TABLES) as pool:
            start = time.perf_counter()
            writers = [pool.submit(table, t) for t in range(TABLES)]
            time.sleep(SECONDS)
            stop.set()
            acknowledged = sum(w.result() for w in writers)
            elapsed = time.perf_counter() - start
        committer.close()
        reads = []
        for proc in readers:
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate()
            reads.append(float(out.split()[-1]))
        assert journal.verify().ok
        print(f"journal: {acknowledged / elapsed:,.0f} acknowledged coups/s "
              f"({acknowledged:,} coups from {TABLES} tables in {elapsed:.1f} s, "
              f"synchronous=FULL, group commit) with {READERS} concurrent reader processes "
              f"doing {sum(reads):,.0f} reads/s; chain verified")
        single = LiveTables(journal)
        start = time.perf_counter()
        for _ in range(300):
            single.enter_coup("T0", CoupEntry(outcome="P"), "dealer")
        print(f"one entry point, one commit per coup: {300 / (time.perf_counter() - start):,.0f}"
              " acknowledged coups/s")


if __name__ == "__main__":
    main()
