"""A whole floor against one server: accepted coup → table screen over WebSocket, the
server's CPU and memory, and ``roads serve --demo``'s first page (issue 18, part 4).

Run: .venv/bin/python -m benchmarks.floor   # 100 tables, 1 coup/s each, 500 screens
     .venv/bin/python -m benchmarks.floor --tables 500 --pace 25 --screens 1000 --viewers 50
     .venv/bin/python -m benchmarks.floor --seconds 1800 --sample 60   # memory over 30 minutes
     .venv/bin/python -m benchmarks.floor --first-page 5
     .venv/bin/python -m benchmarks.floor --table-page 5   # CPU of a viewer's refreshed poll
Targets: 100 tables at a coup per second with 500 screens: p95 accepted coup → screen
<= 300 ms; 500 tables at a coup per 25 s with 1,000 screens and 50 dashboard viewers:
p95 <= 100 ms; server memory flat over 30 minutes; ``roads serve --demo`` first page <= 2 s.

One ``roads serve`` (``--workers``, default one per core) over a fresh store whose tables
each have a shoe open with 0–60 card-level coups already dealt. Three other processes:
the dealers post each table's next card-level coup through the HTTP API (its own key) every
``--pace`` seconds on average (uniform 0.5–1.5×), closing and opening shoes as they run out;
a coup is accepted when the API answers (the commit is durable by then). The screens are
asyncio WebSocket clients (the ``websockets`` library, permessage-deflate as browsers
negotiate it) spread evenly over the tables; each records when each state or update
arrives and checks every update follows the state it holds. A coup's latency, per screen
of its table, is the first message at or after its sequence number minus its acceptance
(same machine, same clock); the first ``--warmup`` seconds are left out. The dashboard
viewers poll as the Dash pages do: ``--viewer-page tables`` (the default) is a table page
(``/tables/<id>``, every 1.5 s, one table each), ``overview`` the every-table overview
(every 1 s). Every run is bounded: ``--seconds`` of dealing, then at most 30 s to drain.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.procs import cpu_seconds, memory_mb

ROADS = str(Path(sys.executable).with_name("roads"))


# -- the server's processes -----------------------------------------------------------------
def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_http(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"no answer from {url}")


def _server_env(code: str | None) -> dict[str, str]:
    """The server's environment: ``code`` serves another checkout's code (an A/B run side
    by side with this one, same clients, same load), with the kernels compiled in its
    ``.cache/roads`` when it has one (the kernel cache is keyed by source path)."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (code, env.get("PYTHONPATH"))))
        if (cache := Path(code) / ".cache" / "roads").is_dir():  # its own compiled kernels
            env["ROADS_CACHE_DIR"] = str(cache)
    return env


# -- the floor before the run ---------------------------------------------------------------
def _floor(root: Path, tables: list[str], seed: int) -> dict[str, Any]:
    """A store whose tables each have a shoe open with 0–60 card-level coups dealt; their
    API keys and where each dealer goes on."""
    from roads.auth import Auth
    from roads.engine import deal_shoe
    from roads.ingest.sources import from_dealer
    from roads.rules import get_rules
    from roads.store import Store
    from roads.store.journal import GroupCommitter
    from roads.tables import DEMO_DEALER, TableService

    store = Store.create(root)
    auth = Auth(root, store.journal)
    keys = {t: auth.issue_key(t) for t in tables}
    service = TableService(store, committer=GroupCommitter(store.journal))
    rules, rng = get_rules("standard-8"), random.Random(seed)
    plan: dict[str, dict[str, Any]] = {}
    for t in tables:
        shoe_seed = rng.getrandbits(63)
        shoe = deal_shoe(rules, shoe_seed)
        plan[t] = {"key": keys[t], "seed": shoe_seed, "dealt": rng.randint(0, min(60, len(
            shoe.coups) - 1)), "burn": list(shoe.burn_cards)}

    def deal(t: str) -> None:
        p = plan[t]
        shoe = deal_shoe(rules, p["seed"])
        service.open_shoe(DEMO_DEALER, t, f"{t}-0", burn_cards=p["burn"])
        for player, banker in shoe.coups[:p["dealt"]]:
            service.enter_coup(DEMO_DEALER, t, from_dealer(player, banker))

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(deal, tables))
    store.journal.close()
    return plan


