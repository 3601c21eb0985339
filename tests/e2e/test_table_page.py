"""The table page (/tables/<id>) as drawn: the board large with every bet's exact odds beside
it, and charts whose titles, subtitles and legends are never clipped or overlapping."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from roads.engine import deal_shoe
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.store import Store
from tests.e2e.conftest import Console, LiveServer, free_port, shot
from tests.floor import Dealer

CHARTS = (Path(__file__).parent / "charts.js").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dealing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """T1: 40 card-level coups of an EZ shoe (side bets); T2: outcome-only coups."""
    root = tmp_path_factory.mktemp("table-page") / "store"
    store = Store.create(root)
    live = Dealer(store)
    shoe = deal_shoe(get_rules("ez-8"), 77)
    live.open_shoe("T1", "S1", "ez-8", "dealer", list(shoe.burn_cards))
    for player, banker in shoe.coups[:40]:
        live.enter_coup("T1", CoupEntry(player_cards=player, banker_cards=banker), "dealer")
    live.open_shoe("T2", "S2", "standard-8", "dealer")
    for outcome in "BPPBTBPB":
        live.enter_coup("T2", CoupEntry(outcome=outcome), "dealer")
    store.journal.close()
    server = LiveServer(root, free_port(), "")
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize(("table", "bets", "charts"), [
    ("T1", ["Banker", "Player", "Tie", "Dragon 7", "Panda 8"], 4),
    ("T2", ["Banker", "Player", "Tie", "Player pair", "Banker pair"], 3)])
@pytest.mark.parametrize(("width", "height"), [(1400, 900), (390, 844)])
def test_board_beside_the_odds_and_charts_that_never_clip(
        browser: Browser, dealing_server: LiveServer, table: str, bets: list[str], charts: int,
        width: int, height: int) -> None:
    console = Console()
    page = console.watch(browser.new_page(viewport={"width": width, "height": height}))
    page.goto(f"{dealing_server.url}/tables/{table}")
    expect(page.locator(".js-plotly-plot")).to_have_count(charts, timeout=15_000)
    expect(page.locator(".js-plotly-plot .gtitle")).to_have_count(charts)
    expect(page.locator("table.odds tr.bet th")).to_have_text(bets)
    for row in page.locator("table.odds tr.bet").all():
        wins, edge = row.locator("td.number").all_text_contents()
        assert wins.endswith("%") and edge.endswith("%") and float(wins[:-1]) > 0
    measured: dict[str, Any] = page.evaluate(CHARTS)
    assert measured["problems"] == [], measured["problems"]
    board, odds = measured["board"], measured["odds"]
    if width >= 1000:
        # Beside the board, which takes most of the width.
        assert odds["left"] >= board["right"] and odds["top"] < board["bottom"], measured
        assert board["width"] >= 0.6 * measured["page"], measured
    else:
        assert odds["top"] >= board["bottom"], measured  # a phone: below the board
    shot(page, f"dashboard-table-{table}-{width}x{height}")
    page.close()
    assert console.errors == []
