"""The /audit page: each filter, paging, the events in words, the export form prefilled
with the page's filters, who may see it, and bad filters answered in words.

What each filter should show is worked out independently: from the whole journal
(``Journal.events``) filtered in plain Python, never from the page's own query.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from roads.ingest.entry import CoupEntry
from roads.store import Event
from roads.tables import Actor
from tests.dashboard.conftest import Server
from tests.dashboard.html_rows import form_values, table_rows

DEALER = Actor.user("dealer", "dealer")
SUPER = Actor.user("super", "supervisor")
TODAY = datetime.now(UTC).date()


@pytest.fixture
def floor(server: Server) -> Server:
    """Two tables: T1 with 60 coups and corrections, T2 with a few coups."""
    s = server.ctx.service
    s.open_shoe(DEALER, "T1", "S1")
    for i in range(60):
        s.enter_coup(DEALER, "T1", CoupEntry(outcome="BPT"[i % 3], method="keypad"))
    asked = s.request_correction(DEALER, "T1", "S1", 2, "keyed P for a tie",
                                 CoupEntry(outcome="T", method="keypad"))
    s.decide_correction(SUPER, asked.seq, True)
    voided = s.request_correction(DEALER, "T1", "S1", 4, "double entry")
    s.decide_correction(SUPER, voided.seq, True)
    s.open_shoe(SUPER, "T2", "X1")
    for outcome in "PPB":
        s.enter_coup(SUPER, "T2", CoupEntry(outcome=outcome, method="keypad"))
    return server


def _page(server: Server, query: str = "") -> str:
    r = server.client.get(f"/audit?{query}")
    assert r.status_code == 200, r.text
    return str(r.text)


def _seqs(html: str) -> list[int]:
    return [int(r.cells[0]) for r in table_rows(html, "events")]


def _expected(server: Server, keep: Callable[[Event], bool]) -> list[int]:
    return [e.seq for e in server.ctx.service.journal.events()[::-1] if keep(e)]


def test_only_auditors_see_the_trail(floor: Server) -> None:
    r = floor.client.get("/audit", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/audit"
    for user in ("dealer", "viewer", "super"):
        floor.login(user)
        r = floor.client.get("/audit")
        assert r.status_code == 403 and "Not allowed" in r.text and "auditors" in r.text


def test_the_first_page_is_the_newest_fifty_with_the_total(floor: Server) -> None:
    floor.login("auditor")
    html = _page(floor)
    every = _expected(floor, lambda e: True)
    assert _seqs(html) == every[:50]
    assert f"Events 1–50 of {len(every)}" in html
    second = _page(floor, "page=2")
    assert _seqs(second) == every[50:100]
    assert f"Events 51–{min(100, len(every))} of {len(every)}" in second


@pytest.mark.parametrize(("query", "keep"), [
    ("table=T2", lambda e: e.table_id == "T2"),
    ("table=*", lambda e: e.table_id == "*"),
    ("shoe=S1", lambda e: e.shoe_id == "S1"),
    ("actor=super", lambda e: e.actor == "super"),
    ("action=coup_amended", lambda e: e.kind == "coup_amended"),
    ("action=corrections", lambda e: e.kind in ("correction_requested", "coup_amended",
                                                 "coup_voided", "correction_rejected")),
    ("action=logins", lambda e: e.kind in ("login", "user_added")),
    ("table=T1&actor=super&action=coup_voided", lambda e: False),  # voids name the requester
    ("table=T1&action=coup_voided", lambda e: e.kind == "coup_voided"),
    (f"from={TODAY}&to={TODAY}", lambda e: True),
    (f"from={TODAY + timedelta(days=1)}", lambda e: False),
    (f"to={TODAY - timedelta(days=1)}", lambda e: False),
])
def test_each_filter_keeps_what_it_says(floor: Server, query: str,
                                        keep: Callable[[Event], bool]) -> None:
    floor.login("auditor")
    html = _page(floor, query)
    expected = _expected(floor, keep)
    assert _seqs(html) == expected[:50]
    words = f"Events 1–{min(50, len(expected))} of {len(expected)}" if len(expected) > 1 \
        else "1 event" if expected else "No events match."
    assert words in html


def test_page_links_keep_the_filters(floor: Server) -> None:
    floor.login("auditor")
    html = _page(floor, "table=T1&action=coup_entered")
    link = html.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0]
    assert parse_qs(urlsplit(link.replace("&amp;", "&")).query) == {
        "table": ["T1"], "action": ["coup_entered"], "page": ["2"]}
    second = _page(floor, "table=T1&action=coup_entered&page=2")
    assert _seqs(second) == _expected(floor, lambda e: e.table_id == "T1"
                                      and e.kind == "coup_entered")[50:100]


def test_events_are_in_words(floor: Server) -> None:
    floor.login("auditor")
    rows = {r.cells[2]: r.cells for r in table_rows(_page(floor, "table=T1&action=corrections"),
                                                    "events")}
    assert rows["coup amended"][3:] == [
        "T1", "S1", "dealer", "coup 2 amended: Player → Tie; requested by dealer, approved by "
                              "super, reason: keyed P for a tie"]
    assert rows["coup voided"][6] == ("coup 4 voided (it was Banker); requested by dealer, "
                                      "approved by super, reason: double entry")
    logins = table_rows(_page(floor, "action=logins"), "events")
    assert ["—", "", "auditor", "auditor logged in from testclient"] in \
        [r.cells[3:] for r in logins]


def test_the_export_form_starts_from_the_page_filters(floor: Server) -> None:
    floor.login("auditor")
    html = _page(floor, f"table=T1&shoe=S1&actor=dealer&from={TODAY}")
    values, selected = form_values(html, "/audit/export")
    assert (values["shoe"], values["from"], selected["table"]) == ("S1", str(TODAY), "T1")
    assert values["to"] == "" and "csrf" in values
    # The events of no table are no table of an export: the form says all tables (its
    # first option, chosen when none is marked).
    _, selected = form_values(_page(floor, "table=*"), "/audit/export")
    assert "table" not in selected


def test_a_refused_export_keeps_what_was_typed(floor: Server) -> None:
    csrf = floor.login("auditor")
    r = floor.client.post("/audit/export", content=f"csrf={csrf}&table=T1&xlsx=1&page=Letter",
                          headers={"content-type": "application/x-www-form-urlencoded"},
                          follow_redirects=False)
    assert r.status_code == 303
    page = floor.client.get(r.headers["location"])
    assert "choose a shoe, a table-day or a date range" in page.text
    _, selected = form_values(page.text, "/audit/export")
    assert (selected["table"], selected["page"]) == ("T1", "Letter")
    assert 'name="xlsx" value="1" checked' in page.text


@pytest.mark.parametrize(("query", "detail"), [
    ("action=nope", "action: &#39;nope&#39; is not one of the choices"),
    ("from=yesterday", "from: &#39;yesterday&#39; is not a day (YYYY-MM-DD)"),
    ("from=2026-05-02&to=2026-05-01", "to: 2026-05-01 is before the first day 2026-05-02"),
    ("page=0", "page: &#39;0&#39; is not a page number"),
    ("shoe=" + "s" * 300, "shoe: at most 200 characters"),
])
def test_a_filter_it_cannot_use_is_a_400_naming_the_field(floor: Server, query: str,
                                                          detail: str) -> None:
    floor.login("auditor")
    r = floor.client.get(f"/audit?{query}")
    assert r.status_code == 400 and detail in r.text
    assert "Audit trail" in r.text and 'class="topnav"' in r.text  # still the page
