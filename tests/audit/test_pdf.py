"""The PDF report and the XLSX workbook of a bundle, read back with poppler and zipfile."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from roads.audit.bundle import BundleError, Slice, export_bundle, verify
from roads.engine import deal_shoe
from roads.rules import get_rules
from roads.store import Store
from roads.tables import Actor
from tests.floor import Floor

POPPLER = shutil.which("pdftotext") and shutil.which("pdftoppm")
HANDS = deal_shoe(get_rules("standard-8"), 1).coups[:5]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    floor = Floor(tmp_path_factory.mktemp("store"))
    floor.open_shoe("T1", "S1")
    for player, banker in HANDS:
        floor.coup("T1", player=player, banker=banker)
    floor.void("T1", "S1", 3, "card exposed on the floor")
    floor.close("T1")
    return floor.store


def _export(store: Store, out: Path, page: str = "A4") -> dict[str, object]:
    return export_bundle(store, Slice(table_id="T1", shoe_id="S1"), out, "auditor-bo",
                         formats=("pdf", "xlsx"), page_format=page, casino="Casino Test")


def _text(pdf: Path, layout: bool = True) -> str:
    return subprocess.run(["pdftotext", *(["-layout"] if layout else []), str(pdf), "-"],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(autouse=True)
def poppler() -> None:
    if not POPPLER:
        pytest.fail("poppler-utils (pdftoppm, pdftotext) missing: `make system-packages`")


def test_pdf_renders_and_holds_every_coup_and_correction(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    manifest = _export(store, out)
    assert verify(out) == manifest
    pdf = out / "report-a4.pdf"
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(pdf), str(tmp_path / "page")],
                   check=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) >= 4 and all(p.stat().st_size > 2000 for p in pages)
    text = _text(pdf)
    for n, (player, banker) in enumerate(HANDS, start=1):  # every coup's cards
        line = next(x for x in text.splitlines() if re.match(rf"\s*{n}\s", x))
        assert " ".join(player) in line and " ".join(banker) in line
        assert "cards (dealer)" in line  # how it was entered, and by whom
        if n == 3:  # voided: listed and marked, and among the corrections
            assert "voided" in line
            corrections = " ".join(_text(pdf, layout=False).split("Corrections (1)")[1]
                                   .split("Statistics")[0].split())
            assert "T1/S1/3" in corrections and "void" in corrections
            assert all(card in corrections for card in (*player, *banker))
    flowing = " ".join(_text(pdf, layout=False).split())  # wrapped cells read in order
    assert "card exposed on the floor" in flowing and "super" in flowing
    assert "4 coups" in flowing and "1 voided, listed and marked" in flowing
    assert "Casino Test" in text and "auditor-bo" in text and "standard-8" in text
    # Page numbers and the data digest on every page.
    digest = str(manifest["data_digest"])
    per_page = text.split("\f")[:-1]
    assert len(per_page) == len(pages)
    for n, page in enumerate(per_page, start=1):
        assert f"Page {n} of {len(pages)}" in page and digest in page
    assert "Randomness tests" in text and "Integrity findings" in text


def test_letter_pages_and_a_changed_pdf_is_caught(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    _export(store, out, page="Letter")
    info = subprocess.run(["pdfinfo", str(out / "report-letter.pdf")], check=True,
                          capture_output=True, text=True).stdout
    assert re.search(r"Page size:\s+612 x 792 pts \(letter\)", info)
    data = bytearray((out / "report-letter.pdf").read_bytes())
    data[len(data) // 3] ^= 0x20
    (out / "report-letter.pdf").write_bytes(bytes(data))
    with pytest.raises(BundleError, match=r"report-letter\.pdf"):
        verify(out)


def test_xlsx_has_a_sheet_per_table(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    manifest = _export(store, out)
    with zipfile.ZipFile(out / "bundle.xlsx") as book:
        workbook = book.read("xl/workbook.xml").decode()
        sheets = re.findall(r'<sheet name="([^"]+)"', workbook)
        assert sheets == ["coups", "shoes", "corrections", "journal", "file_shoes"]
        coups = book.read("xl/worksheets/sheet1.xml").decode()
        assert coups.count("<row ") == 1 + 5  # header + every coup (the void marked)
        strings = book.read("xl/sharedStrings.xml").decode() if \
            "xl/sharedStrings.xml" in book.namelist() else coups
        assert " ".join(HANDS[-1][0]) in strings
    files = json.loads((out / "manifest.json").read_text())["files"]
    assert files["bundle.xlsx"]["sha256"] == manifest["files"]["bundle.xlsx"]["sha256"]  # type: ignore[index]


def test_unknown_format_and_page_size_are_refused(store: Store, tmp_path: Path) -> None:
    from roads.errors import InputError
    with pytest.raises(InputError, match="unknown export format"):
        export_bundle(store, Slice(shoe_id="S1"), tmp_path / "a", "x", formats=("docx",))
    with pytest.raises(InputError, match="A4 or Letter"):
        export_bundle(store, Slice(shoe_id="S1"), tmp_path / "b", "x", page_format="A3")


def test_names_outside_latin1_print_as_typed(tmp_path: Path) -> None:
    floor = Floor(tmp_path / "store")
    store = floor.store
    alexis, maria = Actor.user("Αλέξης", "dealer"), Actor.user("Мария", "supervisor")
    floor.open_shoe("Стол-7", "S1", who=alexis)
    for player, banker in HANDS[:2]:
        floor.coup("Стол-7", player=player, banker=banker, who=alexis)
    request = floor.service.request_correction(alexis, "Стол-7", "S1", 2, "ошибка ввода")
    floor.service.decide_correction(maria, request.seq, True)
    out = tmp_path / "bundle"
    export_bundle(store, Slice(table_id="Стол-7"), out, "auditor", formats=("pdf",))
    text = " ".join(_text(out / "report-a4.pdf", layout=False).split())
    assert "Стол-7" in text and "ошибка ввода" in text and "Мария" in text
