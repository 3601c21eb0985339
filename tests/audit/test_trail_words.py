"""The audit trail in words, and its paged query.

Every expectation below is written by hand from what the floor did (the sentence an auditor
should read), not copied from the code's output; the paged query is held to a plain Python
filter over the whole journal.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.audit.bundle import Slice, export_bundle
from roads.audit.trail import ACTIONS, EventFilter, coup_words, flag_words, purge, trail_page
from roads.auth import Auth, AuthError
from roads.ingest.entry import CoupEntry
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store
from roads.store import journal as journal_module
from roads.store.journal import KINDS, Event, Journal
from tests.floor import DEALER, SUPERVISOR, Floor

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Floor:
    """A shoe dealt, corrected every way, sealed and then corrected again; users, a key,
    a login and an export beside it."""
    root = tmp_path_factory.mktemp("trail") / "store"
    floor = Floor(root)
    auth = Auth(root, floor.store.journal)
    auth.add_user("ana", "dealer", PASSWORD, by="admin")
    auth.login("ana", PASSWORD, "10.0.0.7")
    auth.issue_key("T1")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPPBT")                                   # coups 1-5
    floor.coup("T1", player=("9h", "Kd"), banker=("2c", "3c"))   # coup 6: Player 9-5
    floor.coup("T1", "B", banker_pair=True, natural=True)        # coup 7
    floor.amend("T1", "S1", 2, CoupEntry(outcome="T", method="keypad"), "keyed P for a tie")
    floor.void("T1", "S1", 3, "double entry")
    # Coup 1 amended twice: the second change starts from the first one's result.
    floor.amend("T1", "S1", 1, CoupEntry(outcome="P", method="keypad"), "wrong side")
    floor.amend("T1", "S1", 1, CoupEntry(outcome="T", method="keypad"), "it was a tie")
    asked = floor.service.request_correction(
        DEALER, "T1", "S1", 5, "wrong side",
        CoupEntry(outcome="B", banker_pair=True, method="keypad"))
    floor.service.decide_correction(SUPERVISOR, asked.seq, False, "video shows a tie")
    floor.service.request_correction(DEALER, "T1", "S1", 7, "no pair",
                                     CoupEntry(outcome="B", natural=True, method="keypad"))
    floor.close("T1")
    # After the seal the coups are read back from Parquet through the read port.
    floor.amend("T1", "S1", 6, CoupEntry(player_cards=("8h", "Kd"), banker_cards=("2c", "3c"),
                                         method="cards"), "misread the nine")
    export_bundle(floor.store, Slice(table_id="T1", shoe_id="S1"),
                  root.parent / "bundle", "auditor")
    return floor


def _words(floor: Floor, **which: object) -> list[tuple[str, str]]:
    page = trail_page(floor.store, EventFilter(**which), 0, 500)  # type: ignore[arg-type]
    return [(r["kind"], r["words"]) for r in page.rows]


def test_every_kind_of_event_has_its_words() -> None:
    assert set(ACTIONS) == set(KINDS)
    assert len(set(ACTIONS.values())) == len(ACTIONS)  # no two kinds read the same


def test_coups_in_words() -> None:
    assert coup_words({"outcome": "B"}) == "Banker"
    assert coup_words({"outcome": "B", "banker_total": 7, "player_total": 6,
                       "banker_pair": True, "natural": True}) == \
        "Banker 7–6, Banker pair, natural"
    assert coup_words({"outcome": "P", "player_total": 9, "banker_total": 5}) == "Player 9–5"
    assert coup_words({"outcome": "T", "player_total": 4, "banker_total": 4,
                       "player_pair": True}) == "Tie 4–4, Player pair"
    assert flag_words({"banker_pair": True, "natural": True}) == "Banker pair, natural"
    assert flag_words({"natural": True}) == "Natural"
    assert flag_words({"outcome": "B"}) == ""


def test_corrections_say_what_they_changed_and_who(floor: Floor) -> None:
    words = _words(floor, kinds=("coup_amended", "coup_voided", "correction_rejected"))
    assert words[::-1] == [
        ("coup_amended", "coup 2 amended: Player → Tie; requested by dealer, approved by "
                         "super, reason: keyed P for a tie"),
        ("coup_voided", "coup 3 voided (it was Player); requested by dealer, approved by "
                        "super, reason: double entry"),
        ("coup_amended", "coup 1 amended: Banker → Player; requested by dealer, approved by "
                         "super, reason: wrong side"),
        ("coup_amended", "coup 1 amended: Player → Tie; requested by dealer, approved by "
                         "super, reason: it was a tie"),
        ("correction_rejected", f"request #{_request_of(floor, 5)} to correct coup 5 "
                                "(Tie → Banker, Banker pair, asked by dealer) rejected by "
                                "super; note: video shows a tie"),
        ("coup_amended", "coup 6 amended: Player 9–5, natural (Player 9h Kd, Banker 2c 3c) → "
                         "Player 8–5, natural (Player 8h Kd, Banker 2c 3c); requested by "
                         "dealer, approved by super, reason: misread the nine"),
    ]


def _request_of(floor: Floor, coup: int) -> int:
    return next(e.seq for e in floor.store.journal.events("T1", "S1")
                if e.kind == "correction_requested" and e.payload["coup"] == coup)


def test_requests_say_what_was_asked(floor: Floor) -> None:
    asked = [w for _, w in _words(floor, kinds=("correction_requested",))]
    for sentence in (
            "amendment of coup 2 requested by dealer: Player → Tie; reason: keyed P for a tie",
            "void of coup 3 requested by dealer (it was Player); reason: double entry",
            "amendment of coup 7 requested by dealer: Banker, Banker pair, natural → "
            "Banker, natural; reason: no pair"):
        assert sentence in asked, sentence


def test_the_other_events_in_words(floor: Floor) -> None:
    words = _words(floor)
    said = {w for _, w in words}
    key_id = next(e.payload["key_id"] for e in floor.store.journal.events("T1")
                  if e.kind == "api_key_issued")
    for sentence in (
            "user ana added as dealer", "ana logged in from 10.0.0.7",
            f"API key {key_id} issued for table T1",
            "shoe S1 opened at table T1, rules standard-8",
            "coup 1 entered by keypad: Banker",
            "coup 6 entered by cards: Player 9–5, natural (Player 9h Kd, Banker 2c 3c)",
            "coup 7 entered by keypad: Banker, Banker pair, natural",
            "shoe S1 closed"):
        assert sentence in said, sentence
    sealed = next(w for k, w in words if k == "shoe_sealed")
    # The sealed file holds the coups as entered (the void stays a journal event).
    assert sealed == "shoe S1 sealed into the store: 7 coups, 2 files"  # coups and shoe
    exported = next(w for k, w in words if k == "data_exported")
    # A bundle lists the voided coup too, marked as voided.
    assert exported.startswith("compliance bundle exported (table T1, shoe S1): 7 coups, "
                               "data digest ")


# -- the paged query ---------------------------------------------------------------------------
TABLES = ("T1", "T2", "*")
ACTORS = ("ana", "bo", None)
SOME_KINDS = ("coup_entered", "login", "shoe_opened", "coup_amended")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[datetime]]:
    """The journal's clock, set by the test (events get the next time in the list)."""
    times: list[datetime] = []
    monkeypatch.setattr(journal_module, "now_utc",
                        lambda: times.pop(0).isoformat(timespec="microseconds"))
    yield times


