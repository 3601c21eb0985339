"""In Debian's Chromium: the pages work under the Content-Security-Policy (no console
errors), a casino name full of markup is shown as text, and the policy blocks an injected
inline script should any escaping ever be missed."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.e2e.conftest import ARGS, CHROMIUM, Console
from tests.security.conftest import PASSWORD, LiveFactory, Socket

NAME = '<script>window.owned = 1</script>Casino "Lisboa"'


def _with_browser(test: Callable[[Browser], None]) -> None:
    """Run ``test`` with its own Chromium in its own thread: Playwright's sync API refuses a
    thread where an event loop runs, and the e2e suite's session browser keeps one running
    in the main thread."""
    def run() -> None:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                test(browser)
            finally:
                browser.close()

    with ThreadPoolExecutor(1) as thread:
        thread.submit(run).result()


@pytest.fixture
def server(make_live: LiveFactory) -> Socket:
    live = make_live(casino=NAME)

    def post(path: str, body: dict[str, object]) -> None:
        request = urllib.request.Request(
            f"{live.url}{path}", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {live.key}"})
        urllib.request.urlopen(request, timeout=10).close()

    post("/api/tables/T1/shoes", {"shoe_id": "S1"})
    for outcome in "BPPBT":
        post("/api/tables/T1/coups", {"outcome": outcome})
    return live


def _watch(console: Console, page: Page) -> Page:
    """Console errors of the page, plus every CSP violation (reported before any script of
    the page runs, on every page it navigates to)."""
    page.add_init_script("""window.violations = [];
        document.addEventListener('securitypolicyviolation', e => {
            window.violations.push(e.violatedDirective);
            console.error('CSP violation: ' + e.violatedDirective); });""")
    return console.watch(page)


def test_dash_pages_work_under_the_policy_and_show_markup_as_text(server: Socket) -> None:
    _with_browser(lambda browser: _pages_work(browser, server))


def _pages_work(browser: Browser, server: Socket) -> None:
    console = Console()
    page = _watch(console, browser.new_page(viewport={"width": 1400, "height": 900}))
    page.goto(server.url)
    expect(page.locator(".table-card")).to_have_count(1, timeout=15_000)
    assert page.title() == NAME  # the text, not a script
    expect(page.locator(".topnav .brand")).to_have_text(NAME)
    page.click(".table-card h3")
    expect(page.locator(".js-plotly-plot")).to_have_count(3, timeout=15_000)
    page.goto(f"{server.url}/history")
    expect(page.locator("table.shoes a")).to_have_text(["S1"], timeout=15_000)
    for path in ("/table/T1", "/login"):
        page.goto(f"{server.url}{path}")
        expect(page.locator("body")).to_contain_text("Lisboa", timeout=15_000)
    page.fill("input[name=user]", "dealer")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{server.url}/operator/T1")
    expect(page.locator("#op-status")).not_to_be_empty(timeout=15_000)
    assert page.evaluate("window.owned") is None
    assert console.errors == []  # CSP violations included


def test_the_policy_blocks_an_injected_inline_script(server: Socket) -> None:
    _with_browser(lambda browser: _injection_blocked(browser, server))


def _injection_blocked(browser: Browser, server: Socket) -> None:
    console = Console()
    page = _watch(console, browser.new_page())
    page.goto(server.url)
    expect(page.locator(".table-card")).to_have_count(1, timeout=15_000)
    page.evaluate("""() => {
        document.body.insertAdjacentHTML('beforeend',
            '<img src="/nothing" onerror="window.hit = 1">');
        const s = document.createElement('script');
        s.textContent = 'window.hit = 2';
        document.body.appendChild(s); }""")
    page.wait_for_function("window.violations.length >= 2")
    assert page.evaluate("window.hit") is None
    assert set(page.evaluate("window.violations")) <= {"script-src-attr", "script-src-elem",
                                                       "script-src"}
    assert console.errors and all(re.search(r"Content Security Policy|CSP violation|404", e)
                                  for e in console.errors), console.errors
