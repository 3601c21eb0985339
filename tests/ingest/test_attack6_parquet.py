"""Parquet from other tools: the forms a CSV holds are read as the CSV path reads the same
text (hands as text or lists of point values, ``dealt_at`` as ISO-8601 text or a Date, a
Datetime in another time zone converted to UTC); a column of another type stops the file
in one line naming it, its type and the types read, exit 2, nothing stored. Before, text
or integer card columns and a text or Date ``dealt_at`` gave InvalidOperationError or
ComputeError tracebacks, and a Datetime in Europe/Paris was stored as if its wall-clock
time were UTC."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.store import Store

IDS = {"table_id": ["T1", "T1"], "shoe_id": ["S1", "S1"], "coup": [1, 2],
       "outcome": ["B", "P"]}
COLUMNS = ["table_id", "shoe_id", "coup", "outcome", "player_cards", "banker_cards",
           "player_total", "banker_total", "natural", "player_pair", "banker_pair", "dealt_at"]


def ingest(tmp_path: Path, path: Path, name: str) -> tuple[int, str, pl.DataFrame]:
    store = tmp_path / name
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(store)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    parts = list((store / "coups").rglob("*.parquet")) if store.exists() else []
    coups = Store.open(store).read.coups().select(COLUMNS) if parts else pl.DataFrame()
    return result.exit_code, result.output, coups


@pytest.mark.parametrize(("columns", "csv"), [
    ({"player_cards": ["2s 8h", "9h Kd"], "banker_cards": ["3s 6c", "5s 2c"]},
     'player_cards,banker_cards\n"2s 8h","3s 6c"\n"9h Kd","5s 2c"'),
    ({"player_cards": pl.Series([["2s", "8h"], ["9h", "Kd"]], dtype=pl.Array(pl.String, 2)),
      "banker_cards": pl.Series([["3s", "6c"], ["5s", "2c"]], dtype=pl.Array(pl.String, 2))},
     'player_cards,banker_cards\n"2s 8h","3s 6c"\n"9h Kd","5s 2c"'),
    ({"player_cards": [[2, 8], [9, 0]], "banker_cards": [[3, 6], [5, 2]]},
     'player_cards,banker_cards\n"2,8","3,6"\n"9,0","5,2"'),
    ({"dealt_at": ["2026-03-01T20:00:00+02:00", "2026-03-01T20:00:40+02:00"]},
     "dealt_at\n2026-03-01T20:00:00+02:00\n2026-03-01T20:00:40+02:00"),
    ({"dealt_at": [date(2026, 3, 1), date(2026, 3, 2)]}, "dealt_at\n2026-03-01\n2026-03-02"),
    ({"dealt_at": pl.Series([datetime(2026, 3, 1, 20), datetime(2026, 3, 1, 20, 1)])
      .dt.replace_time_zone("Europe/Paris")},
     "dealt_at\n2026-03-01T20:00:00+01:00\n2026-03-01T20:01:00+01:00"),
], ids=["text-cards", "array-cards", "point-values", "text-time", "date", "paris"])
def test_a_parquet_column_in_a_csvs_form_is_read_as_the_csv_is(
        tmp_path: Path, columns: dict[str, Any], csv: str) -> None:
    parquet = tmp_path / "other.parquet"
    pl.DataFrame({**IDS, **columns}).write_parquet(parquet)
    header, *rows = csv.split("\n")
    text = tmp_path / "same.csv"
    text.write_text(f"table_id,shoe_id,coup,outcome,{header}\n" + "".join(
        f"T1,S1,{i},{o},{row}\n" for i, o, row in zip((1, 2), "BP", rows, strict=True)))
    code, output, coups = ingest(tmp_path, parquet, "p")
    expected_code, _, expected = ingest(tmp_path, text, "c")
    assert (code, coups.height) == (expected_code, 2), output
    assert coups.equals(expected)
    assert "error" not in output


def test_a_datetime_in_another_zone_is_stored_in_utc(tmp_path: Path) -> None:
    parquet = tmp_path / "paris.parquet"
    pl.DataFrame({**IDS, "dealt_at": pl.Series([datetime(2026, 3, 1, 20)] * 2)
                  .dt.replace_time_zone("Europe/Paris")}).write_parquet(parquet)
    code, _, coups = ingest(tmp_path, parquet, "s")
    assert code == 0
    assert coups["dealt_at"].dt.hour().to_list() == [19, 19]  # (UTC+1 in March)


@pytest.mark.parametrize(("columns", "words"), [
    ({"player_cards": [28, 94], "banker_cards": [36, 52]},
     "column player_cards is Int64; expected a list of cards (List(String), as exported) "
     "or text such as '2s 8h'"),
    ({"dealt_at": [1_772_395_200, 1_772_395_240]},
     "column dealt_at is Int64; expected Datetime, Date or ISO-8601 text"),
    ({"outcome": [["B"], ["P"]]},
     "column outcome is List(String); expected text, a number or a boolean"),
], ids=["integer-cards", "integer-time", "list-outcome"])
def test_a_parquet_column_of_another_type_stops_the_file_in_one_line(
        tmp_path: Path, columns: dict[str, Any], words: str) -> None:
    parquet = tmp_path / "odd.parquet"
    pl.DataFrame({**IDS, **columns}).write_parquet(parquet)
    code, output, coups = ingest(tmp_path, parquet, "s")
    assert code == 2 and coups.is_empty()
    assert output.strip() == f"roads: error: {parquet}: {words} (nothing was stored)"
