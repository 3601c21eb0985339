"""A timestamp outside the years 1900-2200 once in UTC quarantines its row, naming the field
and the year, and the file's other rows are stored (before, a time past year 9999 in UTC,
``9999-12-31T23:59:59-12:00``, aborted the whole ingest with "year 10000 is out of range",
and a time in 1850 was stored as dealt then)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.store import Store

HEADER = "Table,Shoe,Hand No,Result,Player Cards,Banker Cards,Time\n"


@pytest.mark.parametrize(("bad", "good", "year"), [
    ("9999-12-31T23:59:59-12:00", "2026-03-01T20:00:00-12:00", 10000),
    ("0001-01-01T00:00:00+01:00", "2026-03-01T20:00:00+01:00", 0),
    ("+12345-01-01T00:00:00Z", "2026-03-01T20:00:00Z", 12345),
    ("1899-12-31T23:59:59Z", "2026-03-01T20:00:00Z", 1899),
    ("2201-01-01 00:00:00", "2026-03-01 20:00:00", 2201),
])
@pytest.mark.parametrize("quoted", [False, True], ids=["plain", "general"])
def test_a_time_outside_1900_2200_quarantines_its_row(tmp_path: Path, bad: str, good: str,
                                                      year: int, quoted: bool) -> None:
    table = '"X1"' if quoted else "X1"  # (a quote sends the file to the general front end)
    path = tmp_path / "times.csv"
    path.write_text(HEADER + f"{table},S1,1,B,2s 8h,3s 6c,{bad}\n"
                    f"{table},S1,2,P,9h Kd,5s 2c,{good}\n")
    store = tmp_path / "s"
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(store), "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    [entry] = report["files"]
    fast = not quoted and not bad.startswith("+")  # (a signed year is not the fast subset)
    assert entry["parser"].startswith("plain" if fast else "general")
    reason = f"dealt_at is in the year {year} (UTC), outside the years 1900-2200"
    assert (entry["accepted"], entry["quarantined"]) == (1, 1)
    assert entry["quarantined_by_reason"] == {reason: 1}
    [row] = [json.loads(line) for f in (store / "quarantine").glob("*.jsonl")
             for line in f.read_text().splitlines()]
    assert (row["row"], row["field"], row["reason"]) == (1, "dealt_at", reason)
    assert json.loads(row["raw"])["Time"] == bad
    coups = Store.open(store).read.coups()
    assert coups["coup"].to_list() == [2] and coups["outcome"].to_list() == ["P"]
    written = datetime.fromisoformat(good.replace(" ", "T"))
    expected = written if written.tzinfo else written.replace(tzinfo=UTC)
    assert coups["dealt_at"].to_list() == [expected]


def test_the_first_and_last_allowed_years_are_stored(tmp_path: Path) -> None:
    path = tmp_path / "edges.csv"
    path.write_text(HEADER + "X1,S1,1,B,2s 8h,3s 6c,1900-01-01T00:00:00Z\n"
                    "X1,S1,2,P,9h Kd,5s 2c,2200-12-31T23:59:59Z\n")
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    times = Store.open(tmp_path / "s").read.coups()["dealt_at"].to_list()
    assert times == [datetime(1900, 1, 1, tzinfo=UTC),
                     datetime(2200, 12, 31, 23, 59, 59, tzinfo=UTC)]
