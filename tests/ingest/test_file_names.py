"""A file's name is a name, never a pattern: ``shoe[1].csv`` is read like ``shoe.csv``.

Polars expands a path given to its readers as a glob unless told not to, so a name with
``[``, ``*`` or ``?`` was refused ("expanded paths were empty ... glob: true") or, worse,
could read another file that matched. Every format and every front end is read here under
such names: the plain CSV path, the general CSV path (a quoted field), the general path in
batches (a file larger than a chunk), shoe lines, journal events and Parquet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.ingest import chunks
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Selection, Store

NAMES = ["shoe[1]", "shoe[ab]", "shoe*", "shoe?", "[x]"]
HEADER = "Table,Shoe,Coup,Result,Player Cards,Banker Cards\n"
PLAIN = HEADER + "T1,S1,1,B,2s 8h,3s 6c\nT1,S1,2,P,9h Kd,5s 2c\n"
QUOTED = HEADER + 'T1,S1,1,B,"2s 8h","3s 6c"\nT1,S1,2,P,9h Kd,5s 2c\n'
EXPECTED = [("S1", 1, "B", ["2s", "8h"], ["3s", "6c"]), ("S1", 2, "P", ["9h", "Kd"],
                                                          ["5s", "2c"])]


def _stored(store: Store, table: str = "T1") -> list[tuple[object, ...]]:
    coups = store.read.coups(Selection(table)).sort("shoe_id", "coup")
    return [(r["shoe_id"], r["coup"], r["outcome"], r["player_cards"], r["banker_cards"])
            for r in coups.iter_rows(named=True)]


def _ingest(tmp_path: Path, path: Path, table_id: str | None = None, shoe_id: str | None = None
            ) -> tuple[Store, dict[str, Any]]:
    store = Store.create(tmp_path / "store")
    options = ReadOptions(table_id=table_id, shoe_id=shoe_id)
    result = ingest([path], store, options, get_rules("standard-8"))
    return store, result.report["files"][0]


@pytest.mark.parametrize("stem", NAMES)
@pytest.mark.parametrize(("text", "parser"), [(PLAIN, "plain CSV"),
                                              (QUOTED, "general (a quoted field)")])
def test_a_csv_file_named_like_a_pattern_is_read(tmp_path: Path, stem: str, text: str,
                                                 parser: str) -> None:
    path = tmp_path / f"{stem}.csv"
    path.write_text(text)
    (tmp_path / "shoe1.csv").write_text(HEADER + "T9,S9,1,T,2s 2h,3s 3c\n")  # a glob's match
    store, report = _ingest(tmp_path, path)
    assert (report["parser"], report["accepted"], report["quarantined"]) == (parser, 2, 0)
    assert report["columns"] == {"table_id": "Table", "shoe_id": "Shoe", "coup": "Coup",
                                 "outcome": "Result", "player_cards": "Player Cards",
                                 "banker_cards": "Banker Cards"}
    assert _stored(store) == EXPECTED and store.read.coups().height == 2


def test_a_csv_file_named_like_a_pattern_is_read_in_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64)
    path = tmp_path / "shoe[1].csv"
    path.write_text(QUOTED)
    store, report = _ingest(tmp_path, path)
    assert (report["accepted"], report["quarantined"]) == (2, 0)
    assert _stored(store) == EXPECTED


def test_shoe_lines_and_events_named_like_a_pattern_are_read(tmp_path: Path) -> None:
    lines = tmp_path / "shoe[1].txt"
    lines.write_text("BPPT\n")
    store, report = _ingest(tmp_path, lines, table_id="T1", shoe_id="S1")
    assert report["format"] == "shoe-lines"
    assert [(r[0], r[1], r[2]) for r in _stored(store)] == [
        ("S1", 1, "B"), ("S1", 2, "P"), ("S1", 3, "P"), ("S1", 4, "T")]
    events = tmp_path / "events[1].jsonl"
    events.write_text(json.dumps({"kind": "coup_entered", "table_id": "T2", "shoe_id": "S1",
                                  "payload": {"coup": 1, "outcome": "B"}}) + "\n")
    other = Store.create(tmp_path / "other")
    ingest([events], other, ReadOptions(), get_rules("standard-8"))
    assert [(r[0], r[1], r[2]) for r in _stored(other, "T2")] == [("S1", 1, "B")]


def test_parquet_named_like_a_pattern_is_read(tmp_path: Path) -> None:
    path = tmp_path / "coups[1].parquet"
    pl.DataFrame({"table_id": ["T1", "T1"], "shoe_id": ["S1", "S1"], "coup": [1, 2],
                  "outcome": ["B", "P"], "dealer": ["ana", "ana"]}).write_parquet(path)
    store, report = _ingest(tmp_path, path)
    assert report["accepted"] == 2 and report["ignored_columns"] == ["dealer"]
    assert [(r[0], r[1], r[2]) for r in _stored(store)] == [("S1", 1, "B"), ("S1", 2, "P")]


def test_the_command_ingests_a_file_named_like_a_pattern(tmp_path: Path) -> None:
    path = tmp_path / "shoe[1].csv"
    path.write_text(PLAIN)
    store = tmp_path / "store"
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert f"{path} (csv; reader: plain CSV): 2 rows read, 2 stored" in result.output
    assert _stored(Store.open(store)) == EXPECTED
