"""A CSV polars cannot read (a stray quote inside an unquoted field, as in a pasted
``=HYPERLINK("…","…")``; a quote never closed) is refused in one line naming the file and
the line where its quoting breaks, not in polars' fifteen lines of advice on its own
parameters nor at polars' byte offset (which named byte 8 for a quote opened on line 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main


@pytest.mark.parametrize(("body", "near"), [
    ('=HYPERLINK("http://evil/x","click"),S1,1,B\n',
     "line 2: cannot be read as CSV: a quote inside a field that does not start with one"),
    ('T5,X1,1,B\nT5,"X1,2,P\nT5,X1,3,B\n',
     "line 3: cannot be read as CSV: a quoted field opens on this line and is never closed"),
    ('T5,X1,1,B\n"T5"x,X1,2,P\n',
     "line 3: cannot be read as CSV: text follows a closing quote in the same field"),
])
def test_a_malformed_csv_is_refused_in_one_line(tmp_path: Path, body: str, near: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("table,shoe,coup,result\n" + body)
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("roads: error")]
    assert len(errors) == 1
    assert f"bad.csv {near} (nothing was stored" in errors[0]
    assert not (tmp_path / "s").exists() or not list((tmp_path / "s").glob("coups/*/*"))
    assert len(result.output.strip().splitlines()) == 1 + sum(
        "compiling kernels" in line for line in result.output.splitlines())
    assert "infer_schema_length" not in result.output and "Traceback" not in result.output


def test_the_quote_scanner_agrees_with_pythons_csv_on_well_formed_files(tmp_path: Path) -> None:
    """An independent reader (the standard library's csv) writes and reads back fields full
    of separators, quotes and line breaks: the scanner finds no problem in what it wrote."""
    import csv

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from roads.ingest.readers import quote_problem

    text = st.text(alphabet='ab,"\n; 1', max_size=8)

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.lists(text, min_size=2, max_size=2), min_size=1, max_size=6))
    def check(rows: list[list[str]]) -> None:
        path = tmp_path / "good.csv"
        with path.open("w", newline="") as fh:
            csv.writer(fh, lineterminator="\n").writerows([["a", "b"], *rows])
        assert quote_problem(path) is None
        with path.open(newline="") as fh:
            assert list(csv.reader(fh))[1:] == rows

    check()
