"""The push channel: a slow screen skips stale states without holding up the others, and
two workers over one store serve a table's screens the same states (and each other's asks).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dashboard.app import create_app
from dashboard.config import SiteConfig, TableConfig
from dashboard.push import Channel, Hub
from dashboard.screen import screen_payload
from tests.dashboard.conftest import PASSWORD
from tests.dashboard.screen_dom import ScreenPage, page_of
from tests.floor import Floor

SITE = SiteConfig(casino="Casino", tables={"T1": TableConfig("T1", "Salon 1")})


class _Socket:
    """A screen's socket whose sends take as long as ``gate`` stays closed (a slow link)."""

    def __init__(self, slow: bool = False) -> None:
        self.messages: list[dict[str, Any]] = []
        self.gate, self.closed = asyncio.Event(), asyncio.Event()
        if not slow:
            self.gate.set()

    async def accept(self) -> None:
        pass

    async def send_text(self, text: str) -> None:
        await self.gate.wait()
        self.messages.append(json.loads(text))

    async def receive(self) -> dict[str, str]:
        await self.closed.wait()
        return {"type": "websocket.disconnect"}

    def states(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] in ("state", "update")]


def _shows(screen: _Socket, seq: int) -> bool:
    return bool(screen.states()) and screen.states()[-1]["seq"] == seq


async def _until(test: Callable[[], bool]) -> None:
    async def wait() -> None:
        while not test():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(wait(), timeout=20)


def test_a_slow_screen_skips_stale_states_and_holds_up_no_one(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPB")

    async def scenario() -> tuple[_Socket, _Socket, int]:
        hub = Hub(floor.service, SITE)
        slow, fast = _Socket(slow=True), _Socket()
        screens = [asyncio.create_task(hub.serve(s, "T1", "en", "dark"))  # type: ignore[arg-type]
                   for s in (slow, fast)]
        await _until(lambda: bool(fast.states()))
        seq = 0
        for outcome in "BBPTP":
            seq = floor.coup("T1", outcome).seq
            # Each coup its own change: the fast screen shows it before the next is dealt.
            await _until(functools.partial(_shows, fast, seq))
        assert slow.messages == []  # still sending its first state
        slow.gate.set()
        await _until(lambda: bool(slow.states()) and slow.states()[-1]["seq"] == seq)
        for s in (slow, fast):
            s.closed.set()
        await asyncio.gather(*screens)
        return slow, fast, seq

    slow, fast, seq = asyncio.run(scenario())
    assert [m["type"] for m in slow.states()] == ["state", "state"]  # the newest, whole
    assert fast.states()[0]["type"] == "state"
    assert len(fast.states()) >= 4 and {m["type"] for m in fast.states()[1:]} == {"update"}
    expected = page_of(screen_payload(floor.service.table_state("T1"), SITE, "en", "dark")
                       ["html"])
    for s in (slow, fast):
        page = ScreenPage()
        assert all(page.receive(m) for m in s.states())
        assert page.seq == seq and page.tree() == expected


def _receive(ws: Any, kinds: tuple[str, ...] = ("state", "update")) -> dict[str, Any]:
    while True:
        message = json.loads(ws.receive_text())
        if message["type"] in kinds:
            return message  # type: ignore[no-any-return]


def test_two_workers_serve_a_table_the_same_states_and_each_others_asks(
        tmp_path: Path) -> None:
    root, registry = tmp_path / "store", tmp_path / "screens.sqlite"
    apps = [create_app(root, SITE, registry=registry) for _ in range(2)]
    _, ctx = apps[0]
    ctx.auth.add_user("dealer", "dealer", PASSWORD)
    auth = {"Authorization": f"Bearer {ctx.auth.issue_key('T1')}"}
    with TestClient(apps[0][0].server) as one, TestClient(apps[1][0].server) as two:
        one.post("/api/tables/T1/shoes", json={"shoe_id": "S1"}, headers=auth)
        with one.websocket_connect("/ws/tables/T1") as a, \
                two.websocket_connect("/ws/tables/T1") as b:
            pages = [ScreenPage(), ScreenPage()]
            for page, ws in zip(pages, (a, b), strict=True):
                assert page.receive(_receive(ws))
            for entry in ({"outcome": "B"}, {"player_cards": ["9h", "Kd"],
                                             "banker_cards": ["2c", "3c"]}, {"outcome": "T"}):
                seq = one.post("/api/tables/T1/coups", json=entry, headers=auth).json()["seq"]
                for page, ws in zip(pages, (a, b), strict=True):
                    while page.seq < seq:
                        assert page.receive(_receive(ws))
                assert pages[0].seq == pages[1].seq == seq
                assert pages[0].tree() == pages[1].tree()
            # An ask made on one worker shows on the screens of both.
            page = one.get("/login")
            token = page.text.split('name="csrf" value="')[1].split('"')[0]
            one.post("/login", content=f"user=dealer&password={PASSWORD}&csrf={token}&next=/",
                     headers={"content-type": "application/x-www-form-urlencoded"},
                     follow_redirects=False)
            session = ctx.auth.session(one.cookies.get("roads_session"))
            assert session is not None
            r = one.post("/operator/T1/action", json={"action": "ask", "outcome": "P"},
                         headers={"X-CSRF-Token": session.csrf})
            assert r.json()["message"] == "Asked P? on 2 screens"
            for ws in (a, b):
                assert _receive(ws, ("ask",))["outcome"] == "P"


def test_a_coup_committed_while_the_watcher_draws_reaches_its_screens_next_cycle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """T2's coup is committed while the watcher draws T1, and T3 is drawn after: the next
    cycle draws T2. (Each draw refreshed the read model itself, so T3's applied T2's coup
    without the watcher knowing, and T2's screens waited for its next coup: a floor's p95
    of a coup's interval.)"""
    floor = Floor(tmp_path)
    tables = ("T1", "T2", "T3")
    for t in tables:
        floor.open_shoe(t, f"{t}-S1")
        floor.coups(t, "BP")
    hub = Hub(floor.service, SITE)
    t1, t2, _ = channels = tuple(Channel(t, "en", "classic", SITE) for t in tables)
    for channel in channels:
        hub._joined(channel)
    late: list[int] = []
    draw_t1 = t1.content.update

    def update_t1(state: Any, board: Any) -> Any:
        if not late:  # the other worker commits T2's coup now
            late.append(floor.coup("T2", "T").seq)
        return draw_t1(state, board)

    monkeypatch.setattr(t1.content, "update", update_t1)
    floor.coup("T1", "B")
    floor.coup("T3", "P")
    drawn = hub._cycle(channels)[0]
    assert [ch.table_id for ch in drawn] == ["T1", "T3"] and late
    assert t2.version is not None and t2.version.seq < late[0]
    drawn = hub._cycle(channels)[0]
    assert [ch.table_id for ch in drawn] == ["T2"]
    assert t2.version.seq == late[0] == floor.service.table_state("T2").seq
