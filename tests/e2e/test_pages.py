"""What only a browser shows on the operator, audit and history pages (Debian's Chromium):
where the pair keys sit and how they are coloured, the card preview as it is typed, a
correction through the form from request to approval, and the audit and history pages'
contrast, navigation and paging. Each test ends with no console errors (and no browser
dialog: corrections use no ``prompt()``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import (
    APIResponse,
    Browser,
    Dialog,
    FloatRect,
    Page,
    Route,
    expect,
)

from roads.auth import Auth
from roads.ingest.entry import CoupEntry
from roads.store import Store
from tests.e2e.conftest import PASSWORD, Console, LiveServer, shot
from tests.floor import Floor

CONTRAST = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")
AA = 4.5  # WCAG 2 AA, normal text


def _login(browser: Browser, server: LiveServer, console: Console, user: str,
           path: str = "/operator/T1", width: int = 1400) -> Page:
    page = console.watch(browser.new_context(viewport={"width": width, "height": 900})
                         .new_page())
    page.goto(f"{server.url}{path}")
    expect(page).to_have_url(re.compile(r"/login\?next="))
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(re.escape(path) + "$"))
    if path.startswith("/operator/"):  # its script has run (a click before it is lost)
        expect(page.locator("#op-status")).not_to_be_empty()
    return page


def _dialogs(page: Page) -> list[str]:
    seen: list[str] = []

    def record(dialog: Dialog) -> None:
        seen.append(dialog.message)
        dialog.dismiss()
    page.on("dialog", record)
    return seen


def _box(page: Page, selector: str) -> FloatRect:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


def test_pair_keys_sit_under_their_side_and_share_its_colour(
        browser: Browser, live_server: LiveServer) -> None:
    console = Console()
    page = _login(browser, live_server, console, "dealer")
    for side, pair in (("[data-outcome=B]", "[data-toggle=banker_pair]"),
                       ("[data-outcome=P]", "[data-toggle=player_pair]"),
                       ("[data-outcome=T]", "[data-toggle=natural]")):
        key, under = _box(page, side), _box(page, pair)
        assert abs((key["x"] + key["width"] / 2) - (under["x"] + under["width"] / 2)) < 1
        assert key["y"] + key["height"] <= under["y"] < key["y"] + key["height"] + 40
    colours = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
        '[data-outcome], [data-toggle]')].map(b => [b.dataset.outcome || b.dataset.toggle,
        getComputedStyle(b).backgroundColor]))""")
    assert colours["banker_pair"] == colours["B"] != colours["P"] == colours["player_pair"]
    # Pressing a pair key marks it without losing its side's colour.
    page.keyboard.press("5")
    expect(page.locator("[data-toggle=banker_pair]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#entry")).to_have_text("—")
    page.keyboard.press("1")
    expect(page.locator("#entry")).to_have_text("Banker, Banker pair")
    assert page.evaluate("getComputedStyle(document.querySelector("
                         "'[data-toggle=banker_pair]')).backgroundColor") == colours["B"]
    shot(page, "operator-keypad")
    assert console.errors == []


def test_a_state_asked_before_an_action_never_overwrites_its_answer(
        browser: Browser, live_server: LiveServer) -> None:
    """The operator page polls its state every 2 s: a poll answered by the server before a
    shoe was opened, but arriving after the open's answer, must not put "No open shoe" back
    (the screen would tell the dealer to open a shoe that is open)."""
    console = Console()
    page = _login(browser, live_server, console, "dealer")
    held: list[tuple[Route, APIResponse]] = []
    later: list[Route] = []  # polls after the stale one stay unanswered: nothing repaints

    def hold(route: Route) -> None:
        if held:
            later.append(route)
        else:
            held.append((route, route.fetch()))  # answered now (idle), delivered later

    page.route("**/operator/T1/state", hold)
    for _ in range(500):  # the handler runs as Playwright pumps its events (≤ 10 s)
        if held:
            break
        page.wait_for_timeout(20)
    assert held and b"No open shoe" in held[0][1].body()
    page.fill("#shoe-id", "S1")
    page.click("#open-shoe")
    expect(page.locator("#op-status")).to_contain_text("Shoe S1")
    route, stale = held[0]
    count = len(later)
    route.fulfill(response=stale)
    for _ in range(500):  # the next poll is asked 2 s on: the stale answer was handled
        if len(later) > count:
            break
        page.wait_for_timeout(20)
    assert len(later) > count
    assert (page.locator("#op-status").text_content() or "").startswith("Shoe S1 — ")
    for waiting in later:
        waiting.abort()


