"""Account changes killed between their journal event and their row in ``auth.sqlite``
(injected kill point ``accounts:journaled``): `roads store verify` names the one-sided state
as an interrupted write, not as a row no event made, and the next run of the command
completes it (an issued key or token nobody saw is closed as abandoned)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roads.auth import Auth, AuthError
from roads.store import Store
from roads.store.verify import cheap_problems, verify

PASSWORD = "correct horse battery"
OTHER = "another fine password"

RUN = """
import sys
from pathlib import Path
from roads.auth import Auth
from roads.store import Store
root, what, arg = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
auth = Auth(root, Store.open(root).journal)
if what == "add":
    auth.add_user(arg, "dealer", "correct horse battery")
elif what == "passwd":
    auth.set_password(arg, "another fine password")
elif what == "disable":
    auth.disable_user(arg)
elif what == "enable":
    auth.enable_user(arg)
elif what == "key":
    auth.issue_key(arg)
elif what == "token":
    auth.issue_token(arg)
else:
    auth.revoke(arg)
"""


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two users (vic disabled), a key of table T1, a token of ana."""
    root = tmp_path_factory.mktemp("accounts") / "store"
    store = Store.create(root)
    auth = Auth(root, store.journal)
    auth.add_user("ana", "supervisor", PASSWORD)
    auth.add_user("vic", "viewer", PASSWORD)
    auth.disable_user("vic")
    auth.issue_key("T1")
    auth.issue_token("ana")
    assert verify(store).ok
    store.journal.close()
    return root


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    shutil.copytree(pristine, tmp_path / "store")
    return tmp_path / "store"


def _killed(root: Path, what: str, arg: str) -> None:
    env = {**os.environ, "ROADS_KILL_AT": "accounts:journaled"}
    done = subprocess.run([sys.executable, "-c", RUN, str(root), what, arg], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr  # killed between the event and the row


def _interrupted(store: Store, where: str, kind: str, also: tuple[str, ...] = ()) -> None:
    """The partial state: the row (and ``also``: rows the same event changes, by prefix)
    named as left by an interrupted write of the last event, and nothing else, by `store
    verify` and `store info` alike."""
    problems = verify(store).problems
    last = store.journal.events()[-1]
    assert last.kind == kind
    assert [p["where"] for p in problems][:1] == [f"auth.sqlite {where}"]
    assert len(problems) == 1 + len(also)
    for problem, prefix in zip(problems[1:], also, strict=True):
        assert problem["where"].startswith(f"auth.sqlite {prefix}")
    for problem in problems:
        assert problem["kind"] == "accounts"
        assert problem["detail"].startswith(
            f"left by a write interrupted between its journal event {last.seq} ({kind})")
    assert cheap_problems(store) == problems


def _key_id(secret: str) -> str:
    return secret[3:11]


def test_a_user_add_killed_is_named_and_completed_by_running_it_again(root: Path) -> None:
    _killed(root, "add", "eve")
    store = Store.open(root)
    _interrupted(store, "users name=eve", "user_added")
    auth = Auth(root, store.journal)
    with pytest.raises(AuthError):
        auth.login("eve", PASSWORD)  # no row: no such user yet
    auth.add_user("eve", "dealer", PASSWORD)
    assert verify(store).ok
    assert auth.login("eve", PASSWORD)[1].role == "dealer"


def test_a_password_change_killed_keeps_the_old_one_until_run_again(root: Path) -> None:
    _killed(root, "passwd", "ana")
    store = Store.open(root)
    _interrupted(store, "users name=ana", "user_changed")
    auth = Auth(root, store.journal)
    assert auth.login("ana", PASSWORD)[1].user == "ana"  # the row is as it was
    auth.set_password("ana", OTHER)
    assert verify(store).ok
    assert auth.login("ana", OTHER)[1].user == "ana"


@pytest.mark.parametrize(("what", "user", "disabled"), [("disable", "ana", True),
                                                        ("enable", "vic", False)])
def test_a_disable_or_enable_killed_is_completed_by_running_it_again(
        root: Path, what: str, user: str, disabled: bool) -> None:
    _killed(root, what, user)
    store = Store.open(root)
    # (disabling ana revokes her token in the same row write)
    _interrupted(store, f"users name={user}", "user_changed", ("tokens",) if disabled else ())
    auth = Auth(root, store.journal)
    (auth.disable_user if disabled else auth.enable_user)(user)
    assert verify(store).ok
    assert {u["name"]: u["disabled"] for u in auth.users()}[user] is disabled


@pytest.mark.parametrize(("what", "owner", "table"), [("key", "T1", "api_keys"),
                                                      ("token", "ana", "tokens")])
def test_an_issue_killed_is_closed_by_the_next_issue(root: Path, what: str, owner: str,
                                                     table: str) -> None:
    """The secret was never shown: the next issue for that table (or user) journals the
    lost one as revoked, abandoned, and its own is stored."""
    _killed(root, what, owner)
    store = Store.open(root)
    issued = store.journal.events()[-1]
    lost = issued.payload["key_id" if what == "key" else "token_id"]
    _interrupted(store, f"{table} {'key_id' if what == 'key' else 'token_id'}={lost}",
                 issued.kind)
    auth = Auth(root, store.journal)
    fresh = auth.issue_key(owner) if what == "key" else auth.issue_token(owner)
    assert verify(store).ok, verify(store).problems
    closing = store.journal.events()[-2]
    assert closing.kind.endswith("_revoked") and closing.payload["abandoned"] is True
    assert auth.bearer_known(fresh)
    assert lost not in {c["id"] for c in auth.credentials()}


def test_a_revoke_killed_is_named_and_completed_by_running_it_again(root: Path) -> None:
    store = Store.open(root)
    key = Auth(root, store.journal).issue_key("T2")
    _killed(root, "revoke", _key_id(key))
    _interrupted(store, f"api_keys key_id={_key_id(key)}", "api_key_revoked")
    auth = Auth(root, store.journal)
    assert auth.revoke(_key_id(key)) == "key"
    assert verify(store).ok and not auth.bearer_known(key)


def test_a_row_changed_by_hand_is_still_named_as_such(root: Path) -> None:
    """Only a row whose last event is not recorded as applied reads as interrupted: the
    same row put back by hand after a complete revoke is tampering."""
    import sqlite3

    store = Store.open(root)
    auth = Auth(root, store.journal)
    key = auth.issue_key("T3")
    auth.revoke(_key_id(key))
    db = sqlite3.connect(root / "auth.sqlite")
    with db:
        db.execute("UPDATE api_keys SET revoked = 0 WHERE key_id = ?", (_key_id(key),))
    db.close()
    [problem] = verify(store).problems
    assert "revoked is 0, the journal says 1" in problem["detail"]
