"""Users, sessions, keys and tokens: hashed secrets, roles, expiry, the login limiter,
revocation and disabling, journaling."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from roads.auth import PERMISSIONS, Auth, AuthError, LoginLimits, RateLimited, credential_kind
from roads.store.journal import Journal

PASSWORD = "correct horse battery"


@dataclass
class Clock:
    """A clock the test moves by hand (no sleeping, no timing asserts)."""

    now: datetime = field(default_factory=lambda: datetime(2026, 3, 1, 12, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def auth(tmp_path: Path, clock: Clock) -> Auth:
    return Auth(tmp_path, Journal(tmp_path / "journal.sqlite"), clock=clock)


def _fail(auth: Auth, user: str, address: str, times: int = 1) -> None:
    for _ in range(times):
        with pytest.raises(AuthError, match="wrong user name or password"):
            auth.login(user, "not the password", address)


def test_passwords_keys_and_tokens_are_stored_only_as_hashes(auth: Auth) -> None:
    auth.add_user("ana", "dealer", PASSWORD)
    key, token = auth.issue_key("T7"), auth.issue_token("ana")
    raw = Path(auth.path).read_bytes()
    for wal in Path(auth.path).parent.glob("auth.sqlite-wal"):
        raw += wal.read_bytes()
    for secret in (PASSWORD, key, token):
        assert secret.encode() not in raw
    assert auth.key_table(key) is not None and auth.key_table(key)[0] == "T7"  # type: ignore[index]
    assert auth.key_table(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert (credential_kind(key), credential_kind(token), credential_kind("rk_x")) == \
        ("key", "token", None)


def test_login_gives_a_session_with_the_users_role(auth: Auth) -> None:
    auth.add_user("ana", "supervisor", PASSWORD)
    token, _ = auth.login("ana", PASSWORD, "10.0.0.1")
    again = auth.session(token)
    assert again is not None and (again.user, again.role) == ("ana", "supervisor")
    assert again.can("approve") and not again.can("admin")
    auth.logout(token)
    assert auth.session(token) is None
    kinds = [e.kind for e in auth.journal.events()]
    assert kinds == ["user_added", "login", "logout"]


def test_wrong_password_and_unknown_user_read_the_same_and_are_journaled_in_aggregate(
        auth: Auth) -> None:
    auth.add_user("ana", "dealer", PASSWORD)
    with pytest.raises(AuthError) as wrong:
        auth.login("ana", "not the password", "10.0.0.1")
    with pytest.raises(AuthError) as unknown:
        auth.login("bob", PASSWORD, "10.0.0.1")
    assert str(wrong.value) == str(unknown.value) == "wrong user name or password"
    assert auth.flush_refusals(force=True) == 1
    [event] = [e for e in auth.journal.events() if e.kind == "login_refused"]
    assert event.payload["attempts"] == 2
    assert sorted((s["user"], s["reason"]) for s in event.payload["sources"]) == \
        [("ana", "bad credentials"), ("bob", "bad credentials")]
    assert auth.flush_refusals(force=True) == 0  # journaled once


def test_failures_grow_the_delay_of_one_user_at_one_address_only(auth: Auth,
                                                                  clock: Clock) -> None:
    limits = auth.guard.limits
    auth.add_user("ana", "dealer", PASSWORD)
    _fail(auth, "ana", "10.0.0.9", limits.free_failures)
    with pytest.raises(RateLimited) as limited:
        auth.login("ana", PASSWORD, "10.0.0.9")
    assert limited.value.retry_after == 1
    # The same user from her own terminal is not held back by the guesser.
    assert auth.login("ana", PASSWORD, "10.0.0.1")[1].user == "ana"
    clock.advance(1)
    _fail(auth, "ana", "10.0.0.9")  # the fourth failure: the delay doubles
    clock.advance(1.5)
    with pytest.raises(RateLimited) as again:
        auth.login("ana", PASSWORD, "10.0.0.9")
    assert again.value.retry_after == 1
    # Refused attempts do not extend the delay: it still ends 2 s after the last failure.
    for _ in range(5):
        with pytest.raises(RateLimited):
            auth.login("ana", PASSWORD, "10.0.0.9")
    clock.advance(0.5)
    assert auth.login("ana", PASSWORD, "10.0.0.9")[1].user == "ana"
    # A success forgets that pair's failures.
    _fail(auth, "ana", "10.0.0.9")


def test_delays_double_up_to_the_cap() -> None:
    limits = LoginLimits(free_failures=3, first_delay=timedelta(seconds=1),
                         max_delay=timedelta(minutes=15))
    assert [limits.delay(n).total_seconds() for n in range(7)] == [0, 0, 0, 1, 2, 4, 8]
    assert limits.delay(1000) == timedelta(minutes=15)


def test_an_address_has_a_budget_over_all_user_names(auth: Auth, clock: Clock) -> None:
    auth.add_user("cy", "dealer", PASSWORD)
    budget = auth.guard.limits.address_budget
    for i in range(budget):
        _fail(auth, f"guess{i}", "10.0.0.66")
    with pytest.raises(RateLimited, match="from this address"):
        auth.login("cy", PASSWORD, "10.0.0.66")
    assert auth.login("cy", PASSWORD, "10.0.0.2")[1].user == "cy"
    clock.advance(auth.guard.limits.window.total_seconds())
    assert auth.login("cy", PASSWORD, "10.0.0.66")[1].user == "cy"


def test_refusals_are_journaled_once_per_window_with_their_count(auth: Auth,
                                                                  clock: Clock) -> None:
    for _ in range(7):  # three wrong passwords, then four attempts held back
        with pytest.raises(AuthError):
            auth.login("nobody", "not the password", "10.0.0.5")
        clock.advance(0.1)
    assert auth.flush_refusals() == 0  # the window has not ended
    clock.advance(auth.guard.limits.journal_window.total_seconds())
    auth.flush_refusals()
    [event] = [e for e in auth.journal.events() if e.kind == "login_refused"]
    assert event.payload["attempts"] == 7 and event.payload["window_seconds"] == 60
    assert event.payload["sources"] == [
        {"user": "nobody", "address": "10.0.0.5", "reason": "rate limited", "attempts": 4},
        {"user": "nobody", "address": "10.0.0.5", "reason": "bad credentials", "attempts": 3}]


def test_sessions_expire(auth: Auth, clock: Clock) -> None:
    auth.add_user("ana", "viewer", PASSWORD)
    token, _ = auth.login("ana", PASSWORD)
    past = (clock.now - timedelta(seconds=1)).isoformat()
    with sqlite3.connect(auth.path) as db:
        db.execute("UPDATE sessions SET expires_at = ?", (past,))
    assert auth.session(token) is None


def test_password_change_ends_sessions_and_rules_are_enforced(auth: Auth) -> None:
    auth.add_user("ana", "dealer", PASSWORD)
    token, _ = auth.login("ana", PASSWORD)
    auth.set_password("ana", "another long password")
    assert auth.session(token) is None
    with pytest.raises(AuthError, match="at least 10"):
        auth.add_user("bob", "dealer", "short")
    with pytest.raises(AuthError, match="unknown role"):
        auth.add_user("bob", "croupier", PASSWORD)
    with pytest.raises(AuthError, match="already exists"):
        auth.add_user("ana", "dealer", PASSWORD)
    for bad in ("=cmd", "-x", "a b", "x" * 65, ""):
        with pytest.raises(AuthError, match="user name"):
            auth.add_user(bad, "dealer", PASSWORD)
    auth.add_user("Νίκος", "viewer", PASSWORD)


def test_a_personal_token_carries_its_users_role_until_revoked(auth: Auth) -> None:
    auth.add_user("sam", "supervisor", PASSWORD)
    token = auth.issue_token("sam")
    session = auth.token_session(token)
    assert session is not None and (session.user, session.role, session.csrf) == \
        ("sam", "supervisor", "")
    assert auth.key_table(token) is None and auth.bearer_known(token)
    token_id = token.split("_")[1]
    assert auth.revoke(token_id, by="admin") == "token"
    assert auth.token_session(token) is None and not auth.bearer_known(token)
    with pytest.raises(AuthError, match="already revoked"):
        auth.revoke(token_id)
    kinds = [(e.kind, e.actor) for e in auth.journal.events()][-2:]
    assert kinds == [("token_issued", "cli"), ("token_revoked", "admin")]


def test_tokens_expire_and_need_a_known_enabled_user(auth: Auth, clock: Clock) -> None:
    auth.add_user("sam", "dealer", PASSWORD)
    token = auth.issue_token("sam", days=1)
    clock.advance(86_400)
    assert auth.token_session(token) is None
    with pytest.raises(AuthError, match="no user"):
        auth.issue_token("nobody")
    with pytest.raises(AuthError, match="1 to 366 days"):
        auth.issue_token("sam", days=0)


def test_revoking_a_key_by_its_id(auth: Auth) -> None:
    key = auth.issue_key("T1")
    assert auth.revoke(key.split("_")[1]) == "key"
    assert auth.key_table(key) is None and not auth.bearer_known(key)
    with pytest.raises(AuthError, match="no API key or personal token"):
        auth.revoke("00000000")
    [revoked] = [e for e in auth.journal.events() if e.kind == "api_key_revoked"]
    assert revoked.table_id == "T1"
    assert [(c["kind"], c["revoked"]) for c in auth.credentials()] == [("key", True)]


def test_disabling_a_user_ends_sessions_and_tokens_at_once(auth: Auth) -> None:
    auth.add_user("ana", "dealer", PASSWORD)
    session, _ = auth.login("ana", PASSWORD)
    token = auth.issue_token("ana")
    auth.disable_user("ana", by="admin")
    assert auth.session(session) is None and auth.token_session(token) is None
    with pytest.raises(AuthError, match="wrong user name or password"):
        auth.login("ana", PASSWORD)
    with pytest.raises(AuthError, match="is disabled"):
        auth.issue_token("ana")
    auth.enable_user("ana")
    assert auth.login("ana", PASSWORD)[1].user == "ana"
    assert auth.token_session(token) is None  # a revoked token stays revoked
    changes = [e.payload for e in auth.journal.events() if e.kind == "user_changed"]
    assert changes == [{"user": "ana", "change": "disabled", "sessions_ended": 1,
                        "tokens_revoked": 1}, {"user": "ana", "change": "enabled"}]
    with pytest.raises(AuthError, match="no user"):
        auth.disable_user("nobody")


def test_roles_separate_entry_approval_and_audit() -> None:
    assert "approve" not in PERMISSIONS["dealer"] and "enter" in PERMISSIONS["dealer"]
    assert "enter" not in PERMISSIONS["viewer"] and "enter" not in PERMISSIONS["auditor"]
    assert "audit" in PERMISSIONS["auditor"] and "audit" not in PERMISSIONS["supervisor"]