# -- dealers --------------------------------------------------------------------------------
def dealers(base: str, plan: dict[str, Any], pace: float, start: float, seconds: float,
            out: str) -> None:
    """Every table's dealer, posting through the API; writes (table, seq, accepted ms)."""
    import httpx

    from roads.engine import deal_shoe
    from roads.rules import get_rules

    rules = get_rules("standard-8")
    accepted: list[tuple[str, int, float]] = []
    posted: list[float] = []
    errors: Counter[str] = Counter()

    # Every table's shoe dealt before the start (not inside the event loop, where the
    # engine's first load and 100 shoes held back the first tables' first coups).
    first = {t: deal_shoe(rules, p["seed"]) for t, p in plan.items()}

    async def table(client: httpx.AsyncClient, t: str, p: dict[str, Any]) -> None:
        rng = random.Random(p["seed"])
        head = {"Authorization": f"Bearer {p['key']}"}
        shoe, coup, number = first[t], p["dealt"], 0
        await asyncio.sleep(max(0.0, start - time.time()) + rng.uniform(0, pace))
        while time.time() < start + seconds:
            if coup >= len(shoe.coups):
                number += 1
                shoe, coup = deal_shoe(rules, rng.getrandbits(63)), 0
                await client.post(f"/api/tables/{t}/shoes/close", json={}, headers=head)
                await client.post(f"/api/tables/{t}/shoes", headers=head, json={
                    "shoe_id": f"{t}-{number}", "burn_cards": list(shoe.burn_cards)})
            await asyncio.sleep(rng.uniform(0.5, 1.5) * pace)
            player, banker = shoe.coups[coup]
            began = time.time()
            try:
                r = await client.post(f"/api/tables/{t}/coups", headers=head, json={
                    "player_cards": list(player), "banker_cards": list(banker)})
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] += 1
                continue
            if r.status_code in (200, 201):
                now = time.time()
                accepted.append((t, int(r.json()["seq"]), now * 1000))
                posted.append(now - began)
                coup += 1
            else:
                errors[str(r.status_code)] += 1

    async def dealer(t: str, p: dict[str, Any]) -> None:
        # One connection per table, as each table's shoe or terminal has its own: a shared
        # pool of 100+ connections costs httpcore a scan of the pool per request, and the
        # dealers' process then saturates its core before the server does.
        # verify=False: plain HTTP, and the default loads the CA bundle (~0.2 s a client).
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60,
                                     verify=False) as client:
            await table(client, t, p)

    async def run() -> None:
        await asyncio.gather(*(dealer(t, p) for t, p in plan.items()))

    asyncio.run(run())
    Path(out).write_text(json.dumps({"accepted": accepted, "posted": posted,
                                     "errors": errors}))


# -- screens --------------------------------------------------------------------------------
def screens(base: str, assigned: list[str], ready: str, end: float, out: str) -> None:
    """WebSocket screens; writes per screen (table, messages: (seq, received ms, sent ms,
    type, bytes, seen ms, drawn ms)) and how many updates did not follow the state shown."""
    import websockets

    records: list[dict[str, Any]] = []
    url = base.replace("http://", "ws://")

    async def screen(i: int, t: str, opened: asyncio.Event) -> None:
        got: list[tuple[int, float, float, str, int, float, float]] = []
        record: dict[str, Any] = {"table": t, "messages": got, "broken": 0}
        records.append(record)
        shown = -1
        async with websockets.connect(f"{url}/ws/tables/{t}", max_size=None,
                                      open_timeout=60, ping_interval=None) as ws:
            first = True
            while time.time() < end:
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=max(0.1, end - time.time()))
                except TimeoutError:
                    break
                now = time.time() * 1000
                m = json.loads(raw)
                if m["type"] == "update" and m["base"] != shown:
                    record["broken"] += 1
                if m["type"] in ("state", "update"):
                    shown = m["seq"]
                    got.append((m["seq"], now, m["sent"], m["type"], len(raw),
                                m.get("seen", m["sent"]), m.get("drawn", m["sent"])))
                    if first:
                        first = False
                        opened.set()

    async def run() -> None:
        tasks, waits = [], []
        for i, t in enumerate(assigned):
            opened = asyncio.Event()
            tasks.append(asyncio.create_task(screen(i, t, opened)))
            waits.append(opened)
            if i % 50 == 49:  # open the screens in steps, as a floor powers up
                await asyncio.gather(*(w.wait() for w in waits))
        await asyncio.gather(*(w.wait() for w in waits))
        Path(ready).write_text("ready")
        await asyncio.gather(*tasks)

    asyncio.run(run())
    Path(out).write_text(json.dumps(records))


