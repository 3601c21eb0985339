"""``--map FIELD=COLUMN`` comes first: the column it names is the field's column.

Before, a header that was a synonym of the field won over the ``--map`` when it came first
in the file (``Result`` before ``Actual`` with ``--map outcome=Actual`` stored the Result
column), and the mapped column was reported as not read. A field mapped twice, or one
column mapped to two fields, was a silent pick; now each is a usage error naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.errors import InputError
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Selection, Store

PLAIN = "Table,Shoe,Coup,Result,Actual\nT1,S1,1,P,B\nT1,S1,2,B,T\n"
QUOTED = 'Table,Shoe,Coup,Result,Actual\nT1,S1,1,"P",B\nT1,S1,2,B,T\n'


def _ingest(tmp_path: Path, text: str, mapping: dict[str, str]
            ) -> tuple[Store, dict[str, Any]]:
    path = tmp_path / "map.csv"
    path.write_text(text)
    store = Store.create(tmp_path / "store")
    result = ingest([path], store, ReadOptions(mapping=mapping), get_rules("standard-8"))
    return store, result.report["files"][0]


def _outcomes(store: Store) -> list[tuple[str, int, str]]:
    coups = store.read.coups(Selection("T1")).sort("coup")
    return [(r["shoe_id"], r["coup"], r["outcome"]) for r in coups.iter_rows(named=True)]


@pytest.mark.parametrize(("text", "parser"), [(PLAIN, "plain CSV"),
                                              (QUOTED, "general (a quoted field)")])
def test_a_mapped_column_wins_over_a_synonym_column_before_it(tmp_path: Path, text: str,
                                                              parser: str) -> None:
    store, report = _ingest(tmp_path, text, {"outcome": "Actual"})
    assert report["parser"] == parser
    assert _outcomes(store) == [("S1", 1, "B"), ("S1", 2, "T")]
    assert report["columns"] == {"table_id": "Table", "shoe_id": "Shoe", "coup": "Coup",
                                 "outcome": "Actual"}
    assert report["ignored_columns"] == ["Result"]
    assert report["suggestions"] == ["'Result' also names outcome, which is read from "
                                     "'Actual'; use --map outcome=Result to read it instead"]


def test_a_mapped_card_column_wins_and_the_other_fields_keep_their_synonyms(
        tmp_path: Path) -> None:
    text = ("Player Cards,Table,Shoe,Coup,PHand,Banker Cards\n"
            "2s 2h,T1,S1,1,9h Kd,5s 2c\n")
    store, report = _ingest(tmp_path, text, {"player_cards": "PHand"})
    coup = store.read.coups(Selection("T1")).row(0, named=True)
    assert (coup["player_cards"], coup["banker_cards"], coup["outcome"]) == (
        ["9h", "Kd"], ["5s", "2c"], "P")
    assert report["columns"] == {"table_id": "Table", "shoe_id": "Shoe", "coup": "Coup",
                                 "player_cards": "PHand", "banker_cards": "Banker Cards"}
    assert report["ignored_columns"] == ["Player Cards"]


def test_a_mapped_column_the_file_lacks_names_the_column_and_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        _ingest(tmp_path, PLAIN, {"outcome": "Nope"})
    assert str(caught.value) == (f"{tmp_path / 'map.csv'}: --map names column(s) not in the "
                                 "file: 'Nope' (its columns: Table, Shoe, Coup, Result, "
                                 "Actual)")


@pytest.mark.parametrize(("options", "message"), [
    (["outcome=Actual", "outcome=Result"],
     "roads: error: --map gives outcome twice ('Actual' and 'Result'); give one column for "
     "each field\n"),
    (["outcome=Actual", "natural=Actual"],
     "roads: error: --map gives column 'Actual' to both outcome and natural; a column is "
     "read for one field\n"),
    (["outcome="],
     "roads: error: --map 'outcome=': use FIELD=COLUMN with FIELD one of table_id, shoe_id, "
     "coup, outcome, player_cards, banker_cards, player_total, banker_total, natural, "
     "player_pair, banker_pair, dealt_at and COLUMN a header of the file\n"),
])
def test_a_field_or_a_column_mapped_twice_is_a_usage_error(tmp_path: Path, options: list[str],
                                                          message: str) -> None:
    path = tmp_path / "map.csv"
    path.write_text(PLAIN)
    store = tmp_path / "store"
    args = ["ingest", str(path), "--store", str(store)]
    for option in options:
        args += ["--map", option]
    result = CliRunner().invoke(main, args)
    assert (result.exit_code, result.output) == (2, message)
    assert not store.exists()


def test_the_command_stores_the_mapped_column_and_lists_the_synonym_as_not_read(
        tmp_path: Path) -> None:
    path = tmp_path / "map.csv"
    path.write_text(PLAIN)
    store = tmp_path / "store"
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(store), "--map",
                                       "outcome=Actual"])
    assert result.exit_code == 0, result.output
    assert "    columns not read: Result\n" in result.output
    assert "did you mean natural" not in result.output
    assert _outcomes(Store.open(store)) == [("S1", 1, "B"), ("S1", 2, "T")]
    missing = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "o"),
                                        "--map", "outcome=Nope"])
    assert missing.exit_code == 2 and missing.output == (
        f"roads: error: {path}: --map names column(s) not in the file: 'Nope' (its columns: "
        "Table, Shoe, Coup, Result, Actual)\n")
