"""A Dash callback (and an API read) whose store is busy answers 503 with Retry-After and a
line saying so, not a 500. The errors are real ones: a hung writer's JournalBusy, and
SQLite's own "database is locked", from a database another connection holds exclusively
(read where the callback reads, without a busy timeout, so the test need not wait
SQLite's 30 s; the journal itself, in WAL mode with the server's connections open, cannot
be taken exclusively from outside)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import dashboard.pages as pages
from roads.errors import JournalBusy
from tests.dashboard.conftest import Server


def _table_update(table_id: str = "T1") -> bytes:
    return json.dumps({
        "output": "..table-body.children...table-seq.data..",
        "outputs": [{"id": "table-body", "property": "children"},
                    {"id": "table-seq", "property": "data"}],
        "inputs": [{"id": "table-tick", "property": "n_intervals", "value": 1}],
        "state": [{"id": "table-id", "property": "data", "value": table_id},
                  {"id": "table-seq", "property": "data", "value": None}],
        "changedPropIds": []}).encode()


def _post(server: Server) -> Any:
    return server.client.post("/_dash-update-component", content=_table_update(),
                              headers={"content-type": "application/json"})


@contextmanager
def held_exclusively(path: Path) -> Iterator[None]:
    """A SQLite database at ``path`` that another connection holds exclusively."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE IF NOT EXISTS events (seq INTEGER)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _locked_read(path: Path) -> None:
    """A read of ``path`` that finds it locked (SQLite's own error, at once)."""
    reader = sqlite3.connect(path, timeout=0)
    try:
        reader.execute("SELECT count(*) FROM events").fetchone()
    finally:
        reader.close()


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    with held_exclusively(tmp_path / "held.sqlite"):
        yield tmp_path / "held.sqlite"


def test_a_table_page_refresh_behind_a_locked_store_is_a_503(
        server: Server, monkeypatch: pytest.MonkeyPatch, locked: Path) -> None:
    assert _post(server).status_code == 200
    real, held = pages.table_refresh, [True]

    def refresh(*args: Any) -> Any:
        if held:
            _locked_read(locked)
        return real(*args)

    monkeypatch.setattr(pages, "table_refresh", refresh)
    r = _post(server)
    assert r.status_code == 503, r.text
    assert int(r.headers["Retry-After"]) >= 1
    assert r.json()["detail"].startswith("the store is busy") and "locked" in r.json()["detail"]
    held.clear()
    assert _post(server).status_code == 200  # the lock let go, the page refreshes


def test_a_callback_meeting_a_hung_writer_is_a_503(server: Server,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def refresh(*args: Any) -> Any:
        raise JournalBusy("the journal is busy: a writer ahead of this one has not let its "
                          "queue go; try again shortly", 1)

    monkeypatch.setattr(pages, "table_refresh", refresh)
    r = _post(server)
    assert r.status_code == 503 and r.headers["Retry-After"] == "1"
    assert "journal is busy" in r.json()["detail"]


def test_a_503_tells_the_client_neither_the_lock_path_nor_its_holder(
        server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
        ) -> None:
    def refresh(*args: Any) -> Any:
        raise JournalBusy("the journal is busy: a writer ahead of this one has not let its "
                          "queue go (/srv/casino/store/journal.sqlite.lock) (held by process "
                          "4711: roads ingest /srv/casino/vip/2026-12-01.csv); try again "
                          "shortly", 1)

    monkeypatch.setattr(pages, "table_refresh", refresh)
    with caplog.at_level("WARNING", logger="dashboard.app"):
        r = _post(server)
    assert r.status_code == 503
    assert r.json()["detail"] == ("the journal is busy: a writer ahead of this one has not "
                                  "let its queue go; try again shortly")
    assert "4711: roads ingest /srv/casino/vip" in caplog.text  # the operator's log has it


def test_an_api_read_behind_a_locked_store_is_a_503(
        server: Server, monkeypatch: pytest.MonkeyPatch, locked: Path) -> None:
    service = server.ctx.service
    real = service.table_state

    def state(*args: Any, **kwargs: Any) -> Any:
        _locked_read(locked)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "table_state", state)
    r = server.client.get("/api/tables/T1/board")
    assert r.status_code == 503, r.text
    assert "the store is busy" in r.json()["detail"]


def test_another_operational_error_is_still_the_server_s(server: Server,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def refresh(*args: Any) -> Any:
        raise sqlite3.OperationalError("no such table: nope")

    monkeypatch.setattr(pages, "table_refresh", refresh)
    r = _post(server)
    assert r.status_code == 500