def test_day_filters_take_whole_utc_days(tmp_path: Path, clock: list[datetime]) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    clock += [datetime(2026, 3, 1, 23, 59, 59, 999_999, UTC), datetime(2026, 3, 2, tzinfo=UTC),
              datetime(2026, 3, 2, 23, 59, 59, 999_999, UTC), datetime(2026, 3, 3, tzinfo=UTC)]
    for _ in range(4):
        journal.append("login", "*", payload={"user": "ana"}, actor="ana")

    def seqs(start: date | None, end: date | None) -> list[int]:
        return [e.seq for e in journal.event_page(EventFilter(start=start, end=end))[0]]
    assert seqs(date(2026, 3, 2), date(2026, 3, 2)) == [3, 2]
    assert seqs(date(2026, 3, 2), None) == [4, 3, 2]
    assert seqs(None, date(2026, 3, 1)) == [1]
    assert seqs(date(2026, 3, 4), None) == []


@settings(max_examples=40, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from(TABLES), st.sampled_from(ACTORS),
                                 st.sampled_from(SOME_KINDS), st.integers(0, 4)),
                       max_size=40),
       table=st.sampled_from((None, *TABLES)), actor=st.sampled_from((None, "ana", "bo")),
       kinds=st.sampled_from(((), ("login",), ("coup_entered", "coup_amended"))),
       start=st.sampled_from((None, 0, 2)), end=st.sampled_from((None, 1, 3)),
       offset=st.integers(0, 45), limit=st.integers(1, 20))
def test_a_page_is_the_filtered_journal_newest_first(
        events: list[tuple[str, str | None, str, int]], table: str | None, actor: str | None,
        kinds: tuple[str, ...], start: int | None, end: int | None, offset: int,
        limit: int) -> None:
    first = date(2026, 5, 1)
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "j.sqlite")
        times = [datetime.combine(first + timedelta(days=d), datetime.min.time(), UTC)
                 + timedelta(hours=i % 24) for i, (_, _, _, d) in enumerate(events)]
        times.sort()  # the journal's clock only moves on
        original = journal_module.now_utc
        journal_module.now_utc = lambda: times.pop(0).isoformat()
        try:
            for t, who, kind, _ in events:
                journal.append(kind, t, "S1" if kind != "login" else None, {"n": 1}, who)
        finally:
            journal_module.now_utc = original
        which = EventFilter(table, None, actor, kinds,
                            None if start is None else first + timedelta(days=start),
                            None if end is None else first + timedelta(days=end))
        page, total = journal.event_page(which, offset, limit)
        expected = [e for e in journal.events()[::-1] if _keeps(which, e)]
        assert total == len(expected)
        assert [e.seq for e in page] == [e.seq for e in expected[offset:offset + limit]]
        journal.close()


