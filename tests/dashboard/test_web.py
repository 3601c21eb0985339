"""Login, CSRF, roles and the supervised correction through the operator endpoints."""

from __future__ import annotations

import base64
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

from roads.audit.bundle import verify
from roads.store import Selection
from tests.dashboard.conftest import PASSWORD, Server
from tests.hung_writer import hung_from_seal


def _act(server: Server, csrf: str, **body: Any) -> Any:
    return server.client.post("/operator/T1/action", json=body,
                              headers={"X-CSRF-Token": csrf})


def test_operator_page_needs_login(server: Server) -> None:
    r = server.client.get("/operator/T1", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login?next=")
    assert server.client.post("/operator/T1/action", json={"action": "coup"}).status_code == 401


def test_login_form_needs_its_csrf_token(server: Server) -> None:
    server.client.get("/login")
    r = server.client.post("/login", content="user=dealer&password=correct+horse+battery"
                           "&csrf=forged", headers={"content-type":
                                                    "application/x-www-form-urlencoded"},
                           follow_redirects=False)
    assert r.status_code == 303 and "error=" in r.headers["location"]
    assert "roads_session" not in server.client.cookies


def test_a_login_behind_a_held_accounts_lock_is_a_503_with_retry_after(server: Server) -> None:
    """Another worker's login holds ``auth.sqlite``'s write lock (waiting, say, for a hung
    journal writer): this one waits the journal's ``queue_wait`` at most, then answers 503
    with Retry-After. Before the fix it waited SQLite's 30 s busy timeout and answered a
    500 ("database is locked")."""
    server.ctx.auth.journal.queue_wait = 0.3
    page = server.client.get("/login")
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    other = sqlite3.connect(server.ctx.auth.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        r = server.client.post("/login", content=f"user=dealer&password={PASSWORD}"
                               f"&csrf={token}&next=/",
                               headers={"content-type": "application/x-www-form-urlencoded"},
                               follow_redirects=False)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert r.status_code == 503, r.text
    assert int(r.headers["Retry-After"]) >= 1 and "busy" in r.json()["detail"]
    server.login("dealer")  # the lock let go, the same login goes through


def test_login_never_redirects_off_site(server: Server) -> None:
    page = server.client.get("/login")
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    r = server.client.post("/login", content="user=dealer&password=correct+horse+battery"
                           f"&csrf={token}&next=//evil.example/x",
                           headers={"content-type": "application/x-www-form-urlencoded"},
                           follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"


def test_dealer_enters_coups_by_keypad_and_by_cards(server: Server) -> None:
    csrf = server.login("dealer")
    assert _act(server, csrf, action="open_shoe", shoe_id="S1").status_code == 200
    r = _act(server, csrf, action="coup", outcome="B", banker_pair=True)
    assert r.status_code == 200 and r.json()["coups"] == 1
    assert r.json()["last"][0]["banker_pair"] is True
    preview = _act(server, csrf, action="preview", player_cards="9h Kd", banker_cards="2c 3c")
    assert preview.json()["message"] == "By the tableau: Player 9–5, natural"
    bad = _act(server, csrf, action="coup", player_cards="2h 3d", banker_cards="Kc Qc")
    assert bad.json()["ok"] is False and "impossible coup" in bad.json()["detail"]
    assert bad.json()["coups"] == 1
    ok = _act(server, csrf, action="coup", player_cards="9h Kd", banker_cards="2c 3c")
    assert ok.json()["last"][0]["outcome"] == "P"
    events = server.ctx.service.journal.events("T1", "S1")
    assert [e.actor for e in events if e.kind == "coup_entered"] == ["dealer", "dealer"]


def test_closing_the_shoe_again_after_a_busy_seal_closes_it(server: Server) -> None:
    csrf = server.login("dealer")
    assert _act(server, csrf, action="open_shoe", shoe_id="S1").json()["ok"] is True
    assert _act(server, csrf, action="coup", outcome="B").json()["coups"] == 1
    server.ctx.service.journal.queue_wait = 0.3
    with hung_from_seal(server.ctx.service.store):  # the close commits, its seal waits
        r = _act(server, csrf, action="close_shoe")
        assert r.status_code == 503 and "try again" in r.json()["detail"]  # what it shows
    server.ctx.service.journal.queue_wait = 5  # (the helper that gave up may be slow to go)
    r = _act(server, csrf, action="close_shoe")  # the operator presses Close shoe again
    assert r.json()["ok"] is True, r.json()
    assert r.json()["message"] == "Shoe S1 closed and sealed"
    assert r.json()["state"] == "between_shoes"
    assert server.ctx.service.store.unsealed_closed() == []


def test_csrf_token_is_required_for_every_action(server: Server) -> None:
    server.login("dealer")
    r = server.client.post("/operator/T1/action", json={"action": "open_shoe"})
    assert r.status_code == 403 and "CSRF" in r.json()["detail"]
    r = _act(server, "wrong", action="open_shoe")
    assert r.status_code == 403


def test_viewer_and_auditor_cannot_write(server: Server) -> None:
    for user in ("viewer", "auditor"):
        csrf = server.login(user)
        r = _act(server, csrf, action="open_shoe", shoe_id="S1")
        assert r.status_code == 403 and "may not enter" in r.json()["detail"]
        page = server.client.get("/operator/T1")
        assert "Not allowed" in page.text
    journal = server.ctx.service.journal
    assert journal.table_head("T1") == journal.events("T1")[-1].seq
    assert not [e for e in server.ctx.service.journal.events("T1") if e.kind == "shoe_opened"]


def test_supervised_correction(server: Server) -> None:
    dealer = server.login("dealer")
    _act(server, dealer, action="open_shoe", shoe_id="S1")
    for outcome in "BPB":
        _act(server, dealer, action="coup", outcome=outcome)
    r = _act(server, dealer, action="request_correction", shoe_id="S1", coup=2, outcome="T",
             reason="keyed P for a tie")
    assert r.status_code == 200 and len(r.json()["pending"]) == 1
    request = r.json()["pending"][0]["request"]
    # Nothing changes before approval, and the dealer cannot approve.
    assert [c["outcome"] for c in r.json()["last"]] == ["B", "P", "B"]
    denied = _act(server, dealer, action="approve", request=request)
    assert denied.status_code == 403
    supervisor = server.login("super")
    ok = _act(server, supervisor, action="approve", request=request)
    assert ok.status_code == 200 and ok.json()["pending"] == []
    assert [c["outcome"] for c in ok.json()["last"]] == ["B", "T", "B"]
    twice = _act(server, supervisor, action="approve", request=request)
    assert twice.json()["ok"] is False and "already decided" in twice.json()["detail"]
    amended = [e for e in server.ctx.service.journal.events("T1") if e.kind == "coup_amended"]
    assert [(e.actor, e.payload["approver"], e.payload["reason"]) for e in amended] == \
        [("dealer", "super", "keyed P for a tie")]
    # The original stays queryable.
    originals = server.ctx.service.store.read.coups(Selection("T1", "S1"), originals=True)
    assert originals["outcome"].cast(str).to_list() == ["B", "P", "B"]


def test_supervisor_cannot_approve_own_request_and_can_reject(server: Server) -> None:
    supervisor = server.login("super")
    _act(server, supervisor, action="open_shoe", shoe_id="S1")
    _act(server, supervisor, action="coup", outcome="B")
    r = _act(server, supervisor, action="request_correction", shoe_id="S1", coup=1,
             reason="void it")
    request = r.json()["pending"][0]["request"]
    own = _act(server, supervisor, action="approve", request=request)
    assert own.json()["ok"] is False and "other than the person who asked" in own.json()["detail"]
    reject = _act(server, supervisor, action="reject", request=request, note="no")
    assert reject.status_code == 200 and reject.json()["coups"] == 1


def test_auditor_reads_the_audit_trail(server: Server) -> None:
    assert server.client.get("/audit", follow_redirects=False).status_code == 303
    server.login("dealer")
    assert server.client.get("/audit").status_code == 403
    server.login("auditor")
    page = server.client.get("/audit")
    assert page.status_code == 200
    for kind in ("user_added", "login", "api_key_issued"):
        assert kind in page.text


def test_table_screen_shell_and_security_headers(server: Server) -> None:
    page = server.client.get("/table/T1?lang=ru")
    assert page.status_code == 200
    assert 'data-lang="ru"' in page.text and "/static/screen.js" in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert 'data-table="T1" data-lang="en"' in server.client.get("/table/T1?lang=xx").text


def _export_form(server: Server, csrf: str, **fields: str) -> Any:
    body = "&".join(f"{k}={v}" for k, v in {"csrf": csrf, **fields}.items())
    return server.client.post("/audit/export", content=body, follow_redirects=False,
                              headers={"content-type": "application/x-www-form-urlencoded"})


def test_auditor_downloads_a_verifiable_bundle_and_the_export_is_journaled(
        server: Server, tmp_path: Path) -> None:
    dealer = server.login("dealer")
    _act(server, dealer, action="open_shoe", shoe_id="S1")
    for outcome in "BPT":
        _act(server, dealer, action="coup", outcome=outcome)
    assert _export_form(server, dealer, shoe="S1", table="T1").status_code == 403
    csrf = server.login("auditor")
    assert _export_form(server, "forged", shoe="S1").status_code == 403
    empty = _export_form(server, csrf, table="T1")
    assert empty.status_code == 303 and "choose" in empty.headers["location"]
    r = _export_form(server, csrf, shoe="S1", table="T1", pdf="1", page="Letter")
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(r.content)
    with zipfile.ZipFile(archive) as z:
        z.extractall(tmp_path / "bundle")
        assert "report-letter.pdf" in z.namelist()
    manifest = verify(tmp_path / "bundle")
    assert manifest["files"]["coups.csv"]["rows"] == 3
    [event] = [e for e in server.ctx.service.journal.events("T1") if e.kind == "data_exported"]
    assert event.actor == "auditor" and event.payload["data_digest"] == manifest["data_digest"]
    assert "data_exported" in server.client.get("/audit").text


def test_the_operator_screen_speaks_in_words(server: Server) -> None:
    csrf = server.login("dealer")
    _act(server, csrf, action="open_shoe", shoe_id="S1")
    r = _act(server, csrf, action="coup", outcome="B", banker_pair=True, natural=True).json()
    assert r["message"] == "Coup 1 entered: Banker, Banker pair, natural"
    assert r["status"] == "Shoe S1 — 1 coup"  # not "1 coups"
    assert (r["last"][0]["words"], r["last"][0]["flags"]) == \
        ("Banker, Banker pair, natural", "Banker pair, natural")
    r = _act(server, csrf, action="coup", player_cards="9h Kd", banker_cards="2c 3c").json()
    assert r["message"] == "Coup 2 entered: Player 9–5, natural"
    assert r["status"] == "Shoe S1 — 2 coups"
    # The mini Big Road: one image of the shoe's Big Road, one ring per coup (the pair's
    # dot and the natural's star beside the first).
    svg = base64.b64decode(r["road"]).decode()
    assert svg.startswith("<svg") and svg.count('<circle cx="12" cy="12" r="8.64" fill="none"') == 1
    assert svg.count('r="8.64" fill="none"') == 2


def test_corrections_from_the_form(server: Server) -> None:
    dealer = server.login("dealer")
    _act(server, dealer, action="open_shoe", shoe_id="S1")
    for outcome in "BPB":
        _act(server, dealer, action="coup", outcome=outcome)
    form = {"action": "request_correction", "shoe_id": "S1"}
    # The reason is asked for first; what was refused names its field for the form.
    r = _act(server, dealer, **form, coup="2", correction="amend", outcome="T", reason=" ")
    assert r.json()["ok"] is False and r.json()["field"] == "reason"
    # An amendment that changes nothing is refused in words.
    r = _act(server, dealer, **form, coup="2", correction="amend", outcome="P", reason="x")
    assert r.json()["ok"] is False and r.json()["field"] == "correction"
    assert "coup 2 is already Player" in r.json()["detail"]
    # Amend the pairs only, by cards, or void: each waits for a supervisor, said in words.
    r = _act(server, dealer, **form, coup="1", correction="amend", outcome="B",
             banker_pair=True, reason="missed the pair")
    assert r.json()["ok"] is True and "waiting for a supervisor" in r.json()["message"]
    r = _act(server, dealer, **form, coup="2", correction="amend", outcome="P",
             player_cards="2h 3d", banker_cards="9c Kc", reason="dealt by cards")
    assert r.json()["ok"] is True
    r = _act(server, dealer, **form, coup="3", correction="void", outcome="T",
             reason="double entry")
    assert [p["words"] for p in r.json()["pending"]] == [
        "Banker → Banker, Banker pair", "Player → Banker 9–5, natural (Player 2h 3d, Banker 9c Kc)",
        "void (it is Banker)"]
    supervisor = server.login("super")
    for p in r.json()["pending"]:
        ok = _act(server, supervisor, action="approve", request=p["request"]).json()
        assert ok["ok"] is True and ok["message"].startswith(f"Request #{p['request']} approved")
    assert [c["words"] for c in ok["last"]] == ["Banker 9–5, natural", "Banker, Banker pair"]


def test_the_overview_card_counts_in_words(server: Server) -> None:
    from dashboard.pages import table_card

    csrf = server.login("dealer")
    _act(server, csrf, action="open_shoe", shoe_id="S1")
    _act(server, csrf, action="coup", outcome="P")
    _act(server, csrf, action="request_correction", shoe_id="S1", coup=1, reason="typo",
         correction="amend", outcome="B")
    card = repr(table_card(server.ctx.service.table_state("T1"), "Salon 1"))
    assert "'1 coup'" in card and "1 coups" not in card
    assert "1 correction awaiting approval" in card and "last: Player" in card


def test_a_dealer_cannot_open_an_unlisted_table_from_the_operator_screen(server: Server) -> None:
    csrf = server.login("dealer")
    r = server.client.post("/operator/T9/action", json={"action": "open_shoe", "shoe_id": "S1"},
                           headers={"X-CSRF-Token": csrf})
    # a refusal is the screen's answer in words (200, ok false), as for an impossible coup
    assert r.json()["ok"] is False and "T9 is not on this floor's list" in r.json()["detail"]
    assert server.ctx.service.journal.table_head("T9") == 0
    r = server.client.post("/operator/t1/action", json={"action": "open_shoe", "shoe_id": "S1"},
                           headers={"X-CSRF-Token": server.login("super")})
    assert r.json()["ok"] is False and "looks like table 'T1'" in r.json()["detail"], r.text
    assert server.ctx.service.journal.table_head("t1") == 0
