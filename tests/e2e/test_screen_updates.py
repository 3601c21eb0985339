"""A real browser applies the compact screen updates: after a coup (an update), a correction
(a whole state: the board is rebuilt) and a coup after it, the live page is the page a
freshly opened screen draws — same DOM, every road mark an SVG element — with no console
error."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from roads.engine import deal_shoe
from roads.rules import get_rules
from roads.store import Store
from roads.tables import TableService
from tests.e2e.conftest import Console, LiveServer
from tests.floor import DEALER, SUPERVISOR

#: Records the type and base of every message the page's socket receives.
RECORDER = """
window.__messages = [];
const PageSocket = window.WebSocket;
window.WebSocket = function (url) {
  const socket = new PageSocket(url);
  socket.addEventListener('message', (event) => {
    const m = JSON.parse(event.data);
    window.__messages.push([m.type, m.seq, m.base]);
  });
  return socket;
};
"""
#: What the page shows, and whether every element inside the roads is SVG (HTML parsed
#: into an SVG element as HTML would draw nothing).
SHOWN = """() => {
  const body = document.getElementById('screen-body');
  const marks = [...body.querySelectorAll('svg.road-svg *, svg.ask-marks *')];
  return {html: body.innerHTML, seq: document.getElementById('screen-root').dataset.seq,
          marks: marks.length, svg: marks.every((el) => el instanceof SVGElement)};
}"""


def _open(browser: Browser, server: LiveServer, console: Console) -> Page:
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    context.add_init_script(RECORDER)
    page = console.watch(context.new_page())
    page.goto(f"{server.url}/table/T1")
    expect(page.locator("#screen-root[data-seq]")).to_have_count(1, timeout=10_000)
    return page


def _same_as_a_fresh_screen(browser: Browser, server: LiveServer, console: Console,
                            live: Page, seq: int) -> None:
    expect(live.locator(f'#screen-root[data-seq="{seq}"]')).to_have_count(1, timeout=10_000)
    fresh = _open(browser, server, console)
    expect(fresh.locator(f'#screen-root[data-seq="{seq}"]')).to_have_count(1)
    shown, expected = live.evaluate(SHOWN), fresh.evaluate(SHOWN)
    assert shown["svg"] and expected["svg"] and shown["marks"] > 100
    assert shown == expected
    fresh.context.close()


def test_the_browser_applies_updates_through_a_coup_and_a_correction(
        browser: Browser, live_server: LiveServer) -> None:
    console = Console()
    shoe = deal_shoe(get_rules("standard-8"), 11)
    hands: list[dict[str, object]] = [{"player_cards": list(p), "banker_cards": list(b)}
                                      for p, b in shoe.coups]
    live_server.post("/api/tables/T1/shoes", {"shoe_id": "S1",
                                              "burn_cards": list(shoe.burn_cards)})
    for hand in hands[:30]:
        live_server.post("/api/tables/T1/coups", hand)
    page = _open(browser, live_server, console)

    seq = int(str(live_server.post("/api/tables/T1/coups", hands[30])["seq"]))
    _same_as_a_fresh_screen(browser, live_server, console, page, seq)
    assert page.evaluate("window.__messages.at(-1)")[0] == "update"

    service = TableService(Store.open(live_server.root))  # another entry path, same journal
    request = service.request_correction(DEALER, "T1", "S1", 12, "video review")
    seq = service.decide_correction(SUPERVISOR, request.seq, True).seq
    _same_as_a_fresh_screen(browser, live_server, console, page, seq)
    assert page.evaluate("window.__messages.at(-1)")[0] == "state"  # the shoe was rebuilt
    expect(page.locator(".coupno")).to_have_text("Coup 30")

    seq = int(str(live_server.post("/api/tables/T1/coups", hands[31])["seq"]))
    _same_as_a_fresh_screen(browser, live_server, console, page, seq)
    kinds = [m[0] for m in page.evaluate("window.__messages")]
    assert kinds[0] == "state" and kinds[-1] == "update" and kinds.count("state") == 2
    service.journal.close()
    assert console.errors == []
