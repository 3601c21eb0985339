"""Users, sessions and keys: hashed secrets, roles, expiry, rate limiting, journaling."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from roads.auth import MAX_FAILURES, PERMISSIONS, Auth, AuthError, RateLimited
from roads.store.journal import Journal

PASSWORD = "correct horse battery"


@pytest.fixture
def auth(tmp_path: Path) -> Auth:
    return Auth(tmp_path, Journal(tmp_path / "journal.sqlite"))


def test_passwords_and_keys_are_stored_only_as_hashes(auth: Auth) -> None:
    auth.add_user("ana", "dealer", PASSWORD)
    key = auth.issue_key("T7")
    raw = Path(auth.path).read_bytes()
    for wal in Path(auth.path).parent.glob("auth.sqlite-wal"):
        raw += wal.read_bytes()
    assert PASSWORD.encode() not in raw and key.encode() not in raw
    assert auth.key_table(key) is not None and auth.key_table(key)[0] == "T7"  # type: ignore[index]
    assert auth.key_table(key + "x") is None


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


def test_wrong_password_and_unknown_user_read_the_same(auth: Auth) -> None:
    auth.add_user("ana", "dealer", PASSWORD)
    with pytest.raises(AuthError) as wrong:
        auth.login("ana", "not the password")
    with pytest.raises(AuthError) as unknown:
        auth.login("bob", PASSWORD)
    assert str(wrong.value) == str(unknown.value) == "wrong user name or password"
    failed = [e for e in auth.journal.events() if e.kind == "login_failed"]
    assert [e.payload["user"] for e in failed] == ["ana", "bob"]


def test_failed_logins_are_rate_limited_even_with_the_right_password(auth: Auth) -> None:
    auth.add_user("ana", "dealer", PASSWORD)
    for _ in range(MAX_FAILURES):
        with pytest.raises(AuthError):
            auth.login("ana", "guess", "10.0.0.9")
    with pytest.raises(RateLimited):
        auth.login("ana", PASSWORD, "10.0.0.1")
    # The address is limited too, whatever user name it tries next.
    auth.add_user("cy", "dealer", PASSWORD)
    with pytest.raises(RateLimited):
        auth.login("cy", PASSWORD, "10.0.0.9")
    assert auth.login("cy", PASSWORD, "10.0.0.2")[1].user == "cy"


def test_sessions_expire(auth: Auth) -> None:
    auth.add_user("ana", "viewer", PASSWORD)
    token, _ = auth.login("ana", PASSWORD)
    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
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


def test_roles_separate_entry_approval_and_audit() -> None:
    assert "approve" not in PERMISSIONS["dealer"] and "enter" in PERMISSIONS["dealer"]
    assert "enter" not in PERMISSIONS["viewer"] and "enter" not in PERMISSIONS["auditor"]
    assert "audit" in PERMISSIONS["auditor"] and "audit" not in PERMISSIONS["supervisor"]
