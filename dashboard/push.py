"""Push to table-side screens: one watcher per server process, one WebSocket per screen.

The journal is the only shared state. Each server process (worker) keeps its own read
model of the tables its screens show (:class:`roads.tables.state.LiveTables`) and polls the
journal for new events (one indexed query every 20 ms, on the watcher's own thread, so a
busy event loop never delays it). Each event is applied to the table's
kept state and board — a coup appends to the board, a correction rebuilds that shoe only —
and each (table, language, theme) shown is drawn again once per change
(:class:`dashboard.screen.ScreenContent`): only the cells and parts that changed, sent as a
compact update; the whole state goes to a screen that (re)connects or missed an update.

A screen's mailbox is its channel's newest version: when the screen can take a message it
gets the update from what it shows, or the whole newest state, so a slow screen skips stale
states instead of queueing them, and never holds up the others. Every worker's screens of a
table get the same states (the same journal, the same drawing); asks ("B?"/"P?", not
journaled) and the count of screens per table go through a small file every worker of one
server shares (:class:`ScreenRegistry`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import sqlite3
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from dashboard.config import SiteConfig
from dashboard.screen import ScreenContent, Update
from roads.tables import TableService
from roads.tables.state import LiveTables
from roads.thread_connections import keep_for_thread

POLL_SECONDS = 0.02
PING_SECONDS = 15.0
_PING = '{"type":"ping"}'


def _text(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


class Version:
    """One state of a channel, serialised once for all its screens (the whole state only
    when a screen needs it)."""

    __slots__ = ("_full", "delta", "drawn", "seen", "seq", "update")

    def __init__(self, update: Update, seen: float) -> None:
        self.update, self.seq = update, update.seq
        # When the watcher found the change and when it was drawn (ms since the epoch): each
        # message carries them beside its send time, so a coup's wait can be split by hop.
        self.seen, self.drawn = round(seen * 1000), round(time.time() * 1000)
        self.delta = None if update.delta is None else _text(update.delta)
        self._full: str | None = None

    @property
    def full(self) -> str:
        if self._full is None:
            self._full = _text(self.update.full)
        return self._full

    def after(self, shown: int) -> str | None:
        """The message for a screen showing ``shown``: nothing, the update from it, or the
        whole state."""
        if shown == self.seq:
            return None
        if self.delta is not None and self.update.delta is not None \
                and self.update.delta["base"] == shown:
            return self.delta
        return self.full


class Channel:
    """Every screen of one table in one language and theme: drawn once per change."""

    def __init__(self, table_id: str, lang: str, theme: str, site: SiteConfig) -> None:
        self.table_id = table_id
        self.content = ScreenContent(site, lang, theme)
        self.screens: set[Screen] = set()
        self.version: Version | None = None

    def draw(self, live: LiveTables, seen: float) -> None:
        """Draw the table's state as of the watcher's last refresh (``seen``: when the
        change was found). Never a refresh of its own: the events it applied to other
        tables would be missing from the watcher's changes, and their screens would wait
        for their table's next event (seen: a floor's p95 of ~1.2 s at a coup a second,
        p99 of ~19 s at a coup per 25 s)."""
        table = live.table(self.table_id, refresh=False)
        if self.version is None or table.state.seq > self.version.seq:
            self.version = Version(self.content.update(table.state, table.board), seen)


@dataclass(eq=False)
class Screen:
    """One open screen: its channel, the sequence number it shows, a pending ask."""

    socket: WebSocket
    channel: Channel
    shown: int = -1
    asks: list[str] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class ScreenRegistry:
    """What the workers of one server share about screens, in one small SQLite file (not
    the store: nothing here is a record): the asks to show, and how many screens each
    worker has open per table. Written without fsync; lost with the server, as it should be.
    """

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            self._own = tempfile.TemporaryDirectory(prefix="roads-screens-")
            path = Path(self._own.name) / "screens.sqlite"
        self.path = path
        self.pid = os.getpid()
        self.hub = secrets.token_hex(8)  # one per hub: two in one process count apart
        self._local = threading.local()
        with self._db() as db:
            db.executescript(
                "CREATE TABLE IF NOT EXISTS asks (seq INTEGER PRIMARY KEY, table_id TEXT, "
                "outcome TEXT);"
                "CREATE TABLE IF NOT EXISTS screens (hub TEXT, pid INTEGER, table_id TEXT, "
                "count INTEGER, PRIMARY KEY (hub, table_id));")
            gone = [pid for (pid,) in db.execute("SELECT DISTINCT pid FROM screens")
                    if not _alive(pid)]
            db.executemany("DELETE FROM screens WHERE pid = ?", [(pid,) for pid in gone])
        self.seen = self._head()

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            keep_for_thread(self._local, db)
        return db

    def _head(self) -> int:
        return int(self._db().execute("SELECT coalesce(max(seq), 0) FROM asks").fetchone()[0])

    def count(self, table_id: str, screens: int) -> None:
        """This worker now has ``screens`` screens of the table open."""
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO screens VALUES (?, ?, ?, ?)",
                       (self.hub, self.pid, table_id, screens))

    def ask(self, table_id: str, outcome: str) -> int:
        """Ask every worker's screens of the table; how many screens that is."""
        with self._db() as db:
            db.execute("INSERT INTO asks(table_id, outcome) VALUES (?, ?)", (table_id, outcome))
            rows = db.execute("SELECT pid, count FROM screens WHERE table_id = ?",
                              (table_id,)).fetchall()
        return sum(n for pid, n in rows if _alive(pid))

    def skip_asks(self) -> None:
        """Forget the asks made so far (a watcher starting shows only the ones after)."""
        self.seen = self._head()

    def new_asks(self) -> list[tuple[str, str]]:
        """Asks made (by any hub) since the last call."""
        rows = self._db().execute("SELECT seq, table_id, outcome FROM asks WHERE seq > ? "
                                  "ORDER BY seq", (self.seen,)).fetchall()
        if rows:
            self.seen = rows[-1][0]
        return [(t, o) for _, t, o in rows]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Hub:
    """This worker's screens by channel, and the watcher that feeds them."""

    def __init__(self, service: TableService, site: SiteConfig,
                 registry: Path | None = None) -> None:
        self.site = site
        self.live = LiveTables(service.journal)  # touched under _lock only
        self.channels: dict[tuple[str, str, str], Channel] = {}
        self.registry = ScreenRegistry(registry)
        # The read model and the contents are touched by one thread at a time: the
        # watcher's, or the one that draws a joining screen's channel; the event loop only
        # sends.
        self._lock = threading.Lock()
        self._drawing = ThreadPoolExecutor(1, thread_name_prefix="screens")
        self._watcher: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def screens(self, table_id: str) -> list[Screen]:
        return [s for (t, _, _), ch in list(self.channels.items()) if t == table_id
                for s in ch.screens]

    async def _in_drawing(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._drawing, fn, *args)

    def _start_watching(self) -> None:
        """The watcher's thread, for this event loop (once)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._watcher is not None and self._watcher.is_alive():
            return
        self._loop = loop
        self._watcher = threading.Thread(target=self._watch, args=(loop,),
                                         name="screen-watcher", daemon=True)
        self._watcher.start()

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """The watcher, on a thread of its own until its event loop closes: every
        ``POLL_SECONDS`` it applies the journal's new events, draws what changed and hands
        the loop only the screens to wake. (As a task of the loop, each cycle waited twice
        for a turn of the loop, behind every send and request of the worker: under load,
        the largest part of a coup's way to the screen.)"""
        with self._lock:
            self.registry.skip_asks()
        while self._loop is loop and not loop.is_closed():
            try:
                drawn, asks = self._cycle()
                if drawn or asks:
                    loop.call_soon_threadsafe(self._wake, drawn, asks)
            except Exception as exc:
                if loop.is_closed():  # (call_soon_threadsafe: the loop closed meanwhile)
                    return
                print(f"roads serve: screen watcher: {exc!r}", flush=True)
            time.sleep(POLL_SECONDS)

    def _wake(self, drawn: list[Channel], asks: list[tuple[str, str]]) -> None:
        """In the event loop: wake the screens of the channels drawn, and of the asks."""
        for channel in drawn:
            for screen in channel.screens:
                screen.ready.set()
        for table_id, outcome in asks:
            for screen in self.screens(table_id):
                screen.asks.append(outcome)
                screen.ready.set()

    def _cycle(self, channels: tuple[Channel, ...] | None = None
               ) -> tuple[list[Channel], list[tuple[str, str]]]:
        """In the watcher's thread: apply the journal's new events, draw each channel whose
        table changed, and collect the asks. The channels are listed under the lock (by
        default every channel): one a screen opened and drew before this refresh is in the
        list, so the refresh's change to its table is drawn now, not at its next coup."""
        with self._lock:
            if channels is None:
                channels = tuple(self.channels.values())
            changed = self.live.refresh()
            seen = time.time()
            drawn = [ch for ch in channels if ch.table_id in changed]
            for channel in drawn:
                channel.draw(self.live, seen)
            return drawn, self.registry.new_asks()

    def ask(self, table_id: str, outcome: str) -> int:
        """Show the "B?"/"P?" hypothetical cells on every screen of a table, whichever
        worker serves it (not journaled: it changes no result); how many screens."""
        return self.registry.ask(table_id, outcome)

    async def serve(self, socket: WebSocket, table_id: str, lang: str, theme: str) -> None:
        """One screen's connection, from accept to disconnect."""
        self._start_watching()
        await socket.accept()
        key = (table_id, lang, theme)
        channel = self.channels.get(key)
        if channel is None:
            channel = self.channels[key] = Channel(table_id, lang, theme, self.site)
        screen = Screen(socket, channel)
        channel.screens.add(screen)
        reader = asyncio.create_task(_drain(socket))
        try:
            await self._in_drawing(self._joined, channel)
            screen.ready.set()
            while not reader.done():
                # Wake on a new state or ask, a closed socket, or the ping interval.
                waiter = asyncio.create_task(screen.ready.wait())
                await asyncio.wait({waiter, reader}, timeout=PING_SECONDS,
                                   return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if reader.done():
                    break
                screen.ready.clear()
                await self._send(screen)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            reader.cancel()
            channel.screens.discard(screen)
            if not channel.screens and self.channels.get(key) is channel:
                del self.channels[key]
            self._drawing.submit(self._left, table_id)

    def _joined(self, channel: Channel) -> None:
        with self._lock:
            channel.draw(self.live, time.time())
        self.registry.count(channel.table_id, len(self.screens(channel.table_id)))

    def _left(self, table_id: str) -> None:
        count = len(self.screens(table_id))  # now: a screen may have joined since
        self.registry.count(table_id, count)
        if not count:
            with self._lock:
                self.live.forget(table_id)

    async def _send(self, screen: Screen) -> None:
        """What the screen lacks, newest first: its channel's update or whole state, the
        asks; a ping when there is nothing. Each message carries its send time, so a screen
        (and the latency benchmark) can tell server delay from browser delay."""
        sent = f',"sent":{round(time.time() * 1000)}}}'
        version = screen.channel.version
        messages = []
        text = None if version is None else version.after(screen.shown)
        if text is not None and version is not None:
            messages.append(f'{text[:-1]},"seen":{version.seen},"drawn":{version.drawn}}}')
            screen.shown = version.seq
        messages += [_text({"type": "ask", "outcome": o}) for o in screen.asks]
        screen.asks.clear()
        for message in messages or [_PING]:
            await screen.socket.send_text(message[:-1] + sent)


async def _drain(socket: WebSocket) -> None:
    """Read (and ignore) what the screen sends, to notice when it goes away."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                return
