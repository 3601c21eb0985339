"""Real-browser fixtures: a `roads serve` process on a free port and Debian's Chromium
driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from roads.auth import Auth
from roads.store import Store

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PASSWORD = "correct horse battery"
SCREENSHOTS = Path(os.environ.get("ROADS_SCREENSHOTS", "data/screenshots"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveServer:
    root: Path
    port: int
    key: str
    config: Path | None = None  # a site.toml (casino, tables' names and limits)
    workers: int | None = None  # server processes (default: one per core)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from roads.cli import main; main()", "serve", "--store",
             str(self.root), "--port", str(self.port),
             *(["--config", str(self.config)] if self.config else []),
             *(["--workers", str(self.workers)] if self.workers else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        self.process.kill()
        _, err = self.process.communicate()
        raise RuntimeError(f"roads serve did not start: {err.decode()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
            finally:
                self.process = None

    def post(self, path: str, body: dict[str, object]) -> dict[str, object]:
        import json
        request = urllib.request.Request(
            f"{self.url}{path}", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.key}"})
        with urllib.request.urlopen(request, timeout=10) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    root = tmp_path / "store"
    store = Store.create(root)
    auth = Auth(root, store.journal)
    for name, role in (("dealer", "dealer"), ("super", "supervisor"), ("viewer", "viewer")):
        auth.add_user(name, role, PASSWORD)
    server = LiveServer(root, free_port(), auth.issue_key("T1"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is missing: `make system-packages` installs it")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@dataclass
class Console:
    """Browser console errors and uncaught page errors of one page."""

    errors: list[str] = field(default_factory=list)

    def watch(self, page: Page) -> Page:
        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                self.errors.append(message.text)
        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        return page


def shot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path
