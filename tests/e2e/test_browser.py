"""What only a browser shows: live updates, reconnects, login and entry, language switch.

Each test ends by asserting the browser console has no errors.
"""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from roads.ingest.entry import CoupEntry
from roads.store import Store
from tests.e2e.conftest import PASSWORD, Console, LiveServer, shot
from tests.floor import Dealer


def _screen(browser: Browser, server: LiveServer, console: Console, query: str = "") -> Page:
    page = console.watch(browser.new_page(viewport={"width": 1920, "height": 1080}))
    page.goto(f"{server.url}/table/T1{query}")
    expect(page.locator("#screen-root[data-seq]")).to_have_count(1, timeout=10_000)
    return page


def _login(browser: Browser, server: LiveServer, console: Console, user: str) -> Page:
    page = console.watch(browser.new_context().new_page())
    page.goto(f"{server.url}/operator/T1")
    expect(page).to_have_url(re.compile(r"/login\?next="))
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    return page


def test_posted_coup_appears_on_an_open_table_screen(browser: Browser,
                                                      live_server: LiveServer) -> None:
    console = Console()
    page = _screen(browser, live_server, console)
    expect(page.locator(".status-text")).to_contain_text("not open yet")
    live_server.post("/api/tables/T1/shoes", {"shoe_id": "S1"})
    live_server.post("/api/tables/T1/coups", {"player_cards": ["9h", "Kd"],
                                              "banker_cards": ["2c", "3c"]})
    expect(page.locator(".coupno")).to_have_text("Coup 1")
    expect(page.locator(".last-outcome")).to_contain_text("Player wins")
    for outcome in "BBPT":
        live_server.post("/api/tables/T1/coups", {"outcome": outcome})
    expect(page.locator(".coupno")).to_have_text("Coup 5")
    expect(page.locator("table.shares .s-banker td").first).to_have_text("2")
    # Ask: the hypothetical Big Road cell becomes visible, then hides again.
    page.keyboard.press("b")
    expect(page.locator("#screen-root")).to_have_class(re.compile("asking-b"))
    assert page.locator("g.road.big_road g.ask-b").first.is_visible()
    shot(page, "table-screen")
    assert console.errors == []


def test_screen_resynchronises_after_a_server_restart(browser: Browser,
                                                       live_server: LiveServer) -> None:
    console = Console()
    live_server.post("/api/tables/T1/shoes", {"shoe_id": "S1"})
    live_server.post("/api/tables/T1/coups", {"outcome": "B"})
    page = _screen(browser, live_server, console)
    expect(page.locator(".coupno")).to_have_text("Coup 1")
    live_server.stop()
    expect(page.locator("#connection")).to_be_visible(timeout=10_000)
    # While the server is down, coups keep arriving in the journal (another entry path).
    store = Store.open(live_server.root)
    live = Dealer(store)
    for outcome in "PPT":
        live.enter_coup("T1", CoupEntry(outcome=outcome), "dealer")
    store.journal.close()
    live_server.start()
    expect(page.locator(".coupno")).to_have_text("Coup 4", timeout=15_000)
    expect(page.locator("#connection")).to_be_hidden()
    expect(page.locator("table.shares .s-player td").first).to_have_text("2")
    # The only console errors allowed are the refused connections while the server was down.
    assert [e for e in console.errors if "WebSocket" not in e and "ERR_CONNECTION" not in e] \
        == []


