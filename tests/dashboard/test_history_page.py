"""The /history page over a record of 100,000 stored shoes plus live ones: the right shoes
on the first, a middle and the last page, the totals, every filter, and the links.

The store is built once for the module (100,000 simulated shoes over 12 tables, then a live
shoe sealed after a void, and one still in play). What each page should show comes from an
independent read: every shoe row of the record (``store.read.shoes()``, which reads the shoe
files themselves, not the shoe index the page queries), ordered as the page promises — shoes
in play first, then newest first, ties by table and shoe.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import polars as pl
import pytest
from fastapi.testclient import TestClient

from dashboard.app import create_app
from dashboard.config import SiteConfig
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store
from tests.dashboard.html_rows import Row, form_values, table_rows
from tests.floor import Floor

SHOES = 100_000
TABLES = 12


@dataclass
class Record:
    client: TestClient
    shoes: pl.DataFrame  # the oracle, in the page's order


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Record]:
    root = tmp_path_factory.mktemp("history") / "store"
    store = Store.create(root)
    write_simulation(Simulation(get_rules("standard-8"), SHOES, seed=11, tables=TABLES), store)
    floor = Floor(store)
    floor.open_shoe("LIVE-1", "L1")
    floor.coups("LIVE-1", "BPBPT")
    floor.void("LIVE-1", "L1", 2)
    floor.close("LIVE-1")  # sealed: now in the shoe index like the simulated shoes
    floor.open_shoe("LIVE-2", "L2")
    floor.coups("LIVE-2", "BB")
    oracle = store.read.shoes().sort(
        ["open", "started_at", "table_id", "shoe_id"], descending=[True, True, False, False])
    store.journal.close()
    app, _ = create_app(root, SiteConfig(), create=False)
    with TestClient(app.server) as client:
        yield Record(client, oracle)


def _rows(record: Record, query: str = "") -> tuple[str, list[Row]]:
    r = record.client.get(f"/history?{query}")
    assert r.status_code == 200, r.text[-500:]
    return r.text, table_rows(r.text, "shoes")


def _keys(rows: list[Row]) -> list[tuple[str, str]]:
    return [(r.cells[0], r.cells[1]) for r in rows]


def _expected(shoes: pl.DataFrame, offset: int = 0) -> list[tuple[str, str]]:
    return list(shoes.slice(offset, 50).select("table_id", "shoe_id").iter_rows())


def test_first_page_middle_page_and_last_page(record: Record) -> None:
    total = SHOES + 2
    assert record.shoes.height == total
    html, rows = _rows(record)
    assert _keys(rows) == _expected(record.shoes)
    assert f"Shoes 1–50 of {total:,}" in html  # "Shoes 1–50 of 100,002"
    assert rows[0].cells[:3] == ["LIVE-2", "L2", "in play"]
    assert rows[0].links == ["/shoes/LIVE-2/L2"]
    assert all(r.cells[2] == "closed" for r in rows[1:])
    html, rows = _rows(record, "page=1000")
    assert _keys(rows) == _expected(record.shoes, 49_950)
    assert f"Shoes 49,951–50,000 of {total:,}" in html
    assert "page 1,000 of 2,001" in html
    html, rows = _rows(record, "page=2001")
    assert _keys(rows) == _expected(record.shoes, 100_000)
    assert len(rows) == 2 and f"Shoes 100,001–100,002 of {total:,}" in html
    html, rows = _rows(record, "page=2002")
    assert rows == [] and "Page 2,002 is past the end" in html


def test_each_row_links_to_its_shoe_page(record: Record) -> None:
    _, rows = _rows(record, "page=7")
    for row in rows:
        assert row.links == [f"/shoes/{row.cells[0]}/{row.cells[1]}"]
    table_id, shoe_id = rows[3].cells[:2]
    expected = record.shoes.filter((pl.col("table_id") == table_id)
                                   & (pl.col("shoe_id") == shoe_id))["coups"].item()
    assert int(rows[3].cells[5]) == expected
    # The link opens the shoe's board and coups (a Dash page).
    r = record.client.post("/_dash-update-component", headers={"content-type": "application/json"},
                           content=json.dumps({
                               "output": "page.children",
                               "outputs": {"id": "page", "property": "children"},
                               "inputs": [{"id": "url", "property": "pathname",
                                           "value": rows[3].links[0]}]}))
    page = json.dumps(r.json(), ensure_ascii=False)
    assert r.status_code == 200 and f"Table {table_id} — shoe {shoe_id}" in page
    assert page.count('"type": "Tr"') == expected + 1  # the head and one row per coup


def test_a_corrected_shoe_counts_its_coups_after_the_correction(record: Record) -> None:
    _, rows = _rows(record, "table=LIVE-1")
    assert [(r.cells[1], r.cells[2], r.cells[5]) for r in rows] == [("L1", "closed", "4")]


def test_the_table_filter_offers_every_table_of_the_record(record: Record) -> None:
    html, rows = _rows(record, "table=SIM-03")
    options = html.split('<select name="table">')[1].split("</select>")[0]
    offered = [o.split(">")[1].split("<")[0] for o in options.split("<option")[2:]]
    assert offered == sorted(set(record.shoes["table_id"]))
    assert len(offered) == TABLES + 2
    _, selected = form_values(html, "/history")
    assert selected["table"] == "SIM-03"
    mine = record.shoes.filter(pl.col("table_id") == "SIM-03")
    assert _keys(rows) == _expected(mine)
    assert f"Shoes 1–50 of {mine.height:,}" in html


def test_date_range_and_state_filters(record: Record) -> None:
    day = pl.col("started_at").dt.date()
    june = record.shoes.filter((day >= date(2026, 6, 1)) & (day <= date(2026, 6, 30)))
    assert 0 < june.height < SHOES
    html, rows = _rows(record, "from=2026-06-01&to=2026-06-30&page=3")
    assert _keys(rows) == _expected(june, 100)
    assert f"Shoes 101–150 of {june.height:,}" in html
    values, _ = form_values(html, "/history")
    assert (values["from"], values["to"]) == ("2026-06-01", "2026-06-30")
    html, rows = _rows(record, "state=open")
    assert _keys(rows) == [("LIVE-2", "L2")] and "1 shoe" in html
    html, rows = _rows(record, "state=closed&table=SIM-01&from=2026-12-01")
    closed = record.shoes.filter(~pl.col("open") & (pl.col("table_id") == "SIM-01")
                                 & (day >= date(2026, 12, 1)))
    assert closed.height > 50 and _keys(rows) == _expected(closed)
    assert f"Shoes 1–50 of {closed.height:,}" in html


def test_page_links_carry_the_filters(record: Record) -> None:
    html, _ = _rows(record, "table=SIM-05&state=closed")
    assert 'href="/history?table=SIM-05&amp;state=closed&amp;page=2" rel="next"' in html
    assert 'rel="last"' in html and "page 1 of" in html


def test_an_empty_filter_says_so(record: Record) -> None:
    html, rows = _rows(record, "table=NOWHERE")
    assert rows == [] and "No shoes match." in html


def test_paging_writes_nothing(record: Record) -> None:
    """Paging never writes: the history is a read (no journal event per page)."""
    head = record.client.get("/health").json()["journal_seq"]
    for page in (1, 500, 2001):
        _rows(record, f"page={page}")
    assert record.client.get("/health").json()["journal_seq"] == head
