"""Push to table-side screens: one watcher per server process, one WebSocket per screen.

The journal is the only shared state. The watcher polls its head (one indexed query every
20 ms); when a table's events change — a coup from any entry path, any process, a correction,
a shoe closing — it rebuilds that table's state once, renders it once per (language, theme)
in use, and hands the whole fragment to every screen of the table. Each screen has a
one-slot mailbox holding only the newest state, so a slow screen skips stale states instead
of queueing them, and never holds up the others. A screen that (re)connects gets the full
current state first: reconnects and server restarts resynchronise by construction.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from dashboard.config import SiteConfig
from dashboard.screen import screen_payload
from roads.tables import TableService

POLL_SECONDS = 0.02
PING_SECONDS = 15.0


@dataclass(eq=False)
class Screen:
    """One open screen: its table, language and theme, and a one-slot mailbox."""

    socket: WebSocket
    table_id: str
    lang: str
    theme: str
    latest: dict[str, Any] | None = None
    seq: int = -1
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, message: dict[str, Any]) -> None:
        """Keep only the newest state; an older one (a late render) is dropped."""
        if message["type"] == "state":
            if message["seq"] < self.seq:
                return
            self.seq = message["seq"]
        self.latest = message
        self.ready.set()


class Hub:
    """Screens by table, and the watcher that feeds them."""

    def __init__(self, service: TableService, site: SiteConfig) -> None:
        self.service = service
        self.site = site
        self.screens: dict[str, set[Screen]] = {}
        self.head = 0
        self._watcher: asyncio.Task[None] | None = None

    def _changed(self, since: int) -> tuple[int, set[str]]:
        head = self.service.journal.head()[0]
        if head == since:
            return head, set()
        return head, self.service.journal.tables_since(since)

    async def _watch(self) -> None:
        self.head = (await asyncio.to_thread(self.service.journal.head))[0]
        while True:
            try:
                head, tables = await asyncio.to_thread(self._changed, self.head)
                self.head = head
                for table_id in tables & self.screens.keys():
                    await self.publish(table_id)
            except Exception as exc:
                print(f"roads serve: screen watcher: {exc!r}", flush=True)
            await asyncio.sleep(POLL_SECONDS)

    def _render(self, table_id: str, groups: set[tuple[str, str]]
                ) -> dict[tuple[str, str], dict[str, Any]]:
        state = self.service.table_state(table_id)
        return {g: screen_payload(state, self.site, *g) for g in groups}

    async def publish(self, table_id: str, only: Screen | None = None) -> None:
        """Render the table's current state and offer it to its screens (or one screen)."""
        screens = [only] if only is not None else list(self.screens.get(table_id, ()))
        if not screens:
            return
        payloads = await asyncio.to_thread(self._render, table_id,
                                           {(s.lang, s.theme) for s in screens})
        for s in screens:
            s.offer(payloads[(s.lang, s.theme)])

    def ask(self, table_id: str, outcome: str) -> int:
        """Show the "B?"/"P?" hypothetical cells on every screen of a table (not journaled:
        it changes no result)."""
        screens = self.screens.get(table_id, set())
        for s in screens:
            s.offer({"type": "ask", "outcome": outcome})
        return len(screens)

    async def serve(self, socket: WebSocket, table_id: str, lang: str, theme: str) -> None:
        """One screen's connection, from accept to disconnect."""
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch())
        await socket.accept()
        screen = Screen(socket, table_id, lang, theme)
        self.screens.setdefault(table_id, set()).add(screen)
        reader = asyncio.create_task(_drain(socket))
        try:
            await self.publish(table_id, only=screen)
            while not reader.done():
                # Wake on a new state, a closed socket, or the ping interval.
                waiter = asyncio.create_task(screen.ready.wait())
                await asyncio.wait({waiter, reader}, timeout=PING_SECONDS,
                                   return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if reader.done():
                    break
                screen.ready.clear()
                message, screen.latest = screen.latest or {"type": "ping"}, None
                # The send time lets a screen (and the latency benchmark) tell server delay
                # from browser delay.
                message = {**message, "sent": round(time.time() * 1000)}
                await socket.send_text(json.dumps(message, separators=(",", ":")))
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            reader.cancel()
            self.screens.get(table_id, set()).discard(screen)


async def _drain(socket: WebSocket) -> None:
    """Read (and ignore) what the screen sends, to notice when it goes away."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                return
