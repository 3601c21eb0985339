"""The sample files of ``data/samples/``: made by their script, small, and ingested as their
description says (each file is read back here with the ``csv`` module, independently)."""

from __future__ import annotations

import csv
import importlib.util
import io
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl
import pytest

from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Selection, Store
from roads.store.verify import verify

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
RULES = get_rules("standard-8")


def _make() -> ModuleType:
    spec = importlib.util.spec_from_file_location("samples_make", SAMPLES / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(name: str, delimiter: str = ",") -> list[dict[str, str]]:
    text = (SAMPLES / name).read_text(encoding="utf-8-sig")
    return list(csv.DictReader(io.StringIO(text), delimiter=delimiter))


def _report(store: Store, name: str, **options: Any) -> dict[str, Any]:
    replace = bool(options.pop("replace", False))
    result = ingest([SAMPLES / name], store, ReadOptions(**options), RULES, replace=replace)
    files: list[dict[str, Any]] = result.report["files"]
    return files[0]


def test_the_script_makes_the_committed_files_byte_for_byte(tmp_path: Path) -> None:
    make = _make()
    make.main(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(make.FILES)
    for name in make.FILES:
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), name
        assert (SAMPLES / name).stat().st_size < 100_000, name


def test_the_card_level_export(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    report = _report(store, "cards.csv")
    rows = _rows("cards.csv")
    assert report["parser"] == "plain CSV" and report["ignored_columns"] == []
    assert (report["rows_read"], report["accepted"], report["flagged"],
            report["quarantined"]) == (len(rows), len(rows), 0, 0)
    coups = store.read.coups()
    assert sorted({(r["Table"], r["Shoe"]) for r in rows}) == sorted(
        set(coups.select("table_id", "shoe_id").iter_rows())) and len(
        {r["Table"] for r in rows}) == 2
    stored = {(r["table_id"], r["shoe_id"], r["coup"]): r for r in coups.to_dicts()}
    for r in rows:
        coup = stored[(r["Table"], r["Shoe"], int(r["Hand No"]))]
        assert coup["outcome"] == r["Result"]
        assert " ".join(coup["player_cards"]) == r["Player Cards"]
        assert " ".join(coup["banker_cards"]) == r["Banker Cards"]


def test_the_outcome_lines(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    report = _report(store, "outcomes.txt", table_id="T7")
    lines = (SAMPLES / "outcomes.txt").read_text().split()
    assert report["format"] == "shoe-lines" and report["accepted"] == sum(map(len, lines))
    for number, line in enumerate(lines, 1):
        coups = store.read.coups(Selection("T7", f"outcomes-{number}"))
        assert "".join(coups["outcome"].to_list()) == line
        assert coups["player_cards"].null_count() == coups.height


def test_the_file_with_unknown_card_headers_then_its_replace(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    first = _report(store, "unknown-headers.csv")
    (warning,) = first["warnings"]
    assert "'Cards P', 'Cards B' hold hands of cards" in warning
    assert "--map 'player_cards=Cards P' --map 'banker_cards=Cards B'" in warning
    assert store.read.coups()["player_cards"].null_count() == first["accepted"] == 80
    second = _report(store, "unknown-headers.csv", replace=True,
                     mapping={"player_cards": "Cards P", "banker_cards": "Cards B"})
    assert (second["replaced"], second["warnings"], second["flagged"]) == (80, [], 0)
    stored = {r["coup"]: r for r in store.read.coups().to_dicts()}
    for r in _rows("unknown-headers.csv"):
        coup = stored[int(r["Coup"])]
        assert (" ".join(coup["player_cards"]), " ".join(coup["banker_cards"]),
                coup["outcome"]) == (r["Cards P"], r["Cards B"], r["Winner"])


#: The dirty file's outcome spellings, written out here.
LABELS = {"B": {"庄", "莊", "Банк", "Banker", "B"}, "P": {"闲", "閒", "Игрок", "player win", "P"},
          "T": {"和", "和局", "Ничья", "Tie", "T"}}


def test_the_dirty_multilingual_file(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    report = _report(store, "dirty.csv")
    rows = _rows("dirty.csv", ";")
    assert report["columns"] == {"table_id": "台号", "shoe_id": "靴号", "coup": "局號",
                                 "outcome": "Результат", "player_cards": "闲牌",
                                 "banker_cards": "庄牌", "dealt_at": "Время"}
    assert report["ignored_columns"] == ["荷官"] and report["warnings"] == []
    assert report["quarantined_by_reason"] == {
        "unreadable card in the Player hand": 1, "unknown outcome label": 1,
        "cards recorded for one side only": 1, "no shoe (give a shoe column or --shoe)": 1}
    assert (report["rows_read"], report["accepted"]) == (len(rows), len(rows) - 4)
    assert (report["flagged"], report["flags_by_rule"]) == (1, {"outcome": 1})
    (flag,) = pl.read_parquet(next((store.root / "flags").glob("*.parquet"))).to_dicts()
    assert (flag["coup"], flag["rule"]) == (7, "outcome")  # recorded Banker, cards a Tie
    quarantined = list((store.root / "quarantine").glob("*.jsonl"))
    assert len(quarantined) == 1 and len(quarantined[0].read_text().splitlines()) == 4
    coups = {r["coup"]: r for r in store.read.coups(Selection("M-08")).to_dicts()}
    good = [r for r in rows if r["靴号"] and r["Результат"] != "maybe"
            and r["闲牌"] and r["庄牌"] and "9x" not in r["闲牌"]]
    assert sorted(coups) == sorted(int(r["局號"]) for r in good)
    for r in good:  # stored as recorded, whatever the spelling (the flagged one too)
        assert r["Результат"] in LABELS[coups[int(r["局號"])]["outcome"]]


@pytest.mark.parametrize("order", [("dirty.csv", "unknown-headers.csv"),
                                   ("unknown-headers.csv", "dirty.csv")])
def test_the_samples_together_compact_and_verify(tmp_path: Path, order: tuple[str, ...]
                                                 ) -> None:
    """A day holding the files of two runs (one with cards, one outcome-only) compacts into
    one file and still verifies (the first order once failed on a read-only array)."""
    store = Store.create(tmp_path / "store")
    for name in order:
        _report(store, name, table_id="T7")
    before = store.read.coups().sort("table_id", "shoe_id", "coup")
    assert store.compact()["files_replaced"] >= 2
    assert verify(store).ok
    assert store.read.coups().sort("table_id", "shoe_id", "coup").equals(before)
