"""The quote scanner names the line where quoting breaks even when the file opens with a
UTF-8 byte-order mark before a quoted header (which the readers accept: before, the mark
was taken for text before the header's first quote, and line 1 was blamed for a fault
further down), and crosses runs of doubled quotes by their parity."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.ingest.readers import quote_problem

HEADER = '"table","shoe","coup","result"\n'


def test_a_byte_order_mark_before_a_quoted_header_is_not_a_fault(tmp_path: Path) -> None:
    path = tmp_path / "marked.csv"
    path.write_bytes(codecs.BOM_UTF8 + (HEADER + 'T5,X1,1,B\nT5,"X1,2,P\nT5,X1,3,B\n').encode())
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "marked.csv line 3: cannot be read as CSV: a quoted field opens on this line " \
           "and is never closed" in result.output
    path.write_bytes(codecs.BOM_UTF8 + (HEADER + 'T5,X1,1,B\n').encode())
    assert quote_problem(path) is None


@pytest.mark.parametrize(("inside", "want"), [
    ('""' * 5000, (2, "a quoted field opens on this line and is never closed")),
    ('""' * 5000 + '"x', (2, "text follows a closing quote in the same field")),
    ('""' * 5000 + '",P', None),
    ('a""\n' * 50 + '",P', None),
    ('a""\n' * 50, (2, "a quoted field opens on this line and is never closed")),
    ('a""\n' * 50 + '"x,P', (52, "text follows a closing quote in the same field")),
])
def test_doubled_quotes_are_crossed_by_parity(tmp_path: Path, inside: str,
                                             want: tuple[int, str] | None) -> None:
    path = tmp_path / "runs.csv"
    path.write_text('table,shoe,coup,result\nT1,S1,"' + inside + "\nT1,S1,3,B\n")
    assert quote_problem(path) == want