def test_operator_entry_and_supervised_correction(browser: Browser,
                                                  live_server: LiveServer) -> None:
    console = Console()
    screen = _screen(browser, live_server, console)
    dealer = _login(browser, live_server, console, "dealer")
    expect(dealer.locator("#operator")).to_be_visible()
    dealer.fill("#shoe-id", "S1")
    dealer.click("#open-shoe")
    expect(dealer.locator("#op-status")).to_contain_text("Shoe S1")
    # Keyboard entry: 1 = Banker, 5 = Banker pair, Enter confirms; 2 = Player.
    for number, keys in enumerate((("1", "5"), ("2",), ("1",)), start=1):
        for k in keys:
            dealer.keyboard.press(k)
        dealer.keyboard.press("Enter")
        expect(dealer.locator("#message")).to_contain_text(f"Coup {number} entered")
    expect(dealer.locator("#op-status")).to_contain_text("3 coups")
    expect(screen.locator(".coupno")).to_have_text("Coup 3")
    expect(screen.locator("table.shares .s-banker_pair td").first).to_have_text("1")
    # Card entry refuses an impossible coup and accepts a legal one.
    dealer.fill("#player-cards", "2h 3d")
    dealer.fill("#banker-cards", "Kc Qc")
    dealer.click("#cards-form button[type=submit]")
    expect(dealer.locator("#message")).to_contain_text("impossible coup")
    dealer.fill("#player-cards", "9h Kd")
    dealer.fill("#banker-cards", "2c 3c")
    dealer.click("#cards-form button[type=submit]")
    expect(screen.locator(".coupno")).to_have_text("Coup 4")
    shot(dealer, "operator")
    # The dealer asks to change coup 2 (Player) into a Tie, in the correction form;
    # nothing changes yet.
    dealer.locator("button.request-correction[data-coup='2']").click()
    dealer.fill("#fix-reason", "keyed the wrong side")
    dealer.check("#correction-form input[name=outcome][value=T]")
    dealer.click("#correction-form button[type=submit]")
    expect(dealer.locator("#pending tr")).to_have_count(1)
    expect(dealer.locator("#pending button")).to_have_count(0)  # a dealer cannot approve
    expect(screen.locator("table.shares .s-tie td").first).to_have_text("0")
    supervisor = _login(browser, live_server, console, "super")
    supervisor.locator("#pending button[data-decide=approve]").click()
    expect(supervisor.locator("#message")).to_contain_text("approved")
    expect(screen.locator("table.shares .s-tie td").first).to_have_text("1")
    expect(screen.locator("table.shares .s-player td").first).to_have_text("1")
    assert console.errors == []


def test_a_viewer_cannot_write(browser: Browser, live_server: LiveServer) -> None:
    console = Console()
    viewer = _login(browser, live_server, console, "viewer")
    expect(viewer.locator("h1")).to_have_text("Not allowed")
    # The viewer's own session (its cookies) asking to write directly is refused too.
    response = viewer.context.request.post(f"{live_server.url}/operator/T1/action",
                                           data={"action": "open_shoe", "shoe_id": "X"})
    assert response.status == 403
    assert console.errors == []


def test_language_switch_relabels_the_screen(browser: Browser, live_server: LiveServer) -> None:
    console = Console()
    live_server.post("/api/tables/T1/shoes", {"shoe_id": "S1"})
    live_server.post("/api/tables/T1/coups", {"outcome": "B"})
    page = _screen(browser, live_server, console)
    expect(page.locator("section.board")).to_contain_text("Big Road")
    page.click("button.lang[data-lang='zh-Hant']")
    expect(page.locator("section.board")).to_contain_text("大眼仔")
    expect(page.locator("header .ids")).to_contain_text("枱")
    assert "lang=zh-Hant" in page.url
    shot(page, "table-screen-zh-Hant")
    page.click("button.lang[data-lang='ru']")
    expect(page.locator("section.board")).to_contain_text("Большая дорога")
    assert console.errors == []


def test_dashboard_overview_table_page_and_history(browser: Browser,
                                                    live_server: LiveServer) -> None:
    console = Console()
    live_server.post("/api/tables/T1/shoes", {"shoe_id": "S1"})
    for outcome in "BPPBT":
        live_server.post("/api/tables/T1/coups", {"outcome": outcome})
    page = console.watch(browser.new_page(viewport={"width": 1400, "height": 900}))
    page.goto(live_server.url)
    card = page.locator(".table-card")
    expect(card).to_have_count(1, timeout=10_000)
    expect(card).to_contain_text("5 coups")
    live_server.post("/api/tables/T1/coups", {"outcome": "B"})
    expect(card).to_contain_text("6 coups")  # the overview is live
    shot(page, "dashboard-overview")
    page.click(".table-card h3")
    expect(page.locator(".js-plotly-plot")).to_have_count(3, timeout=15_000)
    shot(page, "dashboard-table")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.goto(f"{live_server.url}/history")
    expect(page.locator("table.shoes a")).to_have_text(["S1"], timeout=10_000)
    page.click("table.shoes a")
    expect(page.locator("table.coups tr")).to_have_count(7)
    shot(page, "history-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    assert console.errors == []
