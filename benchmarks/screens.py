"""Accepted coup → updated table screen, in real headless Chromium (issue 6 targets), and
a table screen's first paint (issue 17).

Run: .venv/bin/python -m benchmarks.screens [--tables 20] [--seconds 60] [--pace 1.0]
     .venv/bin/python -m benchmarks.screens --first-paint 30 [--coups 70] [--tables 3]
Targets: p95 accepted-coup → updated screen <= 300 ms with 20 tables dealing and 20 open
screens; first load of a table screen <= 2 s; server memory flat over a soak
(``--seconds 1800`` for the 30-minute soak); first paint <= 1 s.

First paint: a fresh browser window (nothing cached) opens the screen of a table whose shoe
already holds ``--coups`` card-level coups (a full board: the heaviest first state); the
figure is navigation start → the frame after the first state was drawn (two animation
frames after the state replaced the page's body, i.e. once that frame was painted), read
from the page's own clock (``performance.now()``, zero at navigation start).

A `roads serve` process serves the screens; one Debian Chromium holds one page per table.
Each table posts card-level coups through the HTTP API (its own key) at ``--pace`` seconds
on average; a coup counts as accepted when the API answers (the journal commit is durable
by then). Each page records, in the frame after the screen's ``data-seq`` changes, the
browser's wall clock; a coup's latency is the first drawn state at or after its sequence
number minus its acceptance time (same machine, same clock).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from benchmarks.procs import tree_memory_mb
from roads.auth import Auth
from roads.engine import deal_shoe
from roads.rules import get_rules
from roads.store import Store
from tests.e2e.conftest import ARGS, CHROMIUM, free_port

RECORDER = """
window.__drawn = [];
new MutationObserver(() => {
  const root = document.getElementById('screen-root');
  const seq = Number(root && root.dataset.seq);
  const sent = Number(root && root.dataset.sent);
  const received = Date.now();
  requestAnimationFrame(() => window.__drawn.push([seq, Date.now(), sent, received]));
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-seq']});
"""


FIRST_PAINT = """
// Marks on the page's clock (zero at navigation start): the push socket opened, the first
// state received (the body replaced), and the frame after the one that drew it.
window.__firstPaint = null;
const PageSocket = window.WebSocket;
window.WebSocket = function (url) {
  const socket = new PageSocket(url);
  socket.addEventListener('open', () => { window.__socketOpen ??= performance.now(); });
  return socket;
};
new MutationObserver((_, observer) => {
  const root = document.getElementById('screen-root');
  if (!root || !root.dataset.seq || window.__firstPaint !== null) return;
  observer.disconnect();
  const received = performance.now();
  window.__firstPaint = [];
  requestAnimationFrame(() => requestAnimationFrame(() => {
    window.__firstPaint = [received, performance.now()];
  }));
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-seq']});
"""
MARKS = """() => ({
  loaded: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
  socket: window.__socketOpen, received: window.__firstPaint[0], drawn: window.__firstPaint[1],
})"""


def _post(url: str, key: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def _dealer(base: str, table: str, key: str, seconds: float, pace: float, seed: int,
            accepted: list[tuple[str, int, float]]) -> None:
    rng = random.Random(seed)
    rules = get_rules("standard-8")
    end = time.monotonic() + seconds
    shoe_no = 0
    while time.monotonic() < end:
        shoe = deal_shoe(rules, rng.getrandbits(63))
        shoe_no += 1
        _post(f"{base}/api/tables/{table}/shoes", key,
              {"shoe_id": f"B{seed}-{shoe_no}", "burn_cards": list(shoe.burn_cards)})
        for player, banker in shoe.coups:
            time.sleep(rng.uniform(0.5, 1.5) * pace)
            if time.monotonic() >= end:
                return
            answer = _post(f"{base}/api/tables/{table}/coups", key,
                           {"player_cards": list(player), "banker_cards": list(banker)})
            accepted.append((table, int(answer["seq"]), time.time() * 1000))

        _post(f"{base}/api/tables/{table}/shoes/close", key, {})


def _deal_into(base: str, table: str, key: str, coups: int, seed: int) -> None:
    """Open a shoe at ``table`` and post its first ``coups`` card-level coups."""
    shoe = deal_shoe(get_rules("standard-8"), seed)
    _post(f"{base}/api/tables/{table}/shoes", key,
          {"shoe_id": f"P{seed}", "burn_cards": list(shoe.burn_cards)})
    for player, banker in shoe.coups[:coups]:
        _post(f"{base}/api/tables/{table}/coups", key,
              {"player_cards": list(player), "banker_cards": list(banker)})


def first_paint(base: str, tables: list[str], keys: dict[str, str], loads: int,
                coups: int) -> None:
    """Navigation start → first state drawn, over ``loads`` fresh windows."""
    for i, t in enumerate(tables):
        _deal_into(base, t, keys[t], coups, 1000 + i)
    marks: list[dict[str, float]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for i in range(loads):
            context = browser.new_context(viewport={"width": 1920, "height": 1080})
            context.add_init_script(FIRST_PAINT)
            page = context.new_page()
            page.goto(f"{base}/table/{tables[i % len(tables)]}")
            page.wait_for_function(
                "() => window.__firstPaint && window.__firstPaint.length === 2")
            marks.append(page.evaluate(MARKS))
            context.close()
        browser.close()
    drawn = [m["drawn"] for m in marks]
    q = statistics.quantiles(drawn, n=20)
    print(f"first paint of a table screen ({coups} coups on the board), {loads} fresh windows "
          f"at 1920x1080 over {len(tables)} tables:")
    print(f"  navigation start -> first state drawn: median {statistics.median(drawn):.0f} ms"
          f"  p95 {q[18]:.0f} ms  max {max(drawn):.0f} ms  (target <= 1000 ms)")
    for mark, label in (("loaded", "page and script loaded"), ("socket", "push socket open"),
                        ("received", "first state received")):
        print(f"    of which navigation start -> {label}: median "
              f"{statistics.median(m[mark] for m in marks):.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--screens", type=int, default=None,
                        help="open screens (default: one per table)")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds of dealing left out of the figures")
    parser.add_argument("--pace", type=float, default=1.0,
                        help="average seconds between coups at each table")
    parser.add_argument("--dump", help="write the raw timings to this JSON file")
    parser.add_argument("--first-paint", type=int, default=0, metavar="LOADS",
                        help="measure first paint over LOADS fresh windows instead")
    parser.add_argument("--coups", type=int, default=70,
                        help="coups on each board before the first-paint loads")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="roads-screens-")) / "store"
    store = Store.create(root)
    auth = Auth(root, store.journal)
    tables = [f"T{i:02d}" for i in range(1, args.tables + 1)]
    keys = {t: auth.issue_key(t) for t in tables}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-c", "from roads.cli import main; main()",
                               "serve", "--store", str(root), "--port", str(port)],
                              stdout=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        if args.first_paint:
            first_paint(base, tables, keys, args.first_paint, args.coups)
            return
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            pages, loads = {}, []
            for t in tables[: args.screens or len(tables)]:
                # One context (window) per screen, as each table screen is its own display.
                context = browser.new_context(viewport={"width": 1920, "height": 1080})
                context.add_init_script(RECORDER)
                page = context.new_page()
                start = time.perf_counter()
                page.goto(f"{base}/table/{t}")
                page.wait_for_selector("#screen-root[data-seq]")
                loads.append(time.perf_counter() - start)
                pages[t] = page
            rss_start = tree_memory_mb(server.pid)
            accepted: list[tuple[str, int, float]] = []
            threads = [threading.Thread(target=_dealer, args=(base, t, keys[t], args.seconds,
                                                              args.pace, i, accepted))
                       for i, t in enumerate(tables)]
            samples = []
            for th in threads:
                th.start()
            counted_from = (time.time() + args.warmup) * 1000
            began = time.monotonic()
            while any(th.is_alive() for th in threads):
                time.sleep(min(60.0, args.seconds / 10))
                samples.append((round(time.monotonic() - began), round(tree_memory_mb(server.pid))))
            time.sleep(1.0)
            drawn = {t: pg.evaluate("window.__drawn") for t, pg in pages.items()}
            browser.close()
        if args.dump:
            Path(args.dump).write_text(json.dumps({"accepted": accepted, "drawn": drawn}))
        latencies, server_part, handled, missing = [], [], [], 0
        for table, seq, at in accepted:
            if table not in drawn or at < counted_from:
                continue
            later = [d for d in drawn[table] if d[0] >= seq]
            if later:
                first = min(later, key=lambda d: d[1])
                latencies.append(max(0.0, first[1] - at))
                server_part.append(max(0.0, first[2] - at))
                handled.append(max(0.0, first[3] - at))
            else:
                missing += 1
        server_part.sort()
        latencies.sort()
        q = statistics.quantiles(latencies, n=100)
        print(f"{len(tables)} tables dealing, {len(pages)} open screens, "
              f"{args.seconds:g} s, pace {args.pace:g} s/coup")
        print(f"coups accepted: {len(accepted)}  drawn: {len(latencies)}  never drawn: {missing}")
        print(f"accepted coup -> updated screen: p50 {q[49]:.0f} ms  p95 {q[94]:.0f} ms  "
              f"p99 {q[98]:.0f} ms  max {latencies[-1]:.0f} ms  (target p95 <= 300 ms)")
        for label, part in (("sent by the server", server_part),
                            ("handled by the page's script", handled)):
            pq = statistics.quantiles(part, n=100)
            print(f"  accepted -> {label}: p50 {pq[49]:.0f} ms  p95 {pq[94]:.0f} ms")
        print(f"first load of a table screen: median {statistics.median(loads):.2f} s  "
              f"max {max(loads):.2f} s  (target <= 2 s)")
        print(f"server memory (PSS, all processes): {rss_start:.0f} MB after the screens opened; "
              f"samples (s, MB): {samples}")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
