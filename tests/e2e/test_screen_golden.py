"""The table screen as drawn, at every screen shape it must fill: golden screenshots, the size
rules of three-metre legibility, and no element clipped, outside the screen or overlapping.

One seeded shoe (70 coups, the last a three-card Banker win) on a configured table; the screen
shows no clock, so the picture depends only on that state. ``ROADS_UPDATE_GOLDEN=1`` writes
the goldens (never silently otherwise: a missing golden fails); a mismatch leaves the fresh
screenshot and a difference image beside the other screenshots for review by eye.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops
from playwright.sync_api import Browser, Page, expect

from roads.engine import deal_shoe
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.store import Store
from tests.e2e.conftest import SCREENSHOTS, Console, LiveServer, free_port
from tests.floor import Dealer

GOLDEN = Path(__file__).parent / "golden"
LAYOUT = (Path(__file__).parent / "layout.js").read_text(encoding="utf-8")
UPDATE = os.environ.get("ROADS_UPDATE_GOLDEN") == "1"
SEED, COUPS = 20260517, 70
#: A pixel differs when a channel moves by more than this (anti-aliasing moves less) ...
PIXEL_THRESHOLD = 32
#: ... and a screenshot matches while at most this share of its pixels differ: one in ten
#: thousand, so a word in another colour (~1,000 pixels at 1920x1080) is caught.
MAX_DIFFERING = 0.0001
SITE = """casino = "Casino Marina Bay"
theme = "dark"
[tables.T1]
name = "Salon Privé 1"
rules = "standard-8"
min_bet = 100
max_bet = 50000
currency = "HKD"
"""
SHAPES = [("1920x1080", "dark"), ("1920x1200", "dark"), ("3840x2160", "dark"),
          ("1280x720", "dark"), ("1080x1920", "dark"), ("390x844", "dark"),
          ("1920x1080", "classic"), ("1920x1080", "colorblind"), ("390x844", "colorblind")]


@pytest.fixture(scope="module")
def seeded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose table T1 shows the first 70 coups of one seeded shoe."""
    tmp = tmp_path_factory.mktemp("golden")
    (tmp / "site.toml").write_text(SITE, encoding="utf-8")
    store = Store.create(tmp / "store")
    live = Dealer(store)
    shoe = deal_shoe(get_rules("standard-8"), SEED)
    live.open_shoe("T1", "S1", "standard-8", "dealer", list(shoe.burn_cards))
    for player, banker in shoe.coups[:COUPS]:
        live.enter_coup("T1", CoupEntry(player_cards=player, banker_cards=banker), "dealer")
    store.journal.close()
    server = LiveServer(tmp / "store", free_port(), "", tmp / "site.toml")
    server.start()
    yield server
    server.stop()


def open_screen(browser: Browser, server: LiveServer, console: Console, width: int,
                height: int, theme: str) -> Page:
    page = console.watch(browser.new_page(viewport={"width": width, "height": height}))
    page.goto(f"{server.url}/table/T1?theme={theme}&lang=en")
    expect(page.locator(".coupno")).to_have_text(f"Coup {COUPS}", timeout=15_000)
    page.evaluate("document.fonts.ready")
    return page


def differing_share(fresh: Image.Image, golden: Image.Image) -> float:
    """Share of pixels where some channel differs by more than the threshold."""
    red, green, blue = ImageChops.difference(fresh.convert("RGB"), golden.convert("RGB")).split()
    worst = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    return sum(worst.histogram()[PIXEL_THRESHOLD + 1:]) / (fresh.width * fresh.height)


def compare_with_golden(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    fresh_path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(fresh_path))
    golden_path = GOLDEN / f"{name}.png"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        Image.open(fresh_path).save(golden_path, optimize=True)
        return
    assert golden_path.exists(), (
        f"no golden {golden_path}: look at {fresh_path}, then write the goldens with "
        "ROADS_UPDATE_GOLDEN=1")
    fresh, golden = Image.open(fresh_path), Image.open(golden_path)
    assert fresh.size == golden.size, (fresh.size, golden.size)
    share = differing_share(fresh, golden)
    if share > MAX_DIFFERING:
        diff = ImageChops.difference(fresh.convert("RGB"), golden.convert("RGB"))
        diff.save(SCREENSHOTS / f"{name}-difference.png")
    assert share <= MAX_DIFFERING, (
        f"{name}: {share:.3%} of pixels differ from the golden (at most {MAX_DIFFERING:.3%}); "
        f"fresh {fresh_path}, difference {SCREENSHOTS / (name + '-difference.png')}")


@pytest.mark.parametrize(("size", "theme"), SHAPES, ids=[f"{s}-{t}" for s, t in SHAPES])
def test_screen_fills_the_screen_legibly_and_matches_its_golden(
        browser: Browser, seeded_server: LiveServer, size: str, theme: str) -> None:
    width, height = (int(x) for x in size.split("x"))
    console = Console()
    page = open_screen(browser, seeded_server, console, width, height, theme)
    measured: dict[str, Any] = page.evaluate(LAYOUT)
    assert measured["problems"] == [], measured["problems"]
    sizes = measured["sizes"]
    # The roads fill the height: nothing like the old empty bottom quarter.
    assert sizes["board_bottom"] >= 0.9, sizes
    if (width, height) == (1920, 1080):
        assert sizes["smallest_cell"] >= 28, sizes
        assert sizes["titles"] >= 24 and sizes["counts"] >= 24, sizes
        assert sizes["ask_labels"] >= 24 and sizes["header"] >= 24, sizes
    compare_with_golden(page, f"table-screen-{size}-{theme}")
    # Asking "B?" shows the hypothetical cells and rings its box without moving anything.
    page.keyboard.press("b")
    expect(page.locator("#screen-root")).to_have_class(re.compile("asking-b"))
    assert page.locator("g.road.big_road g.ask-b").first.is_visible()
    assert page.evaluate(LAYOUT)["problems"] == []
    page.close()
    assert console.errors == []


@pytest.mark.parametrize("size", sorted({s for s, _ in SHAPES}))
def test_a_table_not_open_says_so_legibly_at_every_size(browser: Browser,
                                                        seeded_server: LiveServer,
                                                        size: str) -> None:
    width, height = (int(x) for x in size.split("x"))
    console = Console()
    page = console.watch(browser.new_page(viewport={"width": width, "height": height}))
    page.goto(f"{seeded_server.url}/table/T2")
    expect(page.locator(".status-text")).to_have_text("Table not open yet", timeout=15_000)
    assert page.evaluate(LAYOUT)["problems"] == []
    font = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.status-text'))"
                         ".fontSize)")
    assert font >= 24
    page.close()
    assert console.errors == []
