"""Attack: plant a formula in an export, through any text the store keeps.

Reproduced in issue 16: a correction reason, an ingested table or shoe id, or a user name
typed into the login form starting with ``=`` became a live formula in the XLSX and a
formula-looking cell in the CSVs. And the XLSX export crashed for any slice with two or
more sealed card-level shoes.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import polars as pl
import pytest

from roads.audit.bundle import FORMULA_START, Slice, csv_ready, export_bundle, verify
from roads.auth import Auth, AuthError
from roads.ingest.entry import CoupEntry
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store
from tests.floor import DEALER, Floor
from tests.security.conftest import PASSWORD, Site

TABLE, SHOE = "=1+2", "@SUM(A1)"  # ids an import offers (refused: ids are plain names)
IMPORTER = "+cmd|' /C calc'!A0"  # who ran the import (free text, stored with each coup)
REASON = '=HYPERLINK("http://evil.example","click")'
TYPED = "-2+3"  # typed into the login form as a user name
CARDS = CoupEntry(player_cards=("9h", "Kd"), banker_cards=("5s", "2c"))
MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("exports")
    floor = Floor(root / "store")
    s = floor.store
    csv = root / "import.csv"
    csv.write_text(f'table_id,shoe_id,coup,outcome\n"{TABLE}","{SHOE}",1,B\n'
                   f'"{TABLE}","{SHOE}",2,P\nT9,H1,1,B\nT9,H1,2,P\n', encoding="utf-8")
    result = ingest([csv], s, ReadOptions(), get_rules("standard-8"), actor=IMPORTER)
    assert result.quarantined == 2  # formula-like ids never become a table or a shoe
    auth = Auth(s.root, s.journal)
    auth.add_user("ana", "dealer", PASSWORD)
    for shoe in ("S1", "S2"):  # two sealed card-level shoes (the XLSX crash)
        floor.open_shoe("T1", shoe)
        floor.service.enter_coup(DEALER, "T1", CARDS)
        if shoe == "S1":  # a login attempt between the shoe's events
            with pytest.raises(AuthError):
                auth.login(TYPED, "not a password", "10.0.0.9")
            auth.flush_refusals(force=True)
        floor.service.enter_coup(DEALER, "T1", CARDS)
        floor.close("T1")
    floor.amend("T1", "S1", 2, CoupEntry(outcome="P", method="keypad"), REASON)
    return s



def _cells(book: Path) -> list[ElementTree.Element]:
    with zipfile.ZipFile(book) as z:
        sheets = [n for n in z.namelist() if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)]
        return [c for n in sheets for c in ElementTree.fromstring(z.read(n)).iter(f"{MAIN}c")]


def _text(cell: ElementTree.Element) -> str | None:
    node = cell.find(f"{MAIN}is/{MAIN}t")
    return None if node is None else node.text


def test_planted_formulas_are_inert_in_csv_and_xlsx(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    # An audit export that asks for the logins (a typed name is among them).
    export_bundle(store, Slice(), out, "auditor", formats=("xlsx",), logins=True)
    manifest = verify(out)  # the escaped CSVs still verify against the Parquet twins
    assert manifest["cells"] == "owasp-formula-prefix"
    csv = {name: (out / f"{name}.csv").read_text(encoding="utf-8")
           for name in ("coups", "shoes", "corrections", "journal")}
    assert f"'{IMPORTER}" in csv["coups"] and TABLE not in csv["coups"]
    assert "'=HYPERLINK(" in csv["corrections"]
    assert TYPED in csv["journal"]  # inside the event's JSON payload
    for name, text in csv.items():
        for row in pl.read_csv(text.encode(), infer_schema=False).iter_rows():
            for cell in row:
                assert cell is None or not cell.startswith(FORMULA_START), (name, cell)
    # Parquet and JSONL keep the exact text.
    assert set(pl.read_parquet(out / "coups.parquet")["table_id"]) == {"T9", "T1"}
    assert IMPORTER in set(pl.read_parquet(out / "coups.parquet")["entered_by"])
    assert pl.read_parquet(out / "corrections.parquet")["reason"].to_list() == [REASON]
    assert json.dumps(REASON) in (out / "journal.jsonl").read_text(encoding="utf-8")
    # The workbook: no formula anywhere, the planted text as text, coup numbers as numbers.
    cells = _cells(out / "bundle.xlsx")
    assert not [c for c in cells if c.find(f"{MAIN}f") is not None]
    texts = {_text(c) for c in cells}
    assert {f"'{IMPORTER}", f"'{REASON}"} <= texts
    assert not [t for t in texts if t and t.startswith(FORMULA_START)]
    numbers = [c for c in cells if c.get("t") is None and c.find(f"{MAIN}v") is not None]
    assert numbers, "numeric columns are written as numbers"


def test_xlsx_of_two_sealed_card_level_shoes(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    manifest = export_bundle(store, Slice(table_id="T1"), out, "auditor", formats=("xlsx",))
    assert manifest["files"]["coups.parquet"]["rows"] == 4
    with zipfile.ZipFile(out / "bundle.xlsx") as z:
        workbook = z.read("xl/workbook.xml").decode()
        coups = ElementTree.fromstring(z.read("xl/worksheets/sheet1.xml"))
    assert 'name="coups"' in workbook
    assert len(coups.findall(f"{MAIN}sheetData/{MAIN}row")) == 1 + 4  # header + coups


def test_numbers_stay_numbers_and_only_text_is_escaped() -> None:
    frame = pl.DataFrame({"total": [-5, 3], "note": ["-5", "ok"], "tab": ["\tx", "@y"],
                          "cards": [["9h", "Kd"], ["=x"]]})
    ready = csv_ready(frame)
    assert ready.schema["total"] == pl.Int64 and ready["total"].to_list() == [-5, 3]
    assert ready["note"].to_list() == ["'-5", "ok"]
    assert ready["tab"].to_list() == ["'\tx", "'@y"]
    assert ready["cards"].to_list() == ["9h Kd", "'=x"]
    assert csv_ready(frame, inert=False)["note"].to_list() == ["-5", "ok"]


def test_the_dashboard_exports_an_xlsx_of_several_card_level_shoes(site: Site) -> None:
    auth = {"authorization": f"Bearer {site.key}"}
    for shoe in ("S1", "S2"):
        site.client.post("/api/tables/T1/shoes", json={"shoe_id": shoe}, headers=auth)
        for _ in range(2):
            site.client.post("/api/tables/T1/coups", headers=auth,
                             json={"player_cards": ["9h", "Kd"], "banker_cards": ["5s", "2c"]})
        site.client.post("/api/tables/T1/shoes/close", headers=auth)
    csrf = site.login("auditor")
    r = site.client.post("/audit/export", content=f"csrf={csrf}&table=T1&from=2000-01-01"
                         "&to=2100-01-01&xlsx=1",
                         headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    [event] = [e for e in site.ctx.service.journal.events("T1") if e.kind == "data_exported"]
    assert event.payload["coups"] == 4 and "xlsx" in json.dumps(event.payload)
