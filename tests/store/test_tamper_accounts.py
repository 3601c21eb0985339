"""Tampering with the accounts beside the journal: a changed role, table, expiry or revoked
flag in ``auth.sqlite``, or a row no event made, is named by `roads store verify` (one byte
there could make a viewer an approver)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from roads.auth import Auth
from roads.store import Store
from roads.store.verify import cheap_problems, verify
from tests.store.rechain import rechain

PASSWORD = "correct horse battery"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """Three users (one disabled, whose token was revoked with it), a live and a revoked
    key, a live token."""
    s = Store.create(tmp_path / "store")
    auth = Auth(s.root, s.journal)
    for name, role in (("ana", "supervisor"), ("vic", "viewer"), ("dan", "dealer")):
        auth.add_user(name, role, PASSWORD)
    auth.issue_key("T01")
    auth.revoke(auth.issue_key("T02")[3:11])
    auth.issue_token("vic")
    auth.issue_token("dan")
    auth.disable_user("dan")
    auth.enable_user("dan")
    return s


def _edit(store: Store, sql: str) -> None:
    db = sqlite3.connect(store.root / "auth.sqlite")
    with db:
        db.execute(sql)
    db.close()


def _accounts(store: Store) -> list[dict[str, str]]:
    return [p for p in verify(store).problems if p["kind"] == "accounts"]


def test_accounts_made_through_the_journal_verify(store: Store) -> None:
    assert verify(store).ok
    assert cheap_problems(store) == []


@pytest.mark.parametrize(("sql", "where", "words"), [
    ("UPDATE users SET role = 'supervisor' WHERE name = 'vic'", "users name=vic",
     "role is 'supervisor', the journal says 'viewer'"),
    ("UPDATE users SET disabled = 1 WHERE name = 'ana'", "users name=ana", "disabled is 1"),
    ("UPDATE api_keys SET revoked = 0", "api_keys key_id=", "revoked is 0"),
    ("UPDATE api_keys SET table_id = 'T09' WHERE table_id = 'T01'", "api_keys key_id=",
     "table_id is 'T09', the journal says 'T01'"),
    ("UPDATE tokens SET expires_at = '2099-01-01T00:00:00+00:00' WHERE name = 'vic'",
     "tokens token_id=", "expires_at is '2099-01-01T00:00:00+00:00'"),
    ("UPDATE tokens SET revoked = 0 WHERE name = 'dan'", "tokens token_id=", "revoked is 0"),
    ("INSERT INTO users SELECT 'eve', 'admin', salt, hash, created_at, 0 FROM users "
     "WHERE name = 'ana'", "users name=eve", "no journal event made this row"),
    ("DELETE FROM users WHERE name = 'ana'", "users name=ana", "it is not there"),
])
def test_a_changed_account_row_is_named(store: Store, sql: str, where: str,
                                        words: str) -> None:
    _edit(store, sql)
    [problem] = _accounts(store)
    assert problem["where"].startswith(f"auth.sqlite {where}")
    assert words in problem["detail"]
    assert [p["kind"] for p in cheap_problems(store)] == ["accounts"]  # store info too


def test_a_deleted_account_database_is_named(store: Store) -> None:
    for suffix in ("", "-wal", "-shm"):
        (store.root / f"auth.sqlite{suffix}").unlink(missing_ok=True)
    assert {p["where"] for p in _accounts(store)} >= {"auth.sqlite users name=ana",
                                                      "auth.sqlite users name=vic"}


@pytest.mark.parametrize(("sql", "where"), [
    # a viewer copies their own password hash onto a supervisor, then logs in as them
    ("UPDATE users SET salt = (SELECT salt FROM users WHERE name = 'vic'), "
     "hash = (SELECT hash FROM users WHERE name = 'vic') WHERE name = 'ana'", "users name=ana"),
    # a key's hash replaced by the hash of a secret the forger holds
    ("UPDATE api_keys SET key_hash = '" + "0" * 64 + "' WHERE table_id = 'T01'",
     "api_keys key_id="),
    ("UPDATE tokens SET token_hash = '" + "0" * 64 + "' WHERE name = 'vic'",
     "tokens token_id="),
])
def test_a_replaced_credential_is_named(store: Store, sql: str, where: str) -> None:
    _edit(store, sql)
    [problem] = _accounts(store)
    assert problem["where"].startswith(f"auth.sqlite {where}")
    assert "stored credential" in problem["detail"]


def test_a_changed_password_is_journaled_with_its_credential(store: Store) -> None:
    Auth(store.root, store.journal).set_password("vic", "another good password")
    assert verify(store).ok
    _edit(store, "UPDATE users SET hash = (SELECT hash FROM users WHERE name = 'ana') "
                 "WHERE name = 'vic'")
    assert [p["where"] for p in _accounts(store)] == ["auth.sqlite users name=vic"]


def test_accounts_journaled_before_credentials_were_still_verify(store: Store) -> None:
    """A store written before the events carried credential digests: its rows are checked
    for role and flags, and their credentials are not judged."""
    db = sqlite3.connect(store.root / "auth.sqlite")
    with db:
        db.execute("INSERT INTO users SELECT 'old', 'dealer', salt, hash, created_at, 0 "
                   "FROM users WHERE name = 'dan'")
    db.close()
    store.journal.append("user_added", "*", None, {"user": "old", "role": "dealer"}, "cli")
    assert verify(store).ok


@pytest.mark.parametrize("sql", [
    "INSERT INTO sessions VALUES ('planted', 'ana', 'csrf', '2099-01-01T00:00:00+00:00')",
    "UPDATE sessions SET name = 'ana' WHERE name = 'vic'",
    "UPDATE sessions SET expires_at = '2099-01-01T00:00:00+00:00'",
])
def test_a_planted_or_changed_session_is_named(store: Store, sql: str) -> None:
    """A session row is a login's: planting one (or handing a viewer's to a supervisor,
    or making it last for ever) would let its bearer act unnoticed."""
    Auth(store.root, store.journal).login("vic", PASSWORD)
    assert verify(store).ok  # a real login's session verifies
    _edit(store, sql)
    [problem] = _accounts(store)
    assert problem["where"].startswith("auth.sqlite sessions name=")
    assert "no login event recorded this session" in problem["detail"]


def test_a_session_of_a_login_journaled_without_its_digest_is_trusted_while_it_lasts(
        store: Store) -> None:
    """Stores from before the digest: a session an older login could have made verifies
    until it could have expired; one lasting longer is named."""
    Auth(store.root, store.journal).login("vic", PASSWORD)
    [login] = store.journal.of_kinds(("login",))
    # the older format, as that code wrote it (re-chained, so the chain holds)
    rechain(store.root / "journal.sqlite", store.journal.events(), login,
            {k: v for k, v in login.payload.items() if k != "credential"})
    assert _accounts(store) == []
    _edit(store, "UPDATE sessions SET expires_at = '2099-01-01T00:00:00+00:00'")
    assert [p["where"] for p in _accounts(store)] == ["auth.sqlite sessions name=vic"]


def test_a_session_moved_to_a_user_whose_name_prefixes_its_own_is_named(store: Store) -> None:
    """Characters moved from the name into the CSRF token (victor -> vic + tor...) keep
    the concatenated fields the same: the digest is of each field on its own."""
    auth = Auth(store.root, store.journal)
    auth.add_user("victor", "viewer", PASSWORD)
    auth.login("victor", PASSWORD)
    assert verify(store).ok
    _edit(store, "UPDATE sessions SET name = 'vic', csrf = 'tor' || csrf "
                 "WHERE name = 'victor'")
    assert [p["where"] for p in _accounts(store)] == ["auth.sqlite sessions name=vic"]


def test_a_session_put_back_after_its_logout_is_named(store: Store) -> None:
    auth = Auth(store.root, store.journal)
    token, _ = auth.login("vic", PASSWORD)
    db = sqlite3.connect(store.root / "auth.sqlite")
    [row] = db.execute("SELECT * FROM sessions").fetchall()
    db.close()
    auth.logout(token)
    assert verify(store).ok
    _edit(store, "INSERT INTO sessions VALUES ('{}', '{}', '{}', '{}')".format(*row))
    [problem] = _accounts(store)
    assert "logged out" in problem["detail"]


def test_a_credential_of_the_wrong_type_is_named_not_a_crash(store: Store) -> None:
    _edit(store, "UPDATE users SET salt = 5 WHERE name = 'ana'")
    [problem] = _accounts(store)
    assert problem["where"] == "auth.sqlite users name=ana"
    assert "stored credential" in problem["detail"]
    assert [p["kind"] for p in cheap_problems(store)] == ["accounts"]
