"""Live journal throughput: acknowledged (durable) coups per second with concurrent readers.

Run: .venv/bin/python -m benchmarks.journal
Target (issue 4): >= 2,000 acknowledged coups/s, synchronous commit, 10 concurrent readers.
Ten tables enter coups concurrently through the live-table service and one GroupCommitter
(each entry returns only after the COMMIT, synchronous=FULL, that holds it), four entry
points per table; every coup is checked by the live validator against its shoe; a table
closes and seals its shoe after 80 coups and opens the next, as a real table does; ten reader
processes keep reading the newest events of random tables every 10 ms, as screens polling
through other server workers do (tight-loop readers on this 2-core machine measure CPU
starvation, not the journal). Before the clock starts the service warms up as a server
worker does (the boards' kernels, and one seal for what sealing imports), so the figure is
the journal's, not first-use imports'.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from roads.ingest.entry import CoupEntry
from roads.store import Store
from roads.store.journal import GroupCommitter
from roads.tables import Actor, LiveError, TableService

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
        store = Store.create(Path(tmp))
        journal = store.journal
        committer = GroupCommitter(journal)
        service = TableService(store, committer=committer)
        dealer = Actor.user("dealer", "dealer")
        shoes = {t: 1 for t in range(TABLES)}
        _warm_up(service, dealer)
        for t in range(TABLES):
            service.open_shoe(dealer, f"T{t}", "S1")
            service.table_state(f"T{t}")
        locks = {t: threading.Lock() for t in range(TABLES)}
        stop = threading.Event()
        readers = [subprocess.Popen([sys.executable, "-c", READER, str(journal.path)],
                                    stdout=subprocess.PIPE, text=True)
                   for _ in range(READERS)]

        def entry_point(t: int) -> int:
            done = 0
            entry = CoupEntry(outcome="B", method="keypad")
            while not stop.is_set():
                try:
                    event, _ = service.enter_coup(dealer, f"T{t}", entry)
                except LiveError:  # the shoe is being changed by another entry point:
                    with locks[t]:  # wait for it, as a dealer would (not a busy retry loop)
                        continue
                done += 1
                if event.payload["coup"] >= 80:
                    with locks[t]:  # the first of the table's entry points there changes it
                        if event.shoe_id == f"S{shoes[t]}":
                            service.close_shoe(dealer, f"T{t}")
                            shoes[t] += 1
                            service.open_shoe(dealer, f"T{t}", f"S{shoes[t]}")
            return done

        time.sleep(1.0)  # let the readers start
        with ThreadPoolExecutor(TABLES * 4) as pool:
            start, cpu = time.perf_counter(), time.process_time()
            writer_cpu = _thread_cpu(committer)
            commits, carried = committer.commits, committer.actions
            writers = [pool.submit(entry_point, t) for t in range(TABLES) for _ in range(4)]
            time.sleep(SECONDS)
            stop.set()
            acknowledged = sum(w.result() for w in writers)
            elapsed = time.perf_counter() - start
            cpu, commits = time.process_time() - cpu, committer.commits - commits
            writer_cpu = _thread_cpu(committer) - writer_cpu
            carried = committer.actions - carried
        committer.close()
        reads = []
        for proc in readers:
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate()
            reads.append(float(out.split()[-1]))
        assert journal.verify().ok
        print(f"journal: {acknowledged / elapsed:,.0f} acknowledged coups/s "
              f"({acknowledged:,} coups from {TABLES} tables in {elapsed:.1f} s, "
              f"synchronous=FULL, group commit, {sum(shoes.values()) - TABLES} shoes sealed on "
              f"the way) with {READERS} concurrent reader processes doing "
              f"{sum(reads):,.0f} reads/s; chain verified")
        print(f"  {commits / elapsed:,.0f} shared commits/s (one fsync of the WAL each), "
              f"{carried / max(commits, 1):.1f} actions a commit; the service's process "
              f"used {cpu / elapsed:.2f} cores, {cpu / acknowledged * 1e6:,.0f} µs of CPU a coup "
              "(sealing included)")
        print(f"  of which the writer thread {writer_cpu / acknowledged * 1e6:,.0f} µs a coup "
              "(checks, events, SQLite, commits), the request threads and their seals the rest")
        single = TableService(store)
        single.open_shoe(dealer, "X0", "X1")
        start = time.perf_counter()
        for _ in range(80):
            single.enter_coup(dealer, "X0", CoupEntry(outcome="P", method="keypad"))
        print(f"one entry point, one commit per coup: {80 / (time.perf_counter() - start):,.0f}"
              " acknowledged coups/s")
        seals = []
        for n in range(5):
            single.open_shoe(dealer, "X9", f"Z{n}")
            for player, banker in _shoe(n):
                single.enter_coup(dealer, "X9", CoupEntry(player_cards=player,
                                                          banker_cards=banker, method="cards"))
            start = time.perf_counter()
            single.close_shoe(dealer, "X9")
            seals.append(time.perf_counter() - start)
        print(f"closing and sealing a live shoe (~80 coups, file write, journal event, signed "
              f"checkpoint): median {sorted(seals)[2] * 1e3:.0f} ms, max {max(seals) * 1e3:.0f} ms"
              " (target < 50 ms)")


def _thread_cpu(committer: GroupCommitter) -> float:
    """CPU seconds (user + system) the committer's writer thread has used (Linux /proc):
    whether the one serial thread or the request threads around it spend the CPU."""
    native = committer._thread.native_id
    fields = Path(f"/proc/self/task/{native}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _warm_up(service: TableService, dealer: Actor) -> None:
    """What a server worker loads before its first request (``dashboard.app.warm_up``): the
    boards' kernels and what a seal imports, so the figure is the journal's, not imports'."""
    service.open_shoe(dealer, "W", "W1")
    service.enter_coup(dealer, "W", CoupEntry(outcome="B", method="keypad"))
    service.table_state("W")
    service.close_shoe(dealer, "W")


def _shoe(seed: int) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    from roads.engine import deal_shoe
    from roads.rules import get_rules

    return list(deal_shoe(get_rules("standard-8"), seed).coups[:80])


if __name__ == "__main__":
    main()