def _keeps(which: EventFilter, e: Event) -> bool:
    day = datetime.fromisoformat(e.at).date()
    return ((which.table_id is None or e.table_id == which.table_id)
            and (which.actor is None or e.actor == which.actor)
            and (not which.kinds or e.kind in which.kinds)
            and (which.start is None or day >= which.start)
            and (which.end is None or day <= which.end))


def test_the_trail_page_reads_no_whole_journal(floor: Floor,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A page never lists the whole journal (the old page read every event, then kept 500)."""
    def refuse(*args: object, **kwargs: object) -> list[Event]:
        raise AssertionError("the audit page read the whole journal")
    monkeypatch.setattr(Journal, "events", refuse)
    page = trail_page(floor.store, EventFilter(table_id="T1"), 0, 10)
    assert len(page.rows) == 10 and page.total > 10
    assert any(r["kind"] == "coup_amended" for r in
               trail_page(floor.store, EventFilter(kinds=("coup_amended",)), 0, 10).rows)


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Everything but the live tables: users and their credentials, logins refused, an
    engine run, two imports of one old day compacted and then purged, a table closed."""
    root = tmp_path_factory.mktemp("office") / "store"
    store = Store.create(root)
    auth = Auth(root, store.journal)
    auth.add_user("bo", "supervisor", PASSWORD, by="admin")
    auth.set_password("bo", PASSWORD + "!", by="admin")
    auth.disable_user("bo", by="admin")
    auth.enable_user("bo", by="admin")
    token = auth.issue_token("bo", by="admin", days=30)
    auth.revoke(token.split("_")[1], by="admin")
    key = auth.issue_key("T9", by="admin")
    auth.revoke(key.split("_")[1], by="admin")
    session, _ = auth.login("bo", PASSWORD + "!", "10.0.0.8")
    auth.logout(session)
    with pytest.raises(AuthError):
        auth.login("bo", "not the password", "10.0.0.9")
    auth.flush_refusals(force=True)
    write_simulation(Simulation(get_rules("standard-8"), 3, seed=5, tables=1), store)
    for n, shoe in enumerate(("S1", "S2")):
        csv = root.parent / f"old{n}.csv"
        csv.write_text(f"table,shoe,coup,result,time\nT1,{shoe},1,B,2026-01-01T10:00:00Z\n"
                       f"T1,{shoe},2,P,2026-01-01T10:01:00Z\n")
        ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    store.compact(date(2026, 1, 2), actor="admin")
    later = datetime.now(UTC).date() + timedelta(days=5 * 366 + 30)
    purge(store, date(2026, 2, 1), "admin", "nevada", today=later)
    floor = Floor(store)
    floor.open_shoe("T2", "X1")
    floor.close("T2")
    floor.service.close_table(DEALER, "T2")
    return store


def test_every_other_kind_in_words(office: Store) -> None:
    rows = trail_page(office, EventFilter(), 0, 500).rows
    said: dict[str, list[str]] = {r["kind"]: [] for r in rows}
    for r in rows:
        said[r["kind"]].append(r["words"])
    assert said["user_changed"][::-1] == [
        "password of bo changed", "user bo disabled: 0 sessions ended, 0 tokens revoked",
        "user bo enabled"]
    token_id = next(e.payload["token_id"] for e in office.journal.of_kinds(("token_issued",)))
    assert said["token_issued"][0].startswith(f"personal token {token_id} issued to bo, "
                                              "valid until ")
    assert said["token_revoked"] == [f"personal token {token_id} of bo revoked"]
    key_id = next(e.payload["key_id"] for e in office.journal.of_kinds(("api_key_issued",)))
    assert said["api_key_revoked"] == [f"API key {key_id} of table T9 revoked"]
    assert said["login"] == ["bo logged in from 10.0.0.8"]
    assert said["logout"] == ["bo logged out"]
    [refused] = said["login_refused"]
    assert refused.startswith("1 login attempt refused in the ")
    assert refused.endswith("(bo from 10.0.0.9: 1)")
    [engine] = said["files_published"]
    assert engine.startswith("3 simulated shoes (") and ", rules standard-8, seed 5) stored " \
        "in 2 files" in engine
    imports = said["import_committed"]
    assert len(imports) == 2 and all(
        re.fullmatch(r"import \S+ committed from old[01]\.csv: 2 coups accepted, "
                     r"0 quarantined, 0 flagged; \d+ files?", w) for w in imports), imports
    assert sorted(said["store_compacted"]) == [
        "coups of 2026-01-01 compacted into 1 file", "shoes of 2026-01-01 compacted into 1 file"]
    assert said["data_purged"] == ["stored days before 2026-02-01 deleted under the nevada "
                                   "retention profile: coups/date=2026-01-01, "
                                   "shoes/date=2026-01-01"]
    assert said["table_closed"] == ["table T2 closed for the day"]
    assert said["shoe_closed"] == ["shoe X1 closed"]
