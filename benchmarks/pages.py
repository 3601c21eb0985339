"""The history and audit pages over a record of 100,000 shoes (issue 17 targets).

Run: .venv/bin/python -m benchmarks.pages [--shoes 100000] [--coups 20000]
     [--corrections 100] [--requests 30] [--keep DIR]
Targets: ``/history`` first page p95 <= 1 s and ``/audit`` first page p95 <= 1 s.

The store: ``--shoes`` simulated shoes over 12 tables (what ``roads simulate`` writes), then
``--coups`` live coups entered through the live-table service on 10 tables (80 a shoe, each
shoe closed and sealed, as a table does; the last shoes stay open), then ``--corrections``
corrections requested by a dealer and decided by a supervisor (nine in ten approved, every
other one an amendment, the rest voids, spread over the sealed and the open shoes), so the
audit trail's first pages hold corrections whose words read the record. ``--keep DIR``
builds the store there once and reuses it on later runs.

A ``roads serve`` process serves the pages; each request is timed from sending it to the
last byte of the page (what a browser waits for before it can draw), ``--requests`` times
per page after one warm-up request, one request at a time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from roads.auth import Auth
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store
from roads.store.journal import GroupCommitter
from roads.tables import Actor, TableService
from tests.e2e.conftest import free_port

PASSWORD = "correct horse battery"
DEALER = Actor.user("dealer", "dealer")
SUPERVISOR = Actor.user("super", "supervisor")
LIVE_TABLES = 10
COUPS_PER_SHOE = 80
READY = "pages-benchmark.ready"


def build(root: Path, shoes: int, coups: int, corrections: int) -> None:
    """The record: simulated shoes, live tables, corrections (see the module's docstring)."""
    started = time.perf_counter()
    store = Store.create(root)
    write_simulation(Simulation(get_rules("standard-8"), shoes, seed=17, tables=12), store)
    print(f"  {shoes:,} simulated shoes: {time.perf_counter() - started:.0f} s", flush=True)
    auth = Auth(root, store.journal)
    for name, role in (("dealer", "dealer"), ("super", "supervisor"), ("auditor", "auditor")):
        auth.add_user(name, role, PASSWORD)
    committer = GroupCommitter(store.journal)
    service = TableService(store, committer=committer)
    per_table = coups // LIVE_TABLES
    shoes_of: dict[str, list[str]] = {}

    def deal(table: int) -> None:
        table_id = f"LIVE-{table + 1:02d}"
        outcomes = "BPBBPTPBPB"
        entered, shoe = 0, 0
        while entered < per_table:
            shoe += 1
            shoe_id = f"{table_id}-S{shoe:03d}"
            service.open_shoe(DEALER, table_id, shoe_id)
            shoes_of.setdefault(table_id, []).append(shoe_id)
            for n in range(min(COUPS_PER_SHOE, per_table - entered)):
                service.enter_coup(DEALER, table_id, CoupEntry(
                    outcome=outcomes[(n + table) % len(outcomes)], method="keypad"))
                entered += 1
            if entered < per_table:
                service.close_shoe(DEALER, table_id)

    started = time.perf_counter()
    with ThreadPoolExecutor(LIVE_TABLES) as pool:
        list(pool.map(deal, range(LIVE_TABLES)))
    print(f"  {coups:,} live coups: {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    for i in range(corrections):
        table_id = f"LIVE-{i % LIVE_TABLES + 1:02d}"
        shoe_list = shoes_of[table_id]
        shoe_id = shoe_list[(i // LIVE_TABLES) % len(shoe_list)]
        coup = 1 + (i * 7) % 40
        amended = CoupEntry(outcome="T", method="keypad") if i % 2 == 0 else None
        asked = service.request_correction(DEALER, table_id, shoe_id, coup, f"check {i}",
                                           amended)
        service.decide_correction(SUPERVISOR, asked.seq, i % 10 != 9, "checked on video")
    print(f"  {corrections} corrections: {time.perf_counter() - started:.0f} s", flush=True)
    committer.close()
    store.journal.close()
    (root / READY).write_text(f"{shoes} {coups} {corrections}\n")


def serve(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", "from roads.cli import main; main()", "serve", "--store",
         str(root), "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1):
                return process, url
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"roads serve did not start: {process.communicate()[1].decode()[-2000:]}")


def fetch(url: str, cookie: str) -> float:
    """Seconds from sending the request to the page's last byte."""
    request = urllib.request.Request(url, headers={"Cookie": f"roads_session={cookie}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as r:
        body = r.read()
        status = r.status
    took = time.perf_counter() - started
    if status != 200 or b"<table" not in body:
        raise RuntimeError(f"{url}: {status}, no listing in the page")
    return took


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


PAGES = (
    ("/history", "history, first page"),
    ("/history?page=1000", "history, page 1,000"),
    ("/history?table=SIM-03&state=closed", "history, one table, closed"),
    ("/history?from=2026-06-01&to=2026-06-30", "history, a month"),
    ("/audit", "audit, first page"),
    ("/audit?action=corrections", "audit, corrections"),
    ("/audit?table=LIVE-03&page=20", "audit, one table, page 20"),
    ("/audit?actor=super", "audit, one actor"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shoes", type=int, default=100_000)
    parser.add_argument("--coups", type=int, default=20_000)
    parser.add_argument("--corrections", type=int, default=100)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="build the store here once, then reuse it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp) / "store"
        if not (root / READY).exists():
            print(f"building the record in {root} ...", flush=True)
            build(root, args.shoes, args.coups, args.corrections)
        store = Store.open(root)
        cookie, _ = Auth(root, store.journal).login("auditor", PASSWORD)
        events = store.journal.head()[0]
        shoes = store.read.shoe_page()[1]
        store.journal.close()
        print(f"record: {shoes:,} shoes, {events:,} journal events "
              f"({(root / READY).read_text().split()} shoes, coups, corrections built)")
        process, url = serve(root)
        try:
            print(f"{'page':<30} {'p50':>8} {'p95':>8} {'max':>8}   (ms, {args.requests} "
                  "requests after one warm-up)")
            for path, label in PAGES:
                cold = fetch(url + path, cookie)
                times = [fetch(url + path, cookie) for _ in range(args.requests)]
                print(f"{label:<30} {1000 * statistics.median(times):8.0f} "
                      f"{1000 * p95(times):8.0f} {1000 * max(times):8.0f}   "
                      f"(first request {1000 * cold:.0f})", flush=True)
        finally:
            process.terminate()
            process.wait(timeout=15)


if __name__ == "__main__":
    main()