# -- dashboard viewers ----------------------------------------------------------------------
def _callback(page: str, table: str, n: int, seen: Any) -> dict[str, Any]:
    if page == "overview":
        return {"output": "..overview.children...overview-seq.data..",
                "outputs": [{"id": "overview", "property": "children"},
                            {"id": "overview-seq", "property": "data"}],
                "inputs": [{"id": "overview-tick", "property": "n_intervals", "value": n}],
                "state": [{"id": "overview-seq", "property": "data", "value": seen}],
                "changedPropIds": ["overview-tick.n_intervals"]}
    return {"output": "..table-body.children...table-seq.data..",
            "outputs": [{"id": "table-body", "property": "children"},
                        {"id": "table-seq", "property": "data"}],
            "inputs": [{"id": "table-tick", "property": "n_intervals", "value": n}],
            "state": [{"id": "table-id", "property": "data", "value": table},
                      {"id": "table-seq", "property": "data", "value": seen}],
            "changedPropIds": ["table-tick.n_intervals"]}


def viewers(base: str, views: list[tuple[str, str]], start: float, end: float,
            out: str) -> None:
    """Dash pages polling as a browser does; writes (seconds, bytes, refreshed) per poll."""
    import httpx

    polls: list[tuple[float, int, bool]] = []
    failed: list[float] = []

    async def viewer(client: httpx.AsyncClient, page: str, table: str) -> None:
        every = 1.0 if page == "overview" else 1.5
        seen, n = None, 0
        await asyncio.sleep(max(0.0, start - time.time()) + random.uniform(0, every))
        await client.get("/" if page == "overview" else f"/tables/{table}")
        while time.time() < end:
            n += 1
            began = time.time()
            try:
                r = await client.post("/_dash-update-component",
                                      json=_callback(page, table, n, seen))
            except httpx.TransportError:
                # A kept-alive connection the server closed as it was reused (a browser
                # sends the poll again): counted, and polled again at the next tick.
                failed.append(time.time() - began)
                await asyncio.sleep(every)
                continue
            took = time.time() - began
            body = r.json() if r.status_code == 200 else {}
            # Dash answers a poll that changed nothing with an empty "response" (it leaves
            # out the outputs left unchanged), not with no body: only a filled one refreshed.
            refreshed = bool(body.get("response"))
            if refreshed:
                seen = body["response"].get("overview-seq" if page == "overview"
                                            else "table-seq", {}).get("data", seen)
            polls.append((took, len(r.content), refreshed))
            await asyncio.sleep(max(0.0, every - took))

    async def run() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            await asyncio.gather(*(viewer(client, p, t) for p, t in views))

    asyncio.run(run())
    Path(out).write_text(json.dumps({"polls": polls, "failed": len(failed)}))


# -- one run --------------------------------------------------------------------------------
def _q(values: list[float], p: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100)[p - 1]


#: The hops of a coup's way to a screen, from the message that first showed it.
HOPS = ("accepted -> seen by the watcher", "seen -> drawn", "drawn -> sent", "sent -> received")


def latencies(accepted: list[list[Any]], records: list[dict[str, Any]], counted_from: float
              ) -> tuple[list[float], list[float], int, dict[str, list[float]]]:
    """Per (coup, screen of its table): received − accepted and sent − accepted (ms); how
    many such pairs never got a state at or after the coup; and each pair's time in each of
    :data:`HOPS` (the first may be negative: the other worker's watcher can see a commit
    before the dealer reads its answer)."""
    by_table: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for t, seq, at in accepted:
        if at >= counted_from:
            by_table[t].append((seq, at))
    total, server, missing = [], [], 0
    hops: dict[str, list[float]] = {hop: [] for hop in HOPS}
    for r in records:
        coups = sorted(by_table.get(r["table"], ()))
        messages = r["messages"]  # in sequence order
        i = 0
        for seq, at in coups:
            while i < len(messages) and messages[i][0] < seq:
                i += 1
            if i == len(messages):
                missing += 1
                continue
            _, received, sent, _, _, seen, drawn = messages[i]
            total.append(max(0.0, received - at))
            server.append(max(0.0, sent - at))
            for hop, ms in zip(HOPS, (seen - at, drawn - seen, sent - drawn, received - sent),
                               strict=True):
                hops[hop].append(ms)
    return total, server, missing, hops


