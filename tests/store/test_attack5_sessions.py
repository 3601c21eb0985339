"""A session ended without a logout (a password change, or disabling the user: the usual
answer to a stolen session) and then put back into ``auth.sqlite`` is named by
`roads store verify`, as one put back after its logout is; sessions of later logins, and
other users' sessions, still verify."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from roads.auth import Auth
from roads.store import Store
from roads.store.verify import verify

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new password"


def _reset_password(auth: Auth) -> str:
    auth.set_password("sue", NEW_PASSWORD)
    return NEW_PASSWORD


def _disable_and_enable(auth: Auth) -> str:
    auth.disable_user("sue")
    auth.enable_user("sue")
    return PASSWORD


@pytest.mark.parametrize("end", [_reset_password, _disable_and_enable])
def test_a_session_put_back_after_its_user_was_reset_is_named(
        tmp_path: Path, end: Callable[[Auth], str]) -> None:
    store = Store.create(tmp_path / "store")
    auth = Auth(store.root, store.journal)
    auth.add_user("sue", "supervisor", PASSWORD)
    auth.add_user("ann", "auditor", PASSWORD)
    stolen, _ = auth.login("sue", PASSWORD)
    auth.login("ann", PASSWORD)
    db = sqlite3.connect(store.root / "auth.sqlite")
    [row] = db.execute("SELECT * FROM sessions WHERE name = 'sue'").fetchall()
    db.close()
    password = end(auth)
    again, _ = auth.login("sue", password)
    assert auth.session(stolen) is None and verify(store).ok
    db = sqlite3.connect(store.root / "auth.sqlite")
    with db:
        db.execute("INSERT INTO sessions VALUES (?,?,?,?)", row)
    db.close()
    assert auth.session(stolen) is not None  # the row alone makes it work again...
    problems = [p for p in verify(store).problems if p["kind"] == "accounts"]
    assert [p["where"] for p in problems] == ["auth.sqlite sessions name=sue"]  # ...named
    assert auth.session(again) is not None
