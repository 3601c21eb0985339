"""A one-column CSV of outcomes (``Result`` then ``B``, ``P``, ``T``) is one outcome a row.

Before, a file without separators whose lines mostly looked like shoes was taken for shoe
lines, so ``Result\\nB\\nP\\nT`` became three one-coup shoes and its header a quarantined
"shoe line". An outcome header decides: the file is CSV, numbered in row order, and its
table and shoe come from --table and --shoe (each row is quarantined naming the field that
is missing without them). Shoe-line files keep being read as shoes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.ingest.readers import ReadOptions, detect_format
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Selection, Store


def _write(tmp_path: Path, text: str, name: str = "outcomes.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _quarantine(store: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted((store / "quarantine").glob("*.jsonl"))
            for line in f.read_text().splitlines()]


@pytest.mark.parametrize(("text", "outcomes"), [
    ("Result\nB\nP\nT\n", ["B", "P", "T"]),
    ("\ufeffOutcome\r\nBanker\r\nPlayer\r\nTie\r\nBanker\r\n", ["B", "P", "T", "B"]),
    ("结果\n庄\n闲\n和\n", ["B", "P", "T"]),
    ("Winner\nB\nP\nX\n", ["B", "P"]),  # (X: an unknown outcome, quarantined as such)
])
def test_a_one_column_outcome_csv_is_one_outcome_a_row(tmp_path: Path, text: str,
                                                       outcomes: list[str]) -> None:
    path = _write(tmp_path, text)
    assert detect_format(path) == "csv"
    store = Store.create(tmp_path / "store")
    report = ingest([path], store, ReadOptions(table_id="T1", shoe_id="S1"),
                    get_rules("standard-8")).report["files"][0]
    assert report["format"] == "csv" and report["rows_read"] == len(text.split()) - 1
    coups = store.read.coups().sort("coup")
    assert coups.select("table_id", "shoe_id", "coup", "outcome").rows() == [
        ("T1", "S1", n, o) for n, o in enumerate(outcomes, 1)]
    assert coups["player_cards"].null_count() == len(outcomes)


def test_without_table_or_shoe_each_row_is_set_aside_naming_the_missing_field(
        tmp_path: Path) -> None:
    path = _write(tmp_path, "Result\nB\nP\nT\n")
    for options, field, reason in (
            ([], "table_id", "no table (give a table column or --table)"),
            (["--table", "T1"], "shoe_id", "no shoe (give a shoe column or --shoe)")):
        store = tmp_path / f"store-{field}"
        result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(store),
                                           *options])
        assert result.exit_code == 1, result.output
        assert f"{path} (csv; " in result.output
        assert f"    quarantined: {reason}: 3\n" in result.output
        assert [(q["row"], q["field"], q["reason"]) for q in _quarantine(store)] == [
            (n, field, reason) for n in (1, 2, 3)]
        assert Store.open(store).read.coups().height == 0
    done = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "ok"),
                                     "--table", "T1", "--shoe", "S1"])
    assert done.exit_code == 0, done.output
    assert "3 rows read, 3 stored" in done.output
    coups = Store.open(tmp_path / "ok").read.coups(Selection("T1", "S1")).sort("coup")
    assert coups["outcome"].to_list() == ["B", "P", "T"]


@pytest.mark.parametrize(("text", "shoes"), [
    ("BBPPT\nPPB\n", {"outcomes-1": "BBPPT", "outcomes-2": "PPB"}),
    ("B\nP\nT\n", {"outcomes-1": "B", "outcomes-2": "P", "outcomes-3": "T"}),
    ("庄闲和\n", {"outcomes-1": "BPT"}),
])
def test_shoe_lines_stay_shoe_lines(tmp_path: Path, text: str, shoes: dict[str, str]) -> None:
    path = _write(tmp_path, text, "outcomes.txt")
    assert detect_format(path) == "shoe-lines"
    store = Store.create(tmp_path / "store")
    ingest([path], store, ReadOptions(table_id="T1"), get_rules("standard-8"))
    coups = store.read.coups(Selection("T1")).sort("shoe_id", "coup")
    got: dict[str, str] = {}
    for row in coups.iter_rows(named=True):
        got[row["shoe_id"]] = got.get(row["shoe_id"], "") + row["outcome"]
    assert got == shoes
