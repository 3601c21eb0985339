"""A busy ``logins.sqlite`` (or ``auth.sqlite`` under a logout) is JournalBusy within the
journal's ``queue_wait``, as a busy ``auth.sqlite`` already was for logins and account
changes. Before, the login limiter's connection waited SQLite's 30 s busy timeout and
then raised "database is locked" (a 500); a logout's delete did the same."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from roads.auth import Auth, AuthError
from roads.errors import JournalBusy
from roads.store.journal import Journal
from tests.dashboard.conftest import PASSWORD, Server
from tests.hung_writer import returns

WAIT = 0.3


@contextmanager
def write_locked(path: Path) -> Iterator[None]:
    """``path``'s SQLite write lock held by another connection until the block ends."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def auth(tmp_path: Path, clock: Clock) -> Auth:
    auth = Auth(tmp_path, Journal(tmp_path / "journal.sqlite", queue_wait=WAIT), clock=clock)
    auth.add_user("ana", "dealer", PASSWORD)
    return auth


def _busy(outcome: object, where: str) -> None:
    assert isinstance(outcome, JournalBusy), outcome
    assert where in str(outcome) and "busy" in str(outcome)
    assert outcome.retry_after >= 1


def test_a_wrong_password_behind_a_busy_limiter_is_journal_busy(auth: Auth) -> None:
    with write_locked(auth.guard.path):
        _busy(returns(lambda: auth.login("ana", "not her password")), "logins.sqlite")
    with pytest.raises(AuthError):  # the lock let go: counted and refused as usual
        auth.login("ana", "not her password")
    assert auth.flush_refusals(force=True) == 1


def test_a_right_password_behind_a_busy_limiter_is_journal_busy(auth: Auth) -> None:
    with write_locked(auth.guard.path):
        _busy(returns(lambda: auth.login("ana", PASSWORD)), "logins.sqlite")
    assert not [e for e in auth.journal.events() if e.kind == "login"]  # no half login
    token, session = auth.login("ana", PASSWORD)
    assert session.user == "ana" and auth.session(token) is not None


def test_a_rate_limited_refusal_and_a_flush_behind_a_busy_limiter(auth: Auth) -> None:
    for _ in range(auth.guard.limits.free_failures):
        with pytest.raises(AuthError):
            auth.login("ana", "guess", "10.0.0.9")
    with write_locked(auth.guard.path):
        _busy(returns(lambda: auth.login("ana", "guess", "10.0.0.9")), "logins.sqlite")
        _busy(returns(lambda: auth.flush_refusals(force=True)), "logins.sqlite")
    assert auth.flush_refusals(force=True) == 1  # every refusal still journaled, once


def test_a_logout_behind_a_busy_accounts_lock_leaves_the_session(auth: Auth) -> None:
    token, _ = auth.login("ana", PASSWORD)
    with write_locked(auth.path):
        _busy(returns(lambda: auth.logout(token)), "auth.sqlite")
    assert auth.session(token) is not None  # not ended: the 503 asks to try again
    auth.logout(token)
    assert auth.session(token) is None
    assert [e.kind for e in auth.journal.events()][-1] == "logout"


def test_an_expired_session_is_refused_without_waiting_for_a_busy_lock(
        auth: Auth, clock: Clock) -> None:
    token, _ = auth.login("ana", PASSWORD)
    clock.now += timedelta(days=30)
    with write_locked(auth.path):
        assert returns(lambda: auth.session(token)) is None  # not raised, not deleted
    assert auth._db().execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    assert auth.session(token) is None  # the lock let go: the row is removed
    assert auth._db().execute("SELECT count(*) FROM sessions").fetchone() == (0,)


def test_a_login_form_behind_a_busy_limiter_is_a_503_with_retry_after(server: Server) -> None:
    server.ctx.auth.journal.queue_wait = WAIT
    page = server.client.get("/login")
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    with write_locked(server.ctx.auth.guard.path):
        r = server.client.post("/login", content=f"user=dealer&password={PASSWORD}"
                               f"&csrf={token}&next=/",
                               headers={"content-type": "application/x-www-form-urlencoded"},
                               follow_redirects=False)
    assert r.status_code == 503, r.text
    assert int(r.headers["Retry-After"]) >= 1 and "login limiter" in r.json()["detail"]
    server.login("dealer")  # the lock let go, the same login goes through
