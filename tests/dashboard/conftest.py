"""An in-process server (FastAPI TestClient) over a fresh store, with users and a key."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dashboard.app import create_app
from dashboard.config import SiteConfig, TableConfig
from dashboard.context import Context

PASSWORD = "correct horse battery"


@dataclass
class Server:
    client: TestClient
    ctx: Context
    key: str  # API key of table T1

    def login(self, user: str, password: str = PASSWORD) -> str:
        """Log ``user`` in through the form; returns the session's CSRF token."""
        page = self.client.get("/login")
        token = page.text.split('name="csrf" value="')[1].split('"')[0]
        r = self.client.post("/login", content=f"user={user}&password={password}&csrf={token}"
                             "&next=/", headers={"content-type":
                                                 "application/x-www-form-urlencoded"},
                             follow_redirects=False)
        assert r.status_code == 303
        session = self.ctx.auth.session(self.client.cookies.get("roads_session"))
        assert session is not None, r.headers.get("location")
        return session.csrf


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    site = SiteConfig(casino="Test Casino", tables={
        "T1": TableConfig("T1", "Salon 1", min_bet=100, max_bet=10000, currency="EUR")})
    app, ctx = create_app(tmp_path / "store", site)
    for name, role in (("dealer", "dealer"), ("super", "supervisor"), ("viewer", "viewer"),
                       ("auditor", "auditor")):
        ctx.auth.add_user(name, role, PASSWORD)
    key = ctx.auth.issue_key("T1")
    with TestClient(app.server) as client:
        yield Server(client, ctx, key)
