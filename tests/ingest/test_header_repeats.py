"""A header that names one column twice stops the file; a blank header cell is named by its
position.

Before, ``Table,Shoe,Coup,Result,Result`` stored the first Result silently and listed the
second as ``Result_duplicated_0`` (polars' name, not in the file), and blank header cells
were listed as ``""``, ``_duplicated_0``, ...
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.errors import InputError
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Selection, Store


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "in.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "problem"), [
    ("Table,Shoe,Coup,Result,Result\nT1,S1,1,B,P\n",
     "columns 4 and 5 of the header are both 'Result'"),
    ('Table,Shoe,Coup,"Result",Result\nT1,S1,1,B,P\n',  # (quoted: the general path)
     "columns 4 and 5 of the header are both 'Result'"),
    ("Table;Shoe;Coup;Result;Note;Note\nT1;S1;1;B;x;y\n",
     "columns 5 and 6 of the header are both 'Note'"),
    ("Table,Shoe,Coup,Result,Player Cards,Banker Cards,player_cards\n"
     "T1,S1,1,B,2s 8h,3s 6c,9h Kd\n",
     "columns 5 and 7 of the header, 'Player Cards' and 'player_cards', both name "
     "player_cards"),
])
def test_a_header_naming_a_column_twice_stops_the_file_and_stores_nothing(
        tmp_path: Path, text: str, problem: str) -> None:
    path = _write(tmp_path, text)
    store = tmp_path / "store"
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(store)])
    assert (result.exit_code, result.output) == (
        2, f"roads: error: {path}: {problem}; nothing was stored: rename or remove one\n")
    assert not store.exists()  # (the store this ingest made goes again: it holds nothing)
    kept = Store.create(tmp_path / "kept")  # (into a store that was there: nothing stored)
    again = CliRunner().invoke(main, ["ingest", str(path), "--store", str(kept.root)])
    assert again.exit_code == 2 and Store.open(kept.root).read.coups().height == 0


def _refused_with_map(tmp_path: Path, text: str, column: str) -> tuple[Path, str]:
    """The file written from ``text``, and why its ingest with ``--map outcome=column`` is
    refused."""
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        ingest([path], Store.create(tmp_path / "store"), ReadOptions(mapping={
            "outcome": column}), get_rules("standard-8"))
    return path, str(caught.value)


def test_a_repeated_mapped_header_is_refused_too(tmp_path: Path) -> None:
    path, why = _refused_with_map(tmp_path, "Table,Shoe,Coup,Actual,Actual\nT1,S1,1,B,P\n",
                                  "Actual")
    assert why == (f"{path}: columns 4 and 5 of the header are both 'Actual'; "
                   "nothing was stored: rename or remove one")


def test_blank_header_cells_are_named_by_their_position(tmp_path: Path) -> None:
    path = _write(tmp_path, "Table,,Shoe,Coup,Result,,\nT1,x,S1,1,B,9h Kd,5s 2c\n")
    store = Store.create(tmp_path / "store")
    report = ingest([path], store, ReadOptions(), get_rules("standard-8")).report["files"][0]
    assert report["ignored_columns"] == ["column 2 (no name)", "column 6 (no name)",
                                         "column 7 (no name)"]
    assert report["suggestions"] == [] and report["warnings"] == []
    assert report["columns"] == {"table_id": "Table", "shoe_id": "Shoe", "coup": "Coup",
                                 "outcome": "Result"}
    coup = store.read.coups(Selection("T1")).row(0, named=True)
    assert (coup["shoe_id"], coup["coup"], coup["outcome"], coup["player_cards"]) == (
        "S1", 1, "B", None)
    result = CliRunner().invoke(main, ["ingest", str(path), "--store",
                                       str(tmp_path / "other")])
    assert result.exit_code == 0, result.output
    assert ("    columns not read: column 2 (no name), column 6 (no name), column 7 (no "
            "name)\n") in result.output
    assert "_duplicated_" not in result.output


def test_a_map_cannot_name_a_blank_column_by_polars_name(tmp_path: Path) -> None:
    path, why = _refused_with_map(tmp_path, "Table,Shoe,Coup,,\nT1,S1,1,B,P\n",
                                  "_duplicated_0")
    assert why == (f"{path}: --map names column(s) not in the file: "
                   "'_duplicated_0' (its columns: Table, Shoe, Coup, column 4 "
                   "(no name), column 5 (no name))")