def run(args: argparse.Namespace, round_no: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="roads-floor-"))
    root = work / "store"
    tables = [f"T{i:03d}" for i in range(1, args.tables + 1)]
    began = time.monotonic()
    plan = _floor(root, tables, 1000 + round_no)
    print(f"  floor of {len(tables)} tables ready in {time.monotonic() - began:.0f} s",
          flush=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([ROADS, "serve", "--store", str(root), "--port", str(port),
                               *(["--workers", str(args.workers)] if args.workers else [])],
                              stdout=subprocess.DEVNULL, env=_server_env(args.code))
    spawn = multiprocessing.get_context("spawn")
    clients_started: list[Any] = []  # ended with the server when the run stops early
    try:
        _wait_http(f"{base}/health", time.monotonic() + 120)
        assigned = [tables[i % len(tables)] for i in range(args.screens)]
        ready = work / "ready"
        settle = 30 + args.screens / 20  # time allowed to open every screen
        end = time.time() + settle + args.seconds + 3
        screen_proc = spawn.Process(target=screens, args=(base, assigned, str(ready), end,
                                                          str(work / "screens.json")))
        screen_proc.start()
        clients_started.append(screen_proc)
        deadline = time.monotonic() + settle
        while not ready.exists():
            if time.monotonic() > deadline or not screen_proc.is_alive():
                raise SystemExit("the screens did not open in time")
            time.sleep(0.2)
        start = time.time() + 5  # the dealers' process starts and deals its first shoes
        dealing_end = start + args.seconds
        procs = [spawn.Process(target=dealers, args=(base, plan, args.pace, start, args.seconds,
                                                     str(work / "dealers.json")))]
        views = [("overview" if args.viewer_page == "overview" else "tables",
                  tables[(i * 7) % len(tables)]) for i in range(args.viewers)]
        if views:
            procs.append(spawn.Process(target=viewers, args=(base, views, start, dealing_end,
                                                            str(work / "viewers.json"))))
        for p in procs:
            p.start()
            clients_started.append(p)
        cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
        clients = {"dealers": procs[0], "screens": screen_proc,
                   **({"viewers": procs[1]} if views else {})}
        client_cpu = {name: [cpu_seconds(p.pid or 0)] * 2 for name, p in clients.items()}
        samples = [(0, *memory_mb(server.pid))]
        while any(p.is_alive() for p in procs):
            time.sleep(min(args.sample, 1.0))
            for name, p in clients.items():  # the last reading before the process ends
                if p.is_alive():
                    client_cpu[name][1] = cpu_seconds(p.pid or 0)
            at = round(time.monotonic() - t0)
            if at - samples[-1][0] >= args.sample:
                samples.append((at, *memory_mb(server.pid)))
        cpu = (cpu_seconds(server.pid) - cpu0) / (time.monotonic() - t0)
        client_cores = {name: (b - a) / (time.monotonic() - t0)
                        for name, (a, b) in client_cpu.items()}
        samples.append((round(time.monotonic() - t0), *memory_mb(server.pid)))
        screen_proc.join(timeout=60)
    finally:
        for p in clients_started:
            if p.is_alive():
                p.terminate()
        server.terminate()
        server.wait(timeout=30)
    dealt = json.loads((work / "dealers.json").read_text())
    records = json.loads((work / "screens.json").read_text())
    viewed = json.loads((work / "viewers.json").read_text()) if args.viewers else {}
    polls = viewed.get("polls", [])
    total, server_part, missing, hops = latencies(dealt["accepted"], records,
                                                  (start + args.warmup) * 1000)
    kinds = Counter(m[3] for r in records for m in r["messages"])
    update_bytes = [m[4] for r in records for m in r["messages"] if m[3] == "update"]
    state_bytes = [m[4] for r in records for m in r["messages"] if m[3] == "state"]
    return {"coups": len(dealt["accepted"]), "errors": dealt["errors"],
            "post_p50": _q(dealt["posted"], 50) * 1000, "post_p95": _q(dealt["posted"], 95) * 1000,
            "pairs": len(total), "missing": missing,
            "p50": _q(total, 50), "p95": _q(total, 95), "p99": _q(total, 99),
            "max": max(total, default=float("nan")),
            "server_p50": _q(server_part, 50), "server_p95": _q(server_part, 95),
            "hops": {hop: (_q(ms, 50), _q(ms, 95), _q(ms, 99)) for hop, ms in hops.items()},
            "kinds": dict(kinds), "broken": sum(r["broken"] for r in records),
            "update_bytes": statistics.median(update_bytes) if update_bytes else 0,
            "state_bytes": statistics.median(state_bytes) if state_bytes else 0,
            "cpu": cpu, "client_cpu": client_cores, "memory": samples,
            "viewer_polls": len(polls), "viewer_failed": viewed.get("failed", 0),
            "viewer_p50": _q([p[0] for p in polls], 50) * 1000 if polls else None,
            "viewer_p95": _q([p[0] for p in polls], 95) * 1000 if polls else None,
            "viewer_refreshes": sum(1 for p in polls if p[2])}


#: Memory's first minutes are left out of its slope: the workers fill what they keep for
#: the run (the tables' read models, SQLite's caches up to their limit) as screens open.
SETTLED_SECONDS = 300


def memory_slope(samples: list[tuple[int, float, float]], column: int,
                 settled: float = SETTLED_SECONDS) -> float | None:
    """Growth of ``column`` of the samples (1: RSS summed, 2: PSS) in MB per 10 minutes
    after the first ``settled`` seconds (least squares over the samples from then on), so
    "flat" is a number; None below three samples. (PSS also moves as other processes map
    the same libraries: on a shared machine RSS is the steadier of the two.)"""
    later = [(s[0], s[column]) for s in samples if s[0] >= settled]
    if len(later) < 3:
        return None
    slope, _ = statistics.linear_regression([t for t, _ in later], [mb for _, mb in later])
    return slope * 600


def report(args: argparse.Namespace, r: dict[str, Any]) -> None:
    print(f"  coups accepted: {r['coups']} (API answer p50 {r['post_p50']:.0f} ms, p95 "
          f"{r['post_p95']:.0f} ms; refused/failed: {dict(r['errors']) or 'none'})")
    print(f"  (coup, screen) pairs: {r['pairs']}  never reached: {r['missing']}  "
          f"updates not following the screen's state: {r['broken']}")
    print(f"  accepted coup -> screen: p50 {r['p50']:.0f} ms  p95 {r['p95']:.0f} ms  "
          f"p99 {r['p99']:.0f} ms  max {r['max']:.0f} ms")
    print(f"    of which accepted -> sent by the server: p50 {r['server_p50']:.0f} ms  "
          f"p95 {r['server_p95']:.0f} ms")
    print("    by hop (p50 / p95 / p99 ms): " + "; ".join(
        f"{hop} {p50:.0f} / {p95:.0f} / {p99:.0f}" for hop, (p50, p95, p99) in r["hops"].items()))
    print(f"  messages: {r['kinds']}; median update {r['update_bytes'] / 1024:.1f} KB, "
          f"median whole state {r['state_bytes'] / 1024:.1f} KB (JSON, before compression)")
    print(f"  server CPU: {r['cpu']:.2f} cores on average; the benchmark's own processes: "
          + ", ".join(f"{name} {cores:.2f}" for name, cores in r["client_cpu"].items())
          + " (a client near 1.00 cannot keep pace: its latency is not the server's)")
    if r["viewer_polls"]:
        print(f"  dashboard viewers ({args.viewer_page} page): {r['viewer_polls']} polls, "
              f"{r['viewer_refreshes']} refreshed, {r['viewer_failed']} failed (connection "
              f"closed); answer p50 {r['viewer_p50']:.0f} ms  "
              f"p95 {r['viewer_p95']:.0f} ms")
    print("  server memory (s, RSS MB summed, PSS MB): "
          + ", ".join(f"({s}, {rss:.0f}, {pss:.0f})" for s, rss, pss in r["memory"]))
    rss, pss = (memory_slope(r["memory"], column) for column in (1, 2))
    print(f"  server memory after the first {SETTLED_SECONDS // 60} minutes: "
          + (f"RSS summed {rss:+.1f}, PSS {pss:+.1f} MB per 10 minutes"
             if rss is not None and pss is not None else
             "too few samples for a slope (run longer or sample more often)"))


# -- first page -----------------------------------------------------------------------------
def first_page(rounds: int, workers: int | None, code: str | None = None) -> None:
    """``roads serve --demo`` in a fresh store: process start → first answer of ``/``,
    of ``/table/T01`` and the first state on T01's socket."""
    import websockets

    async def first_state(url: str, deadline: float) -> None:
        while True:
            try:
                async with websockets.connect(url) as ws:
                    while json.loads(await ws.recv())["type"] != "state":
                        pass
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.02)

    marks: list[tuple[float, float, float, float]] = []
    for _ in range(rounds):
        work = Path(tempfile.mkdtemp(prefix="roads-first-"))
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        began = time.monotonic()
        server = subprocess.Popen([ROADS, "serve", "--demo", "--store", str(work / "demo"),
                                   "--port", str(port),
                                   *(["--workers", str(workers)] if workers else [])],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=_server_env(code))
        try:
            deadline = time.monotonic() + 60
            _wait_http(f"{base}/", deadline)
            home = time.monotonic() - began
            _wait_http(f"{base}/table/T01", deadline)
            table = time.monotonic() - began
            asyncio.run(first_state(f"ws://127.0.0.1:{port}/ws/tables/T01", deadline))
            state = time.monotonic() - began
            marks.append((home, table, state, cpu_seconds(server.pid)))
        finally:
            server.terminate()
            server.wait(timeout=30)
        print(f"  / {home:.2f} s   /table/T01 {table:.2f} s   first state {state:.2f} s   "
              f"(server CPU by then {marks[-1][3]:.2f} s)", flush=True)
    med = [statistics.median(m[i] for m in marks) for i in range(4)]
    print(f"median of {rounds}: / {med[0]:.2f} s, /table/T01 {med[1]:.2f} s, first state "
          f"{med[2]:.2f} s (target <= 2 s); server CPU {med[3]:.2f} s")


