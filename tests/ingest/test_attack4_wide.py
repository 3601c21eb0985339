"""A CSV whose header names more columns than any export has (or never ends) is refused
before it is read: one line naming the file, exit 2, nothing stored (a million-column
header held `roads ingest` for hours: a minute in polars, then a hint a column)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main
from roads.errors import InputError
from roads.ingest.readers import MAX_COLUMNS, ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store


def _wide(path: Path, columns: int) -> Path:
    names = [f"extra{i}" for i in range(columns - 4)] + ["table", "shoe", "coup", "result"]
    path.write_text(",".join(names) + "\n" + "," * (columns - 4) + "T5,W1,1,B\n")
    return path


def test_a_header_wider_than_the_limit_is_refused_naming_the_file(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    path = _wide(tmp_path / "wide.csv", MAX_COLUMNS + 500)
    with pytest.raises(InputError, match=r"wide\.csv: its header names 1,500 columns"):
        ingest([path], store, ReadOptions(), get_rules("standard-8"))
    assert store.read.coups().height == 0


def test_a_header_line_without_an_end_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "endless.csv"
    path.write_bytes(b"table;shoe;" + b"x" * (2 << 20))
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "endless.csv: its header line is longer than 1,048,576 bytes" in result.output
    assert "Traceback" not in result.output


def test_a_header_at_the_limit_is_read(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    path = _wide(tmp_path / "wide.csv", 60)
    ingest([path], store, ReadOptions(), get_rules("standard-8"))
    assert store.read.coups().height == 1


@pytest.mark.parametrize(("content", "words"), [
    ("table,shoe,coup,result\nT1,S1,1,B\n".encode("utf-16"), "UTF-16 or binary"),
    (b"table,shoe,coup,result\rT1,S1,1,B\rT1,S1,2,P\r", "CR alone"),
])
def test_a_file_polars_would_misread_is_refused_in_words(tmp_path: Path, content: bytes,
                                                         words: str) -> None:
    """A UTF-16 export (its header echoed NUL bytes) or a CR-only file ("no outcome or
    card columns") is named for what it is, in one printable line, and nothing is made."""
    path = tmp_path / "export.csv"
    path.write_bytes(content)
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert words in line and str(path) in line and line.isprintable()
    assert not (tmp_path / "s" / "coups").exists()


def test_an_error_line_escapes_control_characters(capsys: pytest.CaptureFixture[str]
                                                  ) -> None:
    from roads.cli import _fail

    with pytest.raises(SystemExit) as stop:
        _fail("bad\x00name\x1b[31m, café 百家乐")
    assert stop.value.code == 2
    assert capsys.readouterr().err == "roads: error: bad\\x00name\\x1b[31m, café 百家乐\n"
