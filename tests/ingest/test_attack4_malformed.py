"""A CSV polars cannot read (a stray quote inside an unquoted field, as in a pasted
``=HYPERLINK("…","…")``; a quote never closed) is refused in one line naming the file and
where, not in polars' fifteen lines of advice on its own parameters."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main


@pytest.mark.parametrize(("body", "near"), [
    ('=HYPERLINK("http://evil/x","click"),S1,1,B\n', "near byte 27"),
    ('T5,X1,1,B\nT5,"X1,2,P\n', "near byte"),
])
def test_a_malformed_csv_is_refused_in_one_line(tmp_path: Path, body: str, near: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("table,shoe,coup,result\n" + body)
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("roads: error")]
    assert len(errors) == 1
    assert f"bad.csv: cannot be read as CSV ({near}" in errors[0]
    assert "not properly escaped" in errors[0]
    assert len(result.output.strip().splitlines()) == 1 + sum(
        "compiling kernels" in line for line in result.output.splitlines())
    assert "infer_schema_length" not in result.output and "Traceback" not in result.output