def table_page(rounds: int) -> None:
    """CPU of one refreshed table-page poll in this process (what a dashboard viewer costs
    the server each time its table changes): a 40-coup card-level shoe, the page's body and
    Dash's JSON of it. Run with ``PYTHONPATH=DIR`` to measure another checkout's code."""
    from dash._utils import to_json

    from dashboard.app import create_app
    from dashboard.pages import table_refresh
    from roads.engine import deal_shoe
    from roads.ingest.sources import from_dealer
    from roads.rules import get_rules
    from roads.tables import DEMO_DEALER

    _, ctx = create_app(Path(tempfile.mkdtemp(prefix="roads-page-")) / "store")
    shoe = deal_shoe(get_rules("standard-8"), 5)
    ctx.service.open_shoe(DEMO_DEALER, "T1", "S1", burn_cards=list(shoe.burn_cards))
    for player, banker in shoe.coups[:40]:
        ctx.service.enter_coup(DEMO_DEALER, "T1", from_dealer(player, banker))

    def poll() -> int:
        return len(to_json(table_refresh(ctx, "T1", None)[0]))  # type: ignore[no-untyped-call]

    size = poll()
    runs = []
    for _ in range(rounds):
        began = time.process_time()
        for _ in range(5):
            poll()
        runs.append((time.process_time() - began) / 5 * 1000)
    print(f"table page ({__import__('dashboard').__file__}): CPU per refreshed poll median "
          f"{statistics.median(runs):.0f} ms (runs of 5: "
          f"{', '.join(f'{ms:.0f}' for ms in runs)}); answer {size:,} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--pace", type=float, default=1.0,
                        help="average seconds between coups at each table")
    parser.add_argument("--screens", type=int, default=500)
    parser.add_argument("--viewers", type=int, default=0)
    parser.add_argument("--viewer-page", choices=("tables", "overview"), default="tables")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--sample", type=float, default=15.0,
                        help="seconds between memory samples")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--first-page", type=int, default=0, metavar="ROUNDS")
    parser.add_argument("--table-page", type=int, default=0, metavar="ROUNDS",
                        help="CPU of a refreshed table-page poll, in this process")
    parser.add_argument("--code", metavar="DIR",
                        help="serve the code of this checkout instead (A/B side by side)")
    args = parser.parse_args()
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"machine: {multiprocessing.cpu_count()} cores, load average {' '.join(load)}")
    if args.table_page:
        table_page(args.table_page)
        return
    if args.first_page:
        first_page(args.first_page, args.workers, args.code)
        return
    results = []
    for i in range(args.repeat):
        print(f"run {i + 1}: {args.tables} tables at a coup per {args.pace:g} s, "
              f"{args.screens} screens, {args.viewers} viewers, {args.seconds:g} s", flush=True)
        results.append(run(args, i))
        report(args, results[-1])
    if len(results) > 1:
        print(f"median over {len(results)} runs: p50 "
              f"{statistics.median(r['p50'] for r in results):.0f} ms, p95 "
              f"{statistics.median(r['p95'] for r in results):.0f} ms, p99 "
              f"{statistics.median(r['p99'] for r in results):.0f} ms")


if __name__ == "__main__":
    threading.excepthook = lambda a: print(f"thread: {a.exc_value!r}", file=sys.stderr)
    main()