def test_card_preview_follows_the_typing_and_never_shows_the_last_hand(
        browser: Browser, live_server: LiveServer) -> None:
    console = Console()
    page = _login(browser, live_server, console, "dealer")
    page.fill("#shoe-id", "S1")
    page.click("#open-shoe")
    expect(page.locator("#op-status")).to_contain_text("Shoe S1")
    preview = page.locator("#card-preview")
    page.locator("#player-cards").press_sequentially("9h Kd")
    page.locator("#banker-cards").press_sequentially("2c")
    expect(preview).to_contain_text("Not a coup yet")  # one card is not a hand
    page.locator("#banker-cards").press_sequentially(" 3c")
    # Shown while the dealer is still in the field: on typing, not on leaving it.
    expect(preview).to_have_text("By the tableau: Player 9–5, natural")
    assert page.evaluate("document.activeElement.id") == "banker-cards"
    page.keyboard.press("Enter")
    expect(page.locator("#message")).to_have_text("Coup 1 entered: Player 9–5, natural")
    expect(preview).to_have_text("")
    # The next hand: half typed shows nothing (never the coup just entered) ...
    page.locator("#player-cards").press_sequentially("Kh 2d")
    page.wait_for_timeout(400)
    expect(preview).to_have_text("")
    page.locator("#banker-cards").press_sequentially("5c 4d")
    expect(preview).to_have_text("By the tableau: Banker 9–2, natural")
    # ... and a change replaces the answer (cleared at once, then the new one).
    page.locator("#player-cards").fill("Kh")
    expect(preview).to_contain_text("Not a coup yet")
    assert console.errors == []


def test_a_correction_through_the_form(browser: Browser, live_server: LiveServer) -> None:
    console = Console()
    dealer = _login(browser, live_server, console, "dealer")
    dialogs = _dialogs(dealer)
    dealer.fill("#shoe-id", "S1")
    dealer.click("#open-shoe")
    for outcome in "BPB":
        dealer.click(f"[data-outcome={outcome}]")
        dealer.click("#confirm")
    expect(dealer.locator("#op-status")).to_have_text("Shoe S1 — 3 coups")
    road = dealer.locator("#mini-road")
    expect(road).to_be_visible()
    assert dealer.evaluate("document.getElementById('mini-road').naturalWidth") > 0
    dealer.locator("button.request-correction[data-coup='2']").click()
    form = dealer.locator("#correction")
    expect(form).to_be_visible()
    expect(dealer.locator("#fix-now")).to_have_text("Now: coup 2, Player")
    expect(dealer.locator("#correction-form input[name=outcome][value=P]")).to_be_checked()
    # No reason: the form does not go.
    dealer.click("#correction-form button[type=submit]")
    assert dealer.evaluate("document.getElementById('fix-reason').matches(':invalid')")
    expect(form).to_be_visible()
    # A reason but no change: refused in words, and what was typed stays.
    dealer.fill("#fix-reason", "keyed the wrong side")
    dealer.click("#correction-form button[type=submit]")
    expect(dealer.locator("#fix-error")).to_contain_text("coup 2 is already Player")
    expect(form).to_be_visible()
    expect(dealer.locator("#fix-reason")).to_have_value("keyed the wrong side")
    dealer.check("#correction-form input[name=outcome][value=T]")
    dealer.check("#correction-form input[name=player_pair]")
    dealer.click("#correction-form button[type=submit]")
    expect(form).to_be_hidden()
    expect(dealer.locator("#message")).to_contain_text("Correction of coup 2 requested")
    expect(dealer.locator("#pending tr")).to_have_count(1)
    expect(dealer.locator("#pending")).to_contain_text("Player → Tie, Player pair")
    expect(dealer.locator("#pending button")).to_have_count(0)  # a dealer cannot approve
    shot(dealer, "operator-correction")
    # A void, through the same form.
    dealer.locator("button.request-correction[data-coup='3']").click()
    dealer.fill("#fix-reason", "double entry")
    dealer.check("#correction-form input[name=correction][value=void]")
    assert dealer.evaluate("document.getElementById('fix-amend').disabled")
    dealer.click("#correction-form button[type=submit]")
    expect(dealer.locator("#pending")).to_contain_text("void (it is Banker)")
    supervisor = _login(browser, live_server, console, "super")
    for _ in range(2):
        supervisor.locator("#pending button[data-decide=approve]").first.click()
        expect(supervisor.locator("#message")).to_contain_text("approved")
    expect(supervisor.locator("#pending tr")).to_have_count(0)
    # The dealer's screen shows the amended coup (and not the voided one).
    last = dealer.locator("#last tr")
    expect(last).to_have_count(2, timeout=10_000)
    expect(last.nth(0)).to_contain_text("#2")
    expect(last.nth(0)).to_contain_text("Tie")
    expect(last.nth(0)).to_contain_text("Player pair")
    expect(dealer.locator("#op-status")).to_have_text("Shoe S1 — 2 coups")
    assert dialogs == [] and console.errors == []


