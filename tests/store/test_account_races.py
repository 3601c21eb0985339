"""Account writes racing each other: two adds of one user name, or two token issues for
one user, at once. The check (no such user; no issue left half-done) and the change it
allows must hold one write lock on ``auth.sqlite``, so the loser is told the truth and the
journal records only what the rows say (``roads store verify`` finds nothing)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from roads import auth as auth_module
from roads import faults
from roads.auth import Auth, AuthError
from roads.errors import JournalBusy
from roads.store import Store
from roads.store.accounts import disagreements
from tests.hung_writer import hung_writer

PASSWORD = "correct horse battery"


def _race(*calls: Callable[[], object]) -> list[object]:
    """Run the calls in threads released together; each one's result or exception."""
    start = threading.Barrier(len(calls))
    outcome: list[object] = [None] * len(calls)

    def run(i: int) -> None:
        start.wait()
        try:
            outcome[i] = calls[i]()
        except Exception as exc:  # the outcome is what the test judges
            outcome[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return outcome


def test_two_adds_of_one_name_at_once_one_wins_and_the_other_is_told(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both adds reach the (slow) password hash before either writes: the one that loses
    must hear ``already exists`` and journal nothing. Before the fix both passed the
    check, both journaled ``user_added``, and the loser died on SQLite's key constraint
    with the journal's last word on the user's credential being the loser's."""
    store = Store.create(tmp_path / "store")
    auth = Auth(store.root, store.journal)
    both_hashing = threading.Barrier(2, timeout=60)
    real_hash = auth_module.hash_password

    def hash_together(password: str, salt: bytes) -> bytes:
        both_hashing.wait()
        return real_hash(password, salt)

    monkeypatch.setattr(auth_module, "hash_password", hash_together)
    outcome = _race(lambda: auth.add_user("ana", "dealer", PASSWORD),
                    lambda: auth.add_user("ana", "viewer", PASSWORD))
    assert sorted(type(o).__name__ for o in outcome) == ["AuthError", "NoneType"]
    [lost] = [o for o in outcome if isinstance(o, AuthError)]
    assert "'ana' already exists" in str(lost)
    [added] = [e for e in store.journal.events() if e.kind == "user_added"]
    assert [u["role"] for u in auth.users()] == [added.payload["role"]]
    assert disagreements(store.root, store.journal.events) == []


def test_two_token_issues_at_once_both_tokens_are_the_journals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One issue stops between its journal event and its row until the other has run
    (or has waited 3 s: with the lock it cannot run). Before the fix the other took the
    first's event for one a killed issue left and journaled it abandoned, while the first
    went on to store, and hand out, the token the journal says was never stored."""
    store = Store.create(tmp_path / "store")
    auth = Auth(store.root, store.journal)
    auth.add_user("sam", "supervisor", PASSWORD)
    second_done = threading.Event()
    real_point = faults.point

    def pause_first(name: str) -> None:
        if threading.current_thread().name == "first" and name == "accounts:journaled":
            second_done.wait(3)
        real_point(name)

    monkeypatch.setattr(faults, "point", pause_first)
    tokens: dict[str, str] = {}

    def issue(name: str) -> None:
        tokens[name] = auth.issue_token("sam")
        if name == "second":
            second_done.set()

    first = threading.Thread(target=issue, args=("first",), name="first")
    first.start()
    while not store.journal.of_kinds(("token_issued",)):
        threading.Event().wait(0.01)  # the first has journaled its issue
    second = threading.Thread(target=issue, args=("second",), name="second")
    second.start()
    first.join(120)
    second.join(120)
    assert set(tokens) == {"first", "second"}
    assert all(auth.token_session(t) is not None for t in tokens.values())
    kinds = [e.kind for e in store.journal.events() if e.kind.startswith("token")]
    assert kinds == ["token_issued", "token_issued"]
    assert disagreements(store.root, store.journal.events) == []


def test_logins_behind_a_hung_journal_writer_all_end_busy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shift change behind a hung journal writer: the logins queue on ``auth.sqlite``'s
    write lock while the one holding it waits for the journal's writers' queue. One
    deadline bounds both waits, so every login ends in JournalBusy (503, or one line on
    the CLI). Before the fix each holder waited a whole ``queue_wait`` in turn, and the
    logins still queued when the connection's 30 s busy timeout ran out died on SQLite's
    "database is locked" (a 500): hence more logins than 30 s / ``queue_wait``."""
    monkeypatch.setattr(auth_module, "SCRYPT_N", 2)  # cheap hashes: the locks are the test
    store = Store.create(tmp_path / "store")
    auth = Auth(store.root, store.journal)
    names = [f"u{i}" for i in range(32)]
    for name in names:
        auth.add_user(name, "dealer", PASSWORD)
    store.journal.queue_wait = 1
    with hung_writer(store.journal.path):
        outcome = _race(*(functools.partial(auth.login, name, PASSWORD, f"10.0.0.{i}")
                          for i, name in enumerate(names)))
    assert all(isinstance(o, JournalBusy) for o in outcome), \
        sorted({f"{type(o).__name__}: {o}" for o in outcome})
    assert [e for e in store.journal.events() if e.kind == "login"] == []
    assert disagreements(store.root, store.journal.events) == []
