"""Live journal throughput: acknowledged (durable) coups per second with concurrent readers.

Run: .venv/bin/python -m benchmarks.journal [--workers N]
Target (issue 4): >= 2,000 acknowledged coups/s, synchronous commit, 10 concurrent readers
(issue 14 keeps it within 10 % of the pre-wave ~2,500/s: >= 2,250/s).

Ten tables enter coups concurrently through the live-table service, four entry points per
table; each entry returns only after the COMMIT, synchronous=FULL, that holds it; every coup
is checked by the live validator against its shoe; a table closes and seals its shoe after
80 coups and opens the next, as a real table does; ten reader processes keep reading the
newest events of random tables every 10 ms, as screens polling through other server workers
do (tight-loop readers on this 2-core machine measure CPU starvation, not the journal).

It runs twice, side by side on the same machine:

- **one process**: one service and its GroupCommitter, every entry point a thread of it;
- **as ``roads serve`` runs**: ``--workers N`` service processes over the one store (default
  ``dashboard.workers.default_workers()``, one per core, as the server forks them), each
  with its own GroupCommitter. The server's workers share one listening socket and the
  kernel hands each connection to any of them, so the entry points of one table are spread
  over the workers (entry point k of table t in worker (4t + k) mod N): each worker's kept
  open-shoe state follows the others' commits by the journal's head check. The worker
  ``t mod N`` closes and opens table t's shoes; an entry point that finds the shoe being
  changed by another worker (or full, the change not made yet) retries after 5 ms, as an
  API client given a 409 or 422 would.

Before the clock starts each process warms up as a server worker does (the boards' kernels,
and one seal for what sealing imports), so the figure is the journal's, not first-use
imports'.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from roads.errors import InputError
from roads.ingest.entry import CoupEntry
from roads.store import Store
from roads.store.journal import GroupCommitter
from roads.tables import Actor, TableService

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
ENTRY_POINTS = 4
READERS = 10
SECONDS = 5.0
SHOE = 80
DEALER = Actor.user("dealer", "dealer")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.journal")
    parser.add_argument("--workers", type=int, default=None,
                        help="service processes of the second run (default: roads serve's, "
                             "one per core)")
    parser.add_argument("--worker", nargs=3, metavar=("ROOT", "INDEX", "OF"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        root, index, of = args.worker
        _worker(Path(root), int(index), int(of))
        return
    if args.workers is None:
        from dashboard.workers import default_workers

        args.workers = default_workers()
    for processes in dict.fromkeys((1, args.workers)):
        _report(processes, _floor(processes))
    _single_and_seals()


def _floor(processes: int) -> dict[str, Any]:
    """One timed run: ``processes`` service processes over a fresh store, the readers."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        journal = Store.create(root).journal
        workers = [subprocess.Popen([sys.executable, "-m", "benchmarks.journal", "--worker",
                                     str(root), str(i), str(processes)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                   for i in range(processes)]
        for proc in workers:  # warmed up, shoes open
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        readers = [subprocess.Popen([sys.executable, "-c", READER, str(journal.path)],
                                    stdout=subprocess.PIPE, text=True)
                   for _ in range(READERS)]
        time.sleep(1.0)  # let the readers start
        for proc in workers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [json.loads(proc.communicate()[0]) for proc in workers]
        reads = []
        for reader in readers:
            reader.send_signal(signal.SIGINT)
            reads.append(float(reader.communicate()[0].split()[-1]))
        assert journal.verify().ok
        total = {k: sum(r[k] for r in results) for k in results[0] if k != "elapsed"}
        return {**total, "elapsed": max(r["elapsed"] for r in results), "reads": sum(reads),
                "cores": [r["cpu"] / r["elapsed"] for r in results]}


def _report(processes: int, r: dict[str, Any]) -> None:
    elapsed, coups = r["elapsed"], r["acknowledged"]
    how = "one service process" if processes == 1 else (
        f"{processes} service processes (roads serve --workers {processes})")
    print(f"journal, {how}: {coups / elapsed:,.0f} acknowledged coups/s "
          f"({coups:,} coups from {TABLES} tables in {elapsed:.1f} s, synchronous=FULL, "
          f"group commit, {r['sealed']} shoes sealed on the way) with {READERS} concurrent "
          f"reader processes doing {r['reads']:,.0f} reads/s; chain verified")
    print(f"  {r['commits'] / elapsed:,.0f} shared commits/s (one fsync of the WAL each), "
          f"{r['actions'] / max(r['commits'], 1):.1f} actions a commit; the service "
          f"process{'es' if processes > 1 else ''} used "
          f"{' + '.join(f'{c:.2f}' for c in r['cores'])} cores, "
          f"{r['cpu'] / coups * 1e6:,.0f} µs of CPU a coup (sealing included)")
    print(f"  of which the writer thread{'s' if processes > 1 else ''} "
          f"{r['writer_cpu'] / coups * 1e6:,.0f} µs a coup (checks, events, SQLite, commits), "
          "the request threads and their seals the rest")


def _worker(root: Path, index: int, of: int) -> None:
    """One service process of a run: its share of the entry points; prints what it did."""
    store = Store.open(root)
    committer = GroupCommitter(store.journal)
    service = TableService(store, committer=committer)
    _warm_up(service, f"W{index}")
    mine = [t for t in range(TABLES) if t % of == index]  # the tables whose shoes it changes
    shoes = {t: 1 for t in mine}
    for t in mine:
        service.open_shoe(DEALER, f"T{t}", "S1")
    for t in range(TABLES):
        service.table_state(f"T{t}")
    locks = {t: threading.Lock() for t in range(TABLES)}
    stop = threading.Event()

    def entry_point(t: int) -> int:
        done = 0
        entry = CoupEntry(outcome="B", method="keypad")
        while not stop.is_set():
            try:
                event, _ = service.enter_coup(DEALER, f"T{t}", entry)
            except InputError:  # the shoe is being changed (or full, its change late):
                if t not in shoes:  # wait for it, as a dealer would; changed by another
                    time.sleep(0.005)  # worker: retry, as a client given a 409 or 422
                with locks[t]:  # (by this one: not a busy retry loop)
                    continue
            done += 1
            if event.payload["coup"] >= SHOE and t in shoes:
                with locks[t]:  # the first of the table's entry points there changes it
                    if event.shoe_id == f"S{shoes[t]}":
                        service.close_shoe(DEALER, f"T{t}")
                        shoes[t] += 1
                        service.open_shoe(DEALER, f"T{t}", f"S{shoes[t]}")
        return done

    points = [t for t in range(TABLES) for k in range(ENTRY_POINTS)
              if (ENTRY_POINTS * t + k) % of == index]
    print("ready", flush=True)
    sys.stdin.readline()
    with ThreadPoolExecutor(len(points)) as pool:
        start, cpu = time.perf_counter(), time.process_time()
        writer_cpu = _thread_cpu(committer)
        commits, carried = committer.commits, committer.actions
        writers = [pool.submit(entry_point, t) for t in points]
        time.sleep(SECONDS)
        stop.set()
        acknowledged = sum(w.result() for w in writers)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        writer_cpu = _thread_cpu(committer) - writer_cpu
    committer.close()
    print(json.dumps({"acknowledged": acknowledged, "elapsed": elapsed, "cpu": cpu,
                      "writer_cpu": writer_cpu, "commits": committer.commits - commits,
                      "actions": committer.actions - carried,
                      "sealed": sum(shoes.values()) - len(shoes)}))


def _single_and_seals() -> None:
    """One entry point committing each coup alone; closing and sealing a card shoe."""
    with tempfile.TemporaryDirectory() as tmp:
        single = TableService(Store.create(Path(tmp)))
        _warm_up(single, "W")
        single.open_shoe(DEALER, "X0", "X1")
        start = time.perf_counter()
        for _ in range(80):
            single.enter_coup(DEALER, "X0", CoupEntry(outcome="P", method="keypad"))
        print(f"one entry point, one commit per coup: {80 / (time.perf_counter() - start):,.0f}"
              " acknowledged coups/s")
        seals, cpus = [], []
        for n in range(5):
            single.open_shoe(DEALER, "X9", f"Z{n}")
            for player, banker in _shoe(n):
                single.enter_coup(DEALER, "X9", CoupEntry(player_cards=player,
                                                          banker_cards=banker, method="cards"))
            start, cpu = time.perf_counter(), _process_cpu()
            single.close_shoe(DEALER, "X9")
            seals.append(time.perf_counter() - start)
            cpus.append(_process_cpu() - cpu)
        print(f"closing and sealing a live shoe (~80 coups, file write, journal event, signed "
              f"checkpoint): median {sorted(seals)[2] * 1e3:.0f} ms, max {max(seals) * 1e3:.0f} ms"
              f" (target < 50 ms); CPU median {sorted(cpus)[2] * 1e3:.1f} ms (every thread)")


def _process_cpu() -> float:
    """CPU seconds (user + system) of every thread of this process (a seal's part writers
    run on threads of their own)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _thread_cpu(committer: GroupCommitter) -> float:
    """CPU seconds (user + system) the committer's writer thread has used (Linux /proc):
    whether the one serial thread or the request threads around it spend the CPU."""
    native = committer._thread.native_id
    fields = Path(f"/proc/self/task/{native}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _warm_up(service: TableService, table: str) -> None:
    """What a server worker loads before its first request (``dashboard.app.warm_up``): the
    boards' kernels and what a seal imports, so the figure is the journal's, not imports'."""
    service.open_shoe(DEALER, table, "W1")
    service.enter_coup(DEALER, table, CoupEntry(outcome="B", method="keypad"))
    service.table_state(table)
    service.close_shoe(DEALER, table)


def _shoe(seed: int) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    from roads.engine import deal_shoe
    from roads.rules import get_rules

    return list(deal_shoe(get_rules("standard-8"), seed).coups[:80])


if __name__ == "__main__":
    main()