@pytest.fixture
def audited(live_server: LiveServer) -> Iterator[LiveServer]:
    """The live server's store with an auditor and a shoe of 60 coups and corrections."""
    store = Store.open(live_server.root)
    Auth(live_server.root, store.journal).add_user("auditor", "auditor", PASSWORD)
    floor = Floor(store)
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPPBT" * 12)
    floor.amend("T1", "S1", 2, CoupEntry(outcome="T", method="keypad"), "keyed P for a tie")
    floor.void("T1", "S1", 3)
    floor.close("T1")
    store.journal.close()
    yield live_server


def _readable(page: Page) -> None:
    measured = page.evaluate(CONTRAST)
    assert any(m["tag"] == "A" for m in measured)  # links are measured too
    low = [m for m in measured if m["ratio"] < AA]
    assert low == [], low


def test_audit_is_readable_filtered_paged_and_exports_what_it_shows(
        browser: Browser, audited: LiveServer) -> None:
    console = Console()
    page = _login(browser, audited, console, "auditor", "/audit")
    nav = page.locator("nav.topnav a")
    expect(nav).to_have_text(["Tables", "History", "Audit"])
    expect(page.locator(".pager .shown").first).to_contain_text("Events 1–50 of")
    _readable(page)
    shot(page, "audit")
    page.click("a[rel=next] >> nth=0")
    expect(page).to_have_url(re.compile(r"page=2"))
    page.select_option("select[name=action]", "coup_amended")
    page.fill("form.filters input[name=shoe]", "S1")
    page.click("form.filters button[type=submit]")
    expect(page.locator("table.events tbody tr")).to_have_count(1)
    expect(page.locator("table.events")).to_contain_text(
        "coup 2 amended: Player → Tie; requested by dealer, approved by super, "
        "reason: keyed P for a tie")
    expect(page.locator(".export-form input[name=shoe]")).to_have_value("S1")
    _readable(page)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing off the side
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    assert console.errors == []


def test_history_is_readable_and_pages_to_each_shoe(browser: Browser,
                                                    audited: LiveServer) -> None:
    console = Console()
    store = Store.open(audited.root)
    floor = Floor(store)
    for n in range(2, 56):
        floor.open_shoe("T2", f"H{n:02d}")
        floor.coups("T2", "BP")
        floor.close("T2")
    store.journal.close()
    page = console.watch(browser.new_page(viewport={"width": 1400, "height": 900}))
    page.goto(f"{audited.url}/history")
    expect(page.locator(".pager .shown").first).to_have_text("Shoes 1–50 of 55")
    _readable(page)
    page.select_option("select[name=table]", "T2")
    page.click("form.filters button[type=submit]")
    expect(page.locator(".pager .shown").first).to_have_text("Shoes 1–50 of 54")
    page.click("a[rel=next] >> nth=0")
    expect(page.locator("table.shoes a")).to_have_text(["H05", "H04", "H03", "H02"])
    page.click("table.shoes a >> text=H03")
    expect(page.locator("table.coups tr")).to_have_count(3, timeout=15_000)
    expect(page.locator("nav.topnav a").nth(1)).to_have_text("History")
    page.locator("nav.topnav a").nth(1).click()
    expect(page).to_have_url(f"{audited.url}/history")
    assert console.errors == []
