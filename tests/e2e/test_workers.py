"""``roads serve --workers 2``: screens of one table held by both worker processes get the
same states, update by update and through a correction, as a screen that connects fresh."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import websockets

from roads.auth import Auth
from roads.engine import deal_shoe
from roads.rules import get_rules
from roads.store import Store
from roads.tables import TableService
from tests.dashboard.screen_dom import ScreenPage, page_of
from tests.e2e.conftest import LiveServer, free_port
from tests.floor import DEALER, SUPERVISOR


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[LiveServer]:
    root = tmp_path / "store"
    store = Store.create(root)
    server = LiveServer(root, free_port(), Auth(root, store.journal).issue_key("T1"),
                        workers=2)
    store.journal.close()
    server.start()
    yield server
    server.stop()


def _children(pid: int, count: int) -> list[int]:
    """The server's ``count`` worker processes: the first serves before the parent has
    loaded the compiled kernels, the others are forked after (seconds on a busy machine)."""
    deadline = time.monotonic() + 60
    while True:
        found = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _holders(port: int, pids: list[int]) -> dict[int, int]:
    """Client port -> the worker process holding that connection (from /proc)."""
    remote_of = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if int(f[1].rsplit(":", 1)[1], 16) == port and f[3] == "01":  # ESTABLISHED
                remote_of[f[9]] = int(f[2].rsplit(":", 1)[1], 16)
    held = {}
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            inode = link.removeprefix("socket:[").removesuffix("]")
            if inode in remote_of:
                held[remote_of[inode]] = pid
    return held


class _Screen:
    def __init__(self, socket: Any) -> None:
        self.socket, self.page = socket, ScreenPage()

    async def until(self, seq: int) -> None:
        while self.page.seq < seq:
            message = json.loads(await asyncio.wait_for(self.socket.recv(), 20))
            assert self.page.receive(message)


def test_both_workers_serve_a_table_the_same_states(two_workers: LiveServer) -> None:
    server = two_workers
    assert server.process is not None
    workers = _children(server.process.pid, 2)
    assert len(workers) == 2
    shoe = deal_shoe(get_rules("standard-8"), 3)
    hands = [{"player_cards": list(p), "banker_cards": list(b)} for p, b in shoe.coups]
    server.post("/api/tables/T1/shoes", {"shoe_id": "S1", "burn_cards": list(shoe.burn_cards)})
    seq = 0
    for hand in hands[:20]:
        seq = int(str(server.post("/api/tables/T1/coups", dict(hand))["seq"]))
    url = f"ws://127.0.0.1:{server.port}/ws/tables/T1"

    async def scenario() -> None:
        screens: list[_Screen] = []
        while len(screens) < 32:
            screen = _Screen(await websockets.connect(url))
            await screen.until(seq)
            screens.append(screen)
            held = _holders(server.port, workers)
            if len(screens) >= 4 and len(set(held.values())) == 2:
                break
        assert set(_holders(server.port, workers).values()) == set(workers)

        async def everyone_at(seq: int) -> None:
            await asyncio.gather(*(s.until(seq) for s in screens))
            fresh = _Screen(await websockets.connect(url))
            await fresh.until(seq)
            await fresh.socket.close()
            for s in screens:
                assert s.page.seq == seq and s.page.tree() == fresh.page.tree()

        for hand in hands[20:23]:
            answer = await asyncio.to_thread(server.post, "/api/tables/T1/coups", dict(hand))
            await everyone_at(int(str(answer["seq"])))
        service = TableService(Store.open(server.root))
        request = service.request_correction(DEALER, "T1", "S1", 4, "video review")
        await everyone_at(service.decide_correction(SUPERVISOR, request.seq, True).seq)
        answer = await asyncio.to_thread(server.post, "/api/tables/T1/coups", dict(hands[23]))
        await everyone_at(int(str(answer["seq"])))
        state = service.table_state("T1")
        assert len(state.coups) == 23
        service.journal.close()
        assert screens[0].page.tree() == page_of(_fresh_html(server, state))
        for s in screens:
            await s.socket.close()

    # In a thread of its own: the session's Playwright keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, scenario()).result()


def _fresh_html(server: LiveServer, state: Any) -> str:
    from dashboard.config import SiteConfig
    from dashboard.screen import screen_payload

    return str(screen_payload(state, SiteConfig(), "en", "dark")["html"])


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_workers_end_when_the_server_is_killed(two_workers: LiveServer) -> None:
    """SIGKILL gives the server no chance to stop its workers; they must not live on
    holding the port and the store."""
    import signal
    import time

    server = two_workers
    assert server.process is not None
    workers = _children(server.process.pid, 2)
    assert len(workers) == 2 and all(_running(p) for p in workers)
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()
    deadline = time.monotonic() + 60  # (a bound for a loaded machine, not a measurement)
    while any(_running(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in workers if _running(p)]
    for pid in left:  # (leave no process behind, whatever the outcome)
        os.kill(pid, signal.SIGKILL)
    assert left == []
