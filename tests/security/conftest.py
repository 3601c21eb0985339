"""Servers to attack: in-process (FastAPI TestClient) with any site configuration, and a
real uvicorn on a loopback port with the settings ``roads serve`` uses (for what only a
socket shows: slow clients, chunked bodies, closed connections)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from dashboard.app import create_app
from dashboard.config import Limits, SiteConfig
from dashboard.context import Context
from dashboard.limits import server_options

PASSWORD = "correct horse battery"
FORM = {"content-type": "application/x-www-form-urlencoded"}


@dataclass
class Site:
    client: TestClient
    ctx: Context
    key: str  # API key of table T1

    def login_form(self, user: str, password: str = PASSWORD, **extra: str) -> Any:
        """Post the login form as a browser would (its CSRF cookie and field)."""
        page = self.client.get("/login")
        token = page.text.split('name="csrf" value="')[1].split('"')[0]
        fields = {"user": user, "password": password, "csrf": token, "next": "/", **extra}
        body = "&".join(f"{k}={v}" for k, v in fields.items())
        return self.client.post("/login", content=body, headers=FORM, follow_redirects=False)

    def login(self, user: str) -> str:
        """Log in; returns the session's CSRF token."""
        assert self.login_form(user).status_code == 303
        session = self.ctx.auth.session(self.client.cookies.get("roads_session"))
        assert session is not None
        return session.csrf


SiteFactory = Callable[..., Site]


@pytest.fixture
def make_site(tmp_path: Path) -> Iterator[SiteFactory]:
    """A factory: ``make_site(https=True, client=("10.0.0.1", 4000))`` (SiteConfig fields
    and TestClient's ``client`` address)."""
    clients: list[TestClient] = []

    def make(client: tuple[str, int] = ("testclient", 50000), **site: Any) -> Site:
        app, ctx = create_app(tmp_path / f"store{len(clients)}", SiteConfig(**site))
        for name, role in (("dealer", "dealer"), ("super", "supervisor"),
                           ("auditor", "auditor")):
            ctx.auth.add_user(name, role, PASSWORD)
        # Served over TLS, a browser sends Secure cookies back only to https:// addresses.
        base_url = "https://testserver" if site.get("https") else "http://testserver"
        test = TestClient(app.server, client=client, base_url=base_url,
                          raise_server_exceptions=False)
        test.__enter__()
        clients.append(test)
        return Site(test, ctx, ctx.auth.issue_key("T1"))

    yield make
    for test in clients:
        test.__exit__(None, None, None)


@pytest.fixture
def site(make_site: SiteFactory) -> Site:
    return make_site(casino="Test Casino")


@dataclass
class Socket:
    """A real server on a loopback port."""

    port: int
    ctx: Context
    key: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connect(self, timeout: float = 15) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)


def read_response(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    out = b""
    try:
        while chunk := conn.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out


LiveFactory = Callable[..., Socket]


@pytest.fixture
def make_live(tmp_path: Path) -> Iterator[LiveFactory]:
    """A factory of real servers: uvicorn with ``roads serve``'s options and the given
    SiteConfig fields (users dealer, super and auditor; an API key of table T1)."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def make(**site: Any) -> Socket:
        config = SiteConfig(**site)
        app, ctx = create_app(tmp_path / f"live{len(servers)}", config)
        for name, role in (("dealer", "dealer"), ("super", "supervisor"),
                           ("auditor", "auditor")):
            ctx.auth.add_user(name, role, PASSWORD)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app.server, host="127.0.0.1", port=port,
                                               log_level="error",
                                               **server_options(config.limits)))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread))
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        return Socket(port, ctx, ctx.auth.issue_key("T1"))

    yield make
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=15)


@pytest.fixture
def live(make_live: LiveFactory) -> Socket:
    """A real server with short deadlines (1 s for headers and for a body)."""
    return make_live(limits=Limits(header_seconds=1, body_seconds=1))
